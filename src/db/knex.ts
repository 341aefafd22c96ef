import knex, { type Knex } from 'knex';
import pg from 'pg';

/** A knex instance or a transaction: services take either so they compose. */
export type Db = Knex | Knex.Transaction;

// numeric stays a string (money and quantities are decimals); counts (int8) become numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
// A date column has no time zone; keep it as 'YYYY-MM-DD' rather than a shifted Date.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

export const CONNECTION_OPTIONS = '-c statement_timeout=30000 -c idle_in_transaction_session_timeout=60000';

/** knex's own warnings (e.g. a failed connection attempt) go to the service log, not the console. */
type LogSink = { warn: (msg: string) => void; error: (msg: string) => void; debug: (msg: string) => void };

/** The one knex configuration (pool, timeouts, logging); knexfile.ts exposes it to the knex CLI. */
export function knexConfig(databaseUrl: string, poolMax = 10, log?: LogSink): Knex.Config {
  const toText = (m: unknown) => (m instanceof Error ? m.message : typeof m === 'string' ? m : JSON.stringify(m));
  return {
    log: log
      ? {
          warn: (m: unknown) => log.warn(`knex: ${toText(m)}`),
          error: (m: unknown) => log.error(`knex: ${toText(m)}`),
          debug: (m: unknown) => log.debug(`knex: ${toText(m)}`),
          deprecate: (method: string, alternative: string) =>
            log.warn(`knex: ${method} is deprecated, use ${alternative}`),
          enableColors: false,
        }
      : undefined,
    client: 'pg',
    connection: { connectionString: databaseUrl, options: CONNECTION_OPTIONS, connectionTimeoutMillis: 3000 },
    pool: { min: 0, max: poolMax, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: 4000,
  };
}

export function createDb(databaseUrl: string, poolMax = 10, log?: LogSink): Knex {
  return knex(knexConfig(databaseUrl, poolMax, log));
}

/** A plain pg pool (used by the session store) that survives a database restart. */
export function createPgPool(databaseUrl: string, onError: (err: Error) => void, max = 5): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    options: CONNECTION_OPTIONS,
    connectionTimeoutMillis: 3000,
    max,
  });
  pool.on('error', onError);
  return pool;
}
