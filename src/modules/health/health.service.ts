import type { Knex } from 'knex';
import type { Lifecycle } from '../../http/lifecycle';
import { hostPortOf, type ReadRouter, type ReplicaHealth } from '../../db/replicas';

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
  poolMode: PoolMode;
};

export type PoolMode = 'session' | 'transaction';

/** What the health report shows of the database topology (issue 44). */
export type Topology = {
  reads: ReadRouter;
  databaseUrl: string;
  /** DATABASE_POOL_MODE, when the configuration has it; session otherwise */
  config: object;
};

/** DATABASE_POOL_MODE as the configuration read it (absent from a configuration without it: session). */
export function poolModeOf(config: object): PoolMode {
  const mode = (config as { databasePoolMode?: unknown }).databasePoolMode;
  return mode === 'transaction' ? 'transaction' : 'session';
}

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
        primary: { host: hostPortOf(topology.databaseUrl), latencyMs },
        replicas,
        poolMode: poolModeOf(topology.config),
      };
    },
  };
}
