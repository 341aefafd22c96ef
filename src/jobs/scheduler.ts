import cron, { type ScheduledTask } from 'node-cron';
import type { Knex } from 'knex';
import type { Logger } from '../logger';
import type { Maintenance } from '../db/maintenance';
import { failedSignIns } from '../auth/failed-sign-ins';
import { pruneExpiredRateLimits } from '../auth/rate-limits';
import { pruneExpiredSessions } from '../auth/sessions.queries';
import { runExclusively } from './advisory-lock';
import { sendLowStockDigest } from '../modules/notifications/notifications.digest';

/**
 * A scheduled job. run gets the pool and takes its own transactions and advisory locks, so a
 * job that spends minutes outside the database (a backup) holds no transaction meanwhile.
 */
export type Job = { name: string; schedule: string; run: (db: Knex) => Promise<void> };

/** A job whose whole work is one transaction under its advisory lock: one instance does it. */
function oneTransactionJob(name: string, schedule: string, work: (trx: Knex.Transaction) => Promise<void>): Job {
  return {
    name,
    schedule,
    run: async (db) => {
      await runExclusively(db, name, work);
    },
  };
}

/** The housekeeping jobs; server.ts adds the scheduled backup, which needs more than the pool. */
export const JOBS: Job[] = [
  oneTransactionJob('prune-expired-sessions', '*/10 * * * *', async (trx) => {
    await pruneExpiredSessions(trx);
  }),
  oneTransactionJob('prune-expired-rate-limits', '*/15 * * * *', async (trx) => {
    await pruneExpiredRateLimits(trx);
  }),
  oneTransactionJob('prune-old-failed-sign-ins', '7 * * * *', async (trx) => {
    await failedSignIns(trx).prune();
  }),
  // every minute each instance asks whether the day's digest is due (the time is a setting, changed without a restart)
  oneTransactionJob('low-stock-digest', '* * * * *', async (trx) => {
    await sendLowStockDigest(trx, new Date());
  }),
];

export function startScheduler(db: Knex, logger: Logger, maintenance: Maintenance, jobs: Job[]): { stop: () => void } {
  const tasks: ScheduledTask[] = jobs.map((job) =>
    cron.schedule(job.schedule, async () => {
      if (maintenance.activity) return;
      try {
        await job.run(db);
      } catch (err) {
        logger.error({ err, job: job.name }, 'scheduled job failed');
      }
    }),
  );
  return { stop: () => tasks.forEach((t) => t.stop()) };
}
