import type { Knex } from 'knex';
import type { Lifecycle } from '../../http/lifecycle';
import { hostPortOf, type ReadRouter, type ReplicaHealth } from '../../db/replicas';
import type { Config, DatabasePoolMode } from '../../config';

/** A health or status check must answer even when the database hangs. */
const DB_ANSWER_TIMEOUT_MS = 2000;

/** Whether the database answered (within 2 s), whether the process is stopping, and how long it has run. */
export type Readiness = {
  databaseConnected: boolean;
  shuttingDown: boolean;
  uptimeSeconds: number;
  /** the primary (DATABASE_URL) by host:port, its round trip and its PostgreSQL version */
  primary: { host: string; latencyMs: number | null; serverVersion: string | null };
  /** each read replica as last measured (src/db/replicas.ts) */
  replicas: ReplicaHealth[];
  poolMode: DatabasePoolMode;
};

/** What the health report shows of the database topology (issue 44). */
export type Topology = {
  reads: ReadRouter;
  /** the database the app runs on (the embedded one's when DATABASE_URL is unset) */
  databaseUrl: string;
  config: Pick<Config, 'databaseUrl' | 'databasePoolMode'>;
};

export type DatabaseProbe =
  | { connected: true; latencyMs: number; serverVersion: string }
  | { connected: false; latencyMs: null; serverVersion: null };

/**
 * One real round trip, timed; a refusal or no answer within 2 s is "not connected", never a throw.
 * It asks the server's version, which costs no more than SELECT 1 and shows which major runs.
 */
export async function probeDatabase(db: Knex): Promise<DatabaseProbe> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const noAnswer = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), DB_ANSWER_TIMEOUT_MS);
  });
  const answered = db.raw<{ rows: { server_version: string }[] }>('SHOW server_version').then(
    ({ rows }) => rows[0].server_version,
    () => undefined,
  );
  try {
    const serverVersion = await Promise.race([answered, noAnswer]);
    if (serverVersion !== undefined)
      return { connected: true, latencyMs: Math.round(performance.now() - started), serverVersion };
    return { connected: false, latencyMs: null, serverVersion: null };
  } finally {
    clearTimeout(timer);
  }
}

/** Whole seconds since this process started. */
export const uptimeSeconds = () => Math.floor(process.uptime());

export function healthService(db: Knex, topology: Topology) {
  return {
    async readiness(lifecycle: Lifecycle): Promise<Readiness> {
      const [{ connected, latencyMs, serverVersion }, replicas] = await Promise.all([
        probeDatabase(db),
        topology.reads.health(),
      ]);
      return {
        databaseConnected: connected,
        shuttingDown: lifecycle.shuttingDown,
        uptimeSeconds: uptimeSeconds(),
        // DATABASE_URL (the pooler, in front of the primary, when there is one)
        primary: { host: hostPortOf(topology.config.databaseUrl ?? topology.databaseUrl), latencyMs, serverVersion },
        replicas,
        poolMode: topology.config.databasePoolMode,
      };
    },
  };
}
