import cron, { type ScheduledTask } from 'node-cron';
import type { Knex } from 'knex';
import type { Logger } from '../logger';
import type { Maintenance } from '../db/maintenance';
import { runExclusively } from './advisory-lock';

type Job = { name: string; schedule: string; run: (trx: Knex.Transaction) => Promise<void> };

export const JOBS: Job[] = [
  {
    name: 'prune-expired-sessions',
    schedule: '*/10 * * * *',
    run: async (trx) => {
      await trx('sessions').where('expire', '<', trx.fn.now()).delete();
    },
  },
  {
    name: 'prune-expired-rate-limits',
    schedule: '*/15 * * * *',
    run: async (trx) => {
      await trx('rate_limits').where('expire', '<', Date.now()).delete();
    },
  },
];

export function startScheduler(db: Knex, logger: Logger, maintenance: Maintenance, jobs: Job[] = JOBS): { stop: () => void } {
  const tasks: ScheduledTask[] = jobs.map((job) =>
    cron.schedule(job.schedule, async () => {
      if (maintenance.activity) return;
      try {
        await runExclusively(db, job.name, job.run);
      } catch (err) {
        logger.error({ err, job: job.name }, 'scheduled job failed');
      }
    }),
  );
  return { stop: () => tasks.forEach((t) => t.stop()) };
}
