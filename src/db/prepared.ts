import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from './knex';
import { isSql, toRaw, type Sql } from './sql';

/**
 * A hot statement as a named prepared statement (the name derives from the SQL text), so each
 * pooled connection parses and plans it once instead of on every request. The text must not
 * depend on the values: every value is a binding (a list travels as one array or JSON value).
 * Composed statements pass a fragment (db/sql); a plain text takes its bindings alongside.
 */
export function preparedRaw<T>(db: Db, statement: Sql): Knex.Raw<T>;
export function preparedRaw<T>(db: Db, text: string, bindings?: readonly Knex.RawBinding[]): Knex.Raw<T>;
export function preparedRaw<T>(db: Db, statement: Sql | string, bindings: readonly Knex.RawBinding[] = []): Knex.Raw<T> {
  const raw = isSql(statement) ? toRaw<T>(db, statement) : db.raw<T>(statement, bindings);
  const text = isSql(statement) ? statement.text : statement;
  return raw.options({ name: `stmt_${createHash('sha1').update(text).digest('hex').slice(0, 24)}` });
}
