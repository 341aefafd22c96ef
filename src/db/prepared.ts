import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from './knex';

/**
 * A hot statement as a named prepared statement (the name derives from the SQL text), so each
 * pooled connection parses and plans it once instead of on every request.
 */
export function preparedRaw<T>(db: Db, sql: string, bindings: readonly Knex.RawBinding[] = []) {
  const name = `stmt_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
  return db.raw<T>(sql, bindings).options({ name });
}
