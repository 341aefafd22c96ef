import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from './knex';
import { toRaw, type Sql } from './sql';

/**
 * A hot statement as a named prepared statement (the name derives from the SQL text), so each
 * pooled connection parses and plans it once instead of on every request. The text must not
 * depend on the values: every value is a binding (a list travels as one array or JSON value).
 * Behind PgBouncer in transaction mode (DATABASE_POOL_MODE=transaction) the connection drops the
 * name (src/db/knex.ts), so the same statement runs unnamed, parsed and planned each time.
 */
export function preparedRaw<T>(db: Db, statement: Sql): Knex.Raw<T> {
  return toRaw<T>(db, statement).options({
    name: `stmt_${createHash('sha1').update(statement.text).digest('hex').slice(0, 24)}`,
  });
}
