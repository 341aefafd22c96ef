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
  /** the primary (DATABASE_URL) by host:port, and its round trip */
  primary: { host: string; latencyMs: number | null };
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

export type DatabaseProbe = { connected: true; latencyMs: number } | { connected: false; latencyMs: null };

/** One real round trip (SELECT 1), timed; a refusal or no answer within 2 s is "not connected", never a throw. */
export async function probeDatabase(db: Knex): Promise<DatabaseProbe> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const noAnswer = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), DB_ANSWER_TIMEOUT_MS);
  });
  const answered = db.raw('SELECT 1').then(
    () => true,
    () => false,
  );
  try {
    if (await Promise.race([answered, noAnswer]))
      return { connected: true, latencyMs: Math.round(performance.now() - started) };
    return { connected: false, latencyMs: null };
  } finally {
    clearTimeout(timer);
  }
}

/** Whole seconds since this process started. */
export const uptimeSeconds = () => Math.floor(process.uptime());

export function healthService(db: Knex, topology: Topology) {
  return {
    async readiness(lifecycle: Lifecycle): Promise<Readiness> {
      const [{ connected, latencyMs }, replicas] = await Promise.all([probeDatabase(db), topology.reads.health()]);
      return {
        databaseConnected: connected,
        shuttingDown: lifecycle.shuttingDown,
        uptimeSeconds: uptimeSeconds(),
        // DATABASE_URL (the pooler, in front of the primary, when there is one)
        primary: { host: hostPortOf(topology.config.databaseUrl ?? topology.databaseUrl), latencyMs },
        replicas,
        poolMode: topology.config.databasePoolMode,
      };
    },
  };
}
