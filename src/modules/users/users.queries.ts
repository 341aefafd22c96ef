import { sql, type Sql } from '../../db/sql';

/** The columns of a UserRow, named: a column a later migration adds does not change what a prepared read returns. */
const USER_ROW_COLUMNS = [
  'id',
  'email',
  'first_name',
  'last_name',
  'role',
  'is_active',
  'show_picking_list',
  'password_hash',
  'oidc_subject',
  'created_at',
  'updated_at',
] as const;

/*
 * The users module's fragments for another module's statement that reads a user in the same
 * round trip (the session's user, the token's user): `alias` is the caller's name for users.
 */

/** A UserRow's columns of `alias`. */
export const userRowColumns = (alias: string): Sql =>
  sql.join(USER_ROW_COLUMNS.map((column) => sql.ident(alias, column)));

/** users as `alias`, joined to the user `userId` names: `JOIN ${userById('u', ...)}`. */
export const userById = (alias: string, userId: Sql): Sql =>
  sql`users ${sql.ident(alias)} ON ${sql.ident(alias, 'id')} = ${userId}`;

/** The user `alias` may act: inactive users are refused everywhere. */
export const userIsActive = (alias: string): Sql => sql.ident(alias, 'is_active');
