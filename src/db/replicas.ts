import type { Request, RequestHandler } from 'express';
import knex, { type Knex } from 'knex';
import { knexConfig } from './knex';

/** What every replica connection says in pg_stat_activity. */
export const REPLICA_APPLICATION_NAME = 'stores-replica-read';
/** How often each replica's lag is measured. */
export const REPLICA_CHECK_INTERVAL_MS = 2000;
/** A check that gets no answer within this counts the replica down. */
const CHECK_TIMEOUT_MS = 2000;
/** Connections per replica and instance: a few report reads at once. */
const REPLICA_POOL_MAX = 3;
/** Requests that never write. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export type ReplicaState = 'unchecked' | 'healthy' | 'lagging' | 'down';

export type ReplicaHealth = {
  /** host:port of its URL (never the credentials) */
  host: string;
  state: ReplicaState;
  /** replay lag as PostgreSQL reports it at the last check; 0 when it has replayed all it received; null when down */
  lagMs: number | null;
  checkedAt: Date | null;
};

/** A system alert as src/modules/system-alerts declares them (type, level, message). */
export type ReplicaAlert = { type: 'replica_lagging'; level: 'warning'; message: string };

type LogSink = {
  warn: (obj: object, msg: string) => void;
  info: (obj: object, msg: string) => void;
  error: (msg: string) => void;
  debug: (msg: string) => void;
};

type Replica = ReplicaHealth & {
  db: Knex;
  /** the local time up to which it is known to have replayed every commit of the primary */
  caughtUpTo: number;
  problem?: string;
};

/**
 * Where the reads that tolerate a little lag go (issue 44): a healthy replica of
 * DATABASE_REPLICA_URLS, else the primary. Unused (every read on the primary, no timer, no
 * connection) when no replica is configured.
 */
export type ReadRouter = {
  /** The database for one of the report-like reads of this request: a usable replica, or the primary. */
  forReports: (req: Request) => Knex;
  /** Mounted after the sessions: remembers when a signed-in person last wrote (read-your-writes). */
  recordWrites: RequestHandler;
  /** Measures every replica now (a check already running is joined rather than doubled). */
  checkNow: () => Promise<void>;
  /** The replicas as last measured, measuring now first when the last check is older than maxAgeMs. */
  health: (maxAgeMs?: number) => Promise<ReplicaHealth[]>;
  /** replica_lagging for each replica down or lagging over the limit. */
  alerts: () => ReplicaAlert[];
  /** Starts the periodic check (the server does; tests may call checkNow instead). */
  start: () => void;
  close: () => Promise<void>;
};

/** host:port of a PostgreSQL URL, for the health report and the log (5432 when the URL names none). */
export function hostPortOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}`;
  } catch {
    return 'unknown';
  }
}

function replicaDb(url: string, log?: LogSink): Knex {
  const base = knexConfig(
    url,
    REPLICA_POOL_MAX,
    log && { warn: (m) => log.warn({}, m), error: (m) => log.error(m), debug: (m) => log.debug(m) },
  );
  return knex({
    ...base,
    connection: {
      ...(base.connection as object),
      application_name: REPLICA_APPLICATION_NAME,
    } as Knex.PgConnectionConfig,
  });
}

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};

/**
 * The lag as PostgreSQL reports it: none when the replica has replayed all the WAL it received
 * (an idle primary writes nothing, so a replica of it is not behind however old its last replayed
 * commit), else the age of the last commit it replayed. `caught_up` says whether it has replayed
 * the primary's WAL position read just before (null when the primary did not answer).
 */
const LAG_QUERY = `SELECT pg_is_in_recovery() AS in_recovery,
  CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
       ELSE EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()) * 1000 END AS lag_ms,
  CASE WHEN ?::pg_lsn IS NULL THEN NULL ELSE pg_last_wal_replay_lsn() >= ?::pg_lsn END AS caught_up`;

type LagRow = { in_recovery: boolean; lag_ms: string | number | null; caught_up: boolean | null };

export function createReadRouter(opts: {
  primary: Knex;
  replicaUrls: string[];
  maxLagMs: number;
  logger?: LogSink;
}): ReadRouter {
  const { primary, maxLagMs, logger } = opts;
  const replicas: Replica[] = opts.replicaUrls.map((url) => ({
    host: hostPortOf(url),
    state: 'unchecked',
    lagMs: null,
    checkedAt: null,
    db: replicaDb(url, logger),
    caughtUpTo: 0,
  }));
  /** user id → ms since epoch of their last successful write on this instance */
  const lastWrites = new Map<string, number>();
  let next = 0;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  function setState(replica: Replica, state: ReplicaState, lagMs: number | null, problem?: string) {
    const before = replica.state;
    replica.state = state;
    replica.lagMs = lagMs;
    replica.problem = problem;
    replica.checkedAt = new Date();
    if (before === state) return;
    const fields = { replica: replica.host, lagMs, maxLagMs, problem };
    if (state === 'healthy') {
      if (before !== 'unchecked') logger?.info(fields, 'read replica healthy again: report reads go to it');
    } else if (state === 'lagging') {
      logger?.warn(fields, 'read replica lagging over DATABASE_REPLICA_MAX_LAG_MS: its reads go to the primary');
    } else if (state === 'down') {
      logger?.warn(fields, 'read replica unreachable: its reads go to the primary');
    }
  }

  async function checkOne(replica: Replica, primaryLsn: string | null, askedAt: number) {
    try {
      const { rows } = await withTimeout(
        replica.db.raw<{ rows: LagRow[] }>(LAG_QUERY, [primaryLsn, primaryLsn]),
        CHECK_TIMEOUT_MS,
      );
      const row = rows[0];
      if (!row.in_recovery) return setState(replica, 'down', null, 'not a replica (not in recovery)');
      const lag = row.lag_ms === null ? null : Math.max(0, Math.round(Number(row.lag_ms)));
      if (row.caught_up) replica.caughtUpTo = askedAt;
      if (lag === null) return setState(replica, 'down', null, 'has replayed nothing yet');
      setState(replica, lag > maxLagMs ? 'lagging' : 'healthy', lag);
    } catch (err) {
      setState(replica, 'down', null, (err as Error).message);
    }
  }

  async function check() {
    const askedAt = Date.now();
    // read first, so a replica that has replayed it has replayed every commit made before askedAt
    const primaryLsn = await withTimeout(
      primary.raw<{ rows: { lsn: string }[] }>('SELECT pg_current_wal_lsn()::text AS lsn'),
      CHECK_TIMEOUT_MS,
    ).then(
      ({ rows }) => rows[0].lsn,
      () => null,
    );
    await Promise.all(replicas.map((replica) => checkOne(replica, primaryLsn, askedAt)));
  }

  function checkNow(): Promise<void> {
    if (replicas.length === 0) return Promise.resolve();
    running ??= check().finally(() => (running = undefined));
    return running;
  }

  function lastWriteOf(req: Request): number | undefined {
    const id = req.user?.id;
    const here = id === undefined ? undefined : lastWrites.get(id);
    const inSession = req.session?.lastWriteAt;
    if (here === undefined) return inSession;
    return inSession === undefined ? here : Math.max(here, inSession);
  }

  function noteWrite(req: Request) {
    const id = req.user?.id;
    if (id === undefined) return;
    const now = Date.now();
    lastWrites.set(id, now);
    // kept in the session too (PostgreSQL), so another instance sees it; bearer requests have none
    if (req.session && req.authMethod !== 'bearer' && req.authMethod !== 'mcp-key') req.session.lastWriteAt = now;
    if (lastWrites.size > 10_000) {
      for (const [user, at] of lastWrites) if (now - at >= maxLagMs) lastWrites.delete(user);
    }
  }

  return {
    forReports(req) {
      if (replicas.length === 0) return primary;
      const now = Date.now();
      const wrote = lastWriteOf(req);
      const usable = replicas.filter(
        (r) => r.state === 'healthy' && (wrote === undefined || now - wrote >= maxLagMs || r.caughtUpTo >= wrote),
      );
      if (usable.length === 0) return primary;
      next = (next + 1) % usable.length;
      return usable[next].db;
    },

    recordWrites(req, res, next) {
      if (replicas.length === 0 || READ_METHODS.has(req.method)) return next();
      const end = res.end;
      // before the response ends, so a changed session is saved with it (express-session saves in its own res.end)
      res.end = function (this: typeof res, ...args: unknown[]) {
        if (res.statusCode < 400) noteWrite(req);
        return (end as (...a: unknown[]) => typeof res).apply(this, args);
      } as typeof res.end;
      next();
    },

    checkNow,

    async health(maxAgeMs = 1000) {
      const oldest = Math.min(...replicas.map((r) => r.checkedAt?.getTime() ?? 0));
      if (replicas.length > 0 && Date.now() - oldest > maxAgeMs) await checkNow();
      return replicas.map(({ host, state, lagMs, checkedAt }) => ({ host, state, lagMs, checkedAt }));
    },

    alerts() {
      return replicas
        .filter((r) => r.state === 'lagging' || r.state === 'down')
        .map((r) => ({
          type: 'replica_lagging' as const,
          level: 'warning' as const,
          message:
            r.state === 'lagging'
              ? `Read replica ${r.host} is ${r.lagMs} ms behind the primary (over ${maxLagMs} ms): its reads go to the primary`
              : `Read replica ${r.host} is unreachable (${r.problem ?? 'no answer'}): its reads go to the primary`,
        }));
    },

    start() {
      if (replicas.length === 0 || timer) return;
      void checkNow();
      timer = setInterval(() => void checkNow(), REPLICA_CHECK_INTERVAL_MS);
      timer.unref();
    },

    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
      await Promise.all(replicas.map((r) => r.db.destroy()));
    },
  };
}

/** Every read on the primary: the router of an app with no replica configured. */
export const primaryOnly = (primary: Knex): ReadRouter => createReadRouter({ primary, replicaUrls: [], maxLagMs: 0 });
