import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { sql, type Sql } from '../../db/sql';
import type { Role } from '../../auth/roles';

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
  'must_change_password',
  'created_at',
  'updated_at',
] as const;

/*
 * The users module's fragments for another module's statement that reads a user in the same
 * round trip (the session's or the token's user, who processed a sale): `alias` is the caller's name for users.
 */

/** A UserRow's columns of `alias`. */
export const userRowColumns = (alias: string): Sql =>
  sql.join(USER_ROW_COLUMNS.map((column) => sql.ident(alias, column)));

/** users as `alias`, joined to the user `userId` names: `JOIN ${userById('u', ...)}`. */
export const userById = (alias: string, userId: Sql): Sql =>
  sql`users ${sql.ident(alias)} ON ${sql.ident(alias, 'id')} = ${userId}`;

/** The user `alias` may act: inactive users are refused everywhere. */
export const userIsActive = (alias: string): Sql => sql.ident(alias, 'is_active');

/** The first and last name of the user `alias`. */
export const userNameColumns = (alias: string): Sql =>
  sql.join([sql.ident(alias, 'first_name'), sql.ident(alias, 'last_name')]);

/** The columns of a UserRef (users.present.ts): who made a row, as a list names them. */
const USER_REF_COLUMNS = ['email', 'first_name', 'last_name'] as const;

/** The UserRef columns of the user `alias`, named `<prefix>email`, `<prefix>first_name`, `<prefix>last_name`. */
export const userRefColumns = (alias: string, prefix: string): Sql =>
  sql.join(USER_REF_COLUMNS.map((column) => sql`${sql.ident(alias, column)} AS ${sql.ident(prefix + column)}`));

/** How many users are active. */
/** The domains of the active users' email addresses, lower case. */
export async function activeEmailDomains(db: Db): Promise<string[]> {
  const rows = await db('users')
    .where({ is_active: true })
    .distinct(db.raw(`lower(split_part(email, '@', 2)) AS domain`));
  return (rows as { domain: string }[]).map((r) => r.domain).filter(Boolean);
}

export async function countActiveUsers(db: Db): Promise<number> {
  const [{ count }] = await db('users').where({ is_active: true }).count<{ count: number }[]>('* as count');
  return Number(count);
}

/** The names of the users `ids` (those that exist). */
export function userNames(db: Db, ids: string[]): Promise<{ id: string; first_name: string; last_name: string }[]> {
  return db('users').whereIn('id', ids).select('id', 'first_name', 'last_name');
}

/**
 * The users module's join for a list that names who made each row (a UserRef, users.present.ts):
 * left-joins users as `alias` on the caller's `userIdColumn` and selects the user's email and
 * names as `<prefix>email`, `<prefix>first_name`, `<prefix>last_name` (and `<prefix>id` with `withId`).
 */
export function joinUserRef<Q extends Knex.QueryBuilder>(
  query: Q,
  {
    alias,
    userIdColumn,
    prefix,
    withId = false,
  }: { alias: string; userIdColumn: string; prefix: string; withId?: boolean },
): Q {
  const columns = [...(withId ? ['id'] : []), ...USER_REF_COLUMNS];
  return query
    .leftJoin(`users as ${alias}`, `${alias}.id`, userIdColumn)
    .select(columns.map((column) => `${alias}.${column} as ${prefix}${column}`)) as Q;
}

/** Whom an email goes to: an active user's address, role and name. */
export type UserContact = { id: string; email: string; role: Role; firstName: string; lastName: string };

const contactColumns = ['id', 'email', 'role', 'first_name as firstName', 'last_name as lastName'];

/** The active users of these roles (the emails that go to managers or admins), by email. */
export function activeUsersWithRoles(db: Db, roles: readonly Role[]): Promise<UserContact[]> {
  return db('users')
    .where({ is_active: true })
    .whereIn('role', roles as Role[])
    .orderBy('email')
    .select(contactColumns);
}

/** The active users among these ids or these addresses (matched without regard to case). */
export function activeUserContacts(db: Db, by: { ids?: string[]; emails?: string[] }): Promise<UserContact[]> {
  return db('users')
    .where({ is_active: true })
    .andWhere((q) => {
      q.whereIn('id', by.ids ?? []).orWhereRaw('lower(email) = ANY(?::text[])', [
        (by.emails ?? []).map((e) => e.toLowerCase()),
      ]);
    })
    .orderBy('email')
    .select(contactColumns);
}
