import cron, { type ScheduledTask } from 'node-cron';
import type { Knex } from 'knex';
import type { Logger } from '../logger';
import type { Maintenance } from '../db/maintenance';
import { failedSignIns } from '../auth/failed-sign-ins';
import { pruneExpiredRateLimits } from '../auth/rate-limits';
import { pruneExpiredSessions } from '../auth/sessions.queries';
import { checkLedger } from '../modules/system-alerts/system-alerts.service';
import { pruneExpiredBaskets } from '../modules/catalogue/baskets.service';
import { runExclusively } from './advisory-lock';
import { sendExpiryDigest, sendLowStockDigest } from '../modules/notifications/notifications.digest';

/**
 * A scheduled job. run gets the pool and takes its own transactions and advisory locks, so a
 * job that spends minutes outside the database (a backup) holds no transaction meanwhile.
 * afterStartMs: also run once that long after the scheduler starts.
 */
export type Job = { name: string; schedule: string; afterStartMs?: number; run: (db: Knex) => Promise<void> };

/** A job whose whole work is one transaction under its advisory lock: one instance does it. */
function oneTransactionJob(
  name: string,
  schedule: string,
  work: (trx: Knex.Transaction) => Promise<void>,
  afterStartMs?: number,
): Job {
  return {
    name,
    schedule,
    afterStartMs,
    run: async (db) => {
      await runExclusively(db, name, work);
    },
  };
}

/** The whole stock ledger's reconciliation, whose result the system alerts read (issue 34). */
export const LEDGER_CHECK_JOB = 'ledger-check';

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
  oneTransactionJob('prune-expired-baskets', '37 * * * *', async (trx) => {
    await pruneExpiredBaskets(trx);
  }),
  oneTransactionJob(
    LEDGER_CHECK_JOB,
    '*/15 * * * *',
    async (trx) => {
      await checkLedger(trx);
    },
    60_000,
  ),
  // every minute each instance asks whether the day's digest is due (the time is a setting, changed without a restart)
  oneTransactionJob('low-stock-digest', '* * * * *', async (trx) => {
    await sendLowStockDigest(trx, new Date());
  }),
  // issue 42: the expiry digest at the same time of day (its own run, so neither digest waits on the other)
  oneTransactionJob('expiry-digest', '* * * * *', async (trx) => {
    await sendExpiryDigest(trx, new Date());
  }),
];

export function startScheduler(db: Knex, logger: Logger, maintenance: Maintenance, jobs: Job[]): { stop: () => void } {
  const runJob = async (job: Job) => {
    if (maintenance.activity) return;
    try {
      await job.run(db);
    } catch (err) {
      logger.error({ err, job: job.name }, 'scheduled job failed');
    }
  };
  const tasks: ScheduledTask[] = jobs.map((job) => cron.schedule(job.schedule, () => runJob(job)));
  const timers = jobs.flatMap((job) =>
    job.afterStartMs === undefined ? [] : [setTimeout(() => void runJob(job), job.afterStartMs).unref()],
  );
  return {
    stop: () => {
      tasks.forEach((t) => t.stop());
      timers.forEach((t) => clearTimeout(t));
    },
  };
}
