import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { createMaintenance } from '../../src/db/maintenance';
import { JOBS, LEDGER_CHECK_JOB, startScheduler, type Job } from '../../src/jobs/scheduler';
import { createLogger } from '../../src/logger';

describe('startScheduler', () => {
  it('runs a job with afterStartMs once that long after start, besides its schedule; stop cancels what has not run', async () => {
    const runs: string[] = [];
    // a schedule that does not come round during the test: only the run after start happens
    const job = (name: string, afterStartMs?: number): Job => ({
      name,
      schedule: '0 0 1 1 *',
      afterStartMs,
      run: async () => {
        runs.push(name);
      },
    });
    const scheduler = startScheduler({} as Knex, createLogger('silent'), createMaintenance(), [
      job('soon', 10),
      job('later', 60_000),
      job('scheduled only'),
    ]);
    await expect.poll(() => runs).toEqual(['soon']);
    scheduler.stop();
    expect(runs).toEqual(['soon']);
  });

  it('the ledger check runs every 15 minutes and a minute after start', () => {
    expect(JOBS.find((job) => job.name === LEDGER_CHECK_JOB)).toMatchObject({
      schedule: '*/15 * * * *',
      afterStartMs: 60_000,
    });
  });
});
