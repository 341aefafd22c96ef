import knex, { type Knex } from 'knex';
import pg from 'pg';

/** A knex instance or a transaction: services take either so they compose. */
export type Db = Knex | Knex.Transaction;

// numeric stays a string (money and quantities are decimals); counts (int8) become numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
// A date column has no time zone; keep it as 'YYYY-MM-DD' rather than a shifted Date.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

/** The service's own limits on a statement and on a transaction left idle (ms). */
export const DATABASE_TIMEOUTS = { statementMs: 30_000, idleInTransactionMs: 60_000 };

/**
 * How long opening a connection may take (ms), and the TCP keepalives that end a connection whose
 * server vanished without closing it (its host lost, a network cut): after 3 s of silence a probe a
 * second, and 10 unanswered ones (libuv's interval and count) fail the connection, 13 s in all, within
 * the 15 s a request may take while the primary is gone (docs/operations.md, a reference deployment).
 */
export const CONNECTION_LIVENESS = {
  connectionTimeoutMillis: 3000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 3000,
};

export const CONNECTION_OPTIONS = `-c statement_timeout=${DATABASE_TIMEOUTS.statementMs} -c idle_in_transaction_session_timeout=${DATABASE_TIMEOUTS.idleInTransactionMs}`;

/**
 * How a pool reaches PostgreSQL (issue 44):
 * - `session`: PostgreSQL itself; the timeouts travel as the startup `options`.
 * - `transaction`: PgBouncer in transaction mode, where a connection is the client's only from
 *   BEGIN to COMMIT. No startup `options` (PgBouncer refuses them); every transaction opened by
 *   `transaction()` sets its timeouts with SET LOCAL, and a statement outside one runs under the
 *   role's defaults (docs/operations.md). No statement is named: a name would live on a server
 *   connection that the next query may not get.
 * - `direct`: a session connection that may be a PgBouncer session pool (DATABASE_DIRECT_URL):
 *   no startup `options` either; the timeouts are SET once the connection opens.
 */
export type PoolMode = 'session' | 'transaction' | 'direct';

export type ConnectionMode = {
  poolMode?: PoolMode;
  /** the statement timeout, in place of DATABASE_TIMEOUTS.statementMs (a test's shorter one) */
  statementTimeoutMs?: number;
};

const TIMEOUTS_OF = Symbol('stores.databaseTimeouts');

/** A transaction-mode pool's timeouts, kept on its knex configuration, which its transactions share. */
type ModeConfig = Knex.Config & { [TIMEOUTS_OF]?: { statementMs: number; idleInTransactionMs: number } };

/**
 * The timeouts a transaction on this pool must SET LOCAL itself (a transaction-mode pool), or
 * undefined when the connection already has them (src/db/transaction.ts).
 */
export function transactionTimeouts(db: Db): { statementMs: number; idleInTransactionMs: number } | undefined {
  return (db.client as { config?: ModeConfig }).config?.[TIMEOUTS_OF];
}

/**
 * The connection drops the name of every query sent to it (a prepared statement of preparedRaw, the
 * session store's read, rate-limiter-flexible's upserts, which it names and cannot be told not to):
 * PostgreSQL then parses and plans each as an unnamed statement, which lives only as long as the query.
 */
function withoutStatementNames(client: pg.ClientBase): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
    if (config && typeof config === 'object' && 'name' in config && !('submit' in config)) {
      const { name: _dropped, ...unnamed } = config as { name?: string };
      return query(unnamed, ...rest);
    }
    return query(config, ...rest);
  };
}

const setTimeoutsSql = (statementMs: number) =>
  `SET statement_timeout = ${statementMs}; SET idle_in_transaction_session_timeout = ${DATABASE_TIMEOUTS.idleInTransactionMs}`;

/** knex's own warnings (e.g. a failed connection attempt) go to the service log, not the console. */
type LogSink = { warn: (msg: string) => void; error: (msg: string) => void; debug: (msg: string) => void };

/** The one knex configuration (pool, timeouts, logging); knexfile.ts exposes it to the knex CLI. */
export function knexConfig(
  databaseUrl: string,
  poolMax = 10,
  log?: LogSink,
  { poolMode = 'session', statementTimeoutMs = DATABASE_TIMEOUTS.statementMs }: ConnectionMode = {},
): Knex.Config {
  const toText = (m: unknown) => (m instanceof Error ? m.message : typeof m === 'string' ? m : JSON.stringify(m));
  const config: ModeConfig = {
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
    connection: {
      connectionString: databaseUrl,
      options: poolMode === 'session' ? startupOptions(statementTimeoutMs) : undefined,
      ...CONNECTION_LIVENESS,
    },
    pool: {
      min: 0,
      max: poolMax,
      idleTimeoutMillis: 30_000,
      afterCreate: (connection: pg.Client, done: (err: Error | null, connection: pg.Client) => void) => {
        if (poolMode === 'transaction') withoutStatementNames(connection);
        if (poolMode !== 'direct') return done(null, connection);
        connection.query(setTimeoutsSql(statementTimeoutMs)).then(
          () => done(null, connection),
          (err: Error) => done(err, connection),
        );
      },
    },
    acquireConnectionTimeout: 4000,
  };
  if (poolMode === 'transaction')
    config[TIMEOUTS_OF] = {
      statementMs: statementTimeoutMs,
      idleInTransactionMs: DATABASE_TIMEOUTS.idleInTransactionMs,
    };
  return config;
}

const startupOptions = (statementMs: number) =>
  statementMs === DATABASE_TIMEOUTS.statementMs
    ? CONNECTION_OPTIONS
    : `-c statement_timeout=${statementMs} -c idle_in_transaction_session_timeout=${DATABASE_TIMEOUTS.idleInTransactionMs}`;

export function createDb(databaseUrl: string, poolMax = 10, log?: LogSink, mode: ConnectionMode = {}): Knex {
  return knex(knexConfig(databaseUrl, poolMax, log, mode));
}

/**
 * A plain pg pool (used by the session store) that survives a database restart. Through PgBouncer
 * in transaction mode its statements are short single ones under the role's timeouts.
 */
export function createPgPool(
  databaseUrl: string,
  onError: (err: Error) => void,
  max = 5,
  poolMode: Exclude<PoolMode, 'direct'> = 'session',
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    options: poolMode === 'session' ? CONNECTION_OPTIONS : undefined,
    ...CONNECTION_LIVENESS,
    max,
  });
  pool.on('error', onError);
  if (poolMode === 'transaction') pool.on('connect', withoutStatementNames);
  return pool;
}
