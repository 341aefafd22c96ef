import { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Db } from '../db/knex';

/**
 * A counter of rate-limiter-flexible in the shared rate_limits table (owned here), so every
 * instance counts the same: `points` per `durationSeconds` window for each key under `keyPrefix`.
 * rate-limiter-flexible names its statements (`rate_limits:rlflx-upsert`) and has no option not to;
 * behind PgBouncer in transaction mode the pool's connections drop the names (src/db/knex.ts).
 */
export const rateLimitCounter = (db: Db, keyPrefix: string, points: number, durationSeconds: number) =>
  new RateLimiterPostgres({
    storeClient: db,
    storeType: 'knex',
    tableName: 'rate_limits',
    tableCreated: true,
    // the scheduler deletes expired counters
    clearExpiredByTimeout: false,
    keyPrefix,
    points,
    duration: durationSeconds,
  });

/** Deletes the counters whose window has ended. */
export async function pruneExpiredRateLimits(db: Db): Promise<void> {
  await db('rate_limits').where('expire', '<', Date.now()).delete();
}
