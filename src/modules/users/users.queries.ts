import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { sql, type Sql } from '../../db/sql';
import type { Role } from '../../auth/roles';
import type { ReferenceCounters } from '../../db/references';

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
 * The users module's read models for another module's statement that reads a user in the same
 * round trip (the session's or the token's user, who made a row). The users module names the
 * join's alias and the columns it gives, so a caller never names a column of users: it names the
 * user (`userId`, an expression of its own row) and reads the columns these fragments select.
 */

/** The alias of the user a UserRow join reads: the users module's own name, never the caller's. */
const USER_ROW = 'user_row';

/** The columns of a UserRow, of the user joined by leftJoinUserRow or joinActiveUserRow. */
export const userRowSelect: Sql = sql.join(USER_ROW_COLUMNS.map((column) => sql.ident(USER_ROW, column)));

/** Left-joins the user `userId` names (nulls when none), for userRowSelect. */
export const leftJoinUserRow = (userId: Sql): Sql =>
  sql`LEFT JOIN users ${sql.ident(USER_ROW)} ON ${sql.ident(USER_ROW, 'id')} = ${userId}`;

/** Joins the user `userId` names when that user is active (inactive users are refused everywhere), for userRowSelect. */
export const joinActiveUserRow = (userId: Sql): Sql =>
  sql`JOIN users ${sql.ident(USER_ROW)} ON ${sql.ident(USER_ROW, 'id')} = ${userId} AND ${sql.ident(USER_ROW, 'is_active')}`;

/** The columns of a UserRef (users.present.ts): who made a row, as a list names them. */
const USER_REF_COLUMNS = ['email', 'first_name', 'last_name'] as const;

/**
 * Left-joins the user `userId` names as a UserRef whose columns are `<prefix>email`,
 * `<prefix>first_name` and `<prefix>last_name` (nulls when none), readable unqualified anywhere in
 * the statement: userRefSelect(prefix) selects them.
 */
export const leftJoinUserRef = (prefix: string, userId: Sql): Sql => {
  const ref = `${prefix}user_ref`;
  const columns = USER_REF_COLUMNS.map((column) => sql`${sql.ident(column)} AS ${sql.ident(prefix + column)}`);
  return sql`LEFT JOIN (SELECT id AS ${sql.ident(`${ref}_id`)}, ${sql.join(columns)} FROM users) ${sql.ident(ref)}
    ON ${sql.ident(ref, `${ref}_id`)} = ${userId}`;
};

/** The UserRef columns of leftJoinUserRef(prefix): `<prefix>email`, `<prefix>first_name`, `<prefix>last_name`. */
export const userRefSelect = (prefix: string): Sql =>
  sql.join(USER_REF_COLUMNS.map((column) => sql.ident(prefix + column)));

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
 * leftJoinUserRef for a knex query: left-joins the user the caller's `userIdColumn` names and
 * selects the UserRef as `<prefix>email`, `<prefix>first_name`, `<prefix>last_name` (and
 * `<prefix>id` with `withId`).
 */
export function withUserRef<Q extends Knex.QueryBuilder>(
  query: Q,
  { userIdColumn, prefix, withId = false }: { userIdColumn: string; prefix: string; withId?: boolean },
): Q {
  const alias = `${prefix}user_ref`;
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

/** The rows of user permissions that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const usersReferences: ReferenceCounters = {
  users: [
    {
      table: 'user_permissions',
      column: 'granted_by',
      count: (id) => sql`SELECT count(*) FROM user_permissions WHERE granted_by = ${id}`,
    },
    {
      table: 'user_permissions',
      column: 'user_id',
      count: (id) => sql`SELECT count(*) FROM user_permissions WHERE user_id = ${id}`,
    },
  ],
};
