import type { Knex } from 'knex';
import type { Lifecycle } from '../../http/lifecycle';

/** A health or status check must answer even when the database hangs. */
const DB_ANSWER_TIMEOUT_MS = 2000;

/** Whether the database answered (within 2 s), whether the process is stopping, and how long it has run. */
export type Readiness = { databaseConnected: boolean; shuttingDown: boolean; uptimeSeconds: number };

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

export function healthService(db: Knex) {
  return {
    async readiness(lifecycle: Lifecycle): Promise<Readiness> {
      const { connected } = await probeDatabase(db);
      return { databaseConnected: connected, shuttingDown: lifecycle.shuttingDown, uptimeSeconds: uptimeSeconds() };
    },
  };
}
