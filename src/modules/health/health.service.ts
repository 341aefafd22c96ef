import type { Knex } from 'knex';

const startedAt = Date.now();
const DB_CHECK_TIMEOUT_MS = 2000;

/** Whether the database answered (within 2 s), and how long this process has run. */
export type Readiness = { databaseConnected: boolean; uptimeSeconds: number };

async function databaseReachable(db: Knex): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), DB_CHECK_TIMEOUT_MS);
  });
  const check = db.raw('select 1').then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function healthService(db: Knex) {
  return {
    async readiness(): Promise<Readiness> {
      const databaseConnected = await databaseReachable(db);
      return { databaseConnected, uptimeSeconds: Math.floor((Date.now() - startedAt) / 1000) };
    },
  };
}
