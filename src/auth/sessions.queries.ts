import type { Db } from '../db/knex';

/*
 * The statements on sessions outside connect-pg-simple's store (src/auth/session.ts): the auth
 * module owns the table, the users module and the scheduler ask here.
 */

/** Deletes the stored sessions of a user (all but `exceptSessionId` when given), so they end at once. */
export async function endSessionsOf(db: Db, userId: string, exceptSessionId?: string): Promise<void> {
  const q = db('sessions').whereRaw(`(sess -> 'passport' ->> 'user') = ?`, [userId]);
  if (exceptSessionId) q.whereNot({ sid: exceptSessionId });
  await q.delete();
}

/** Deletes the sessions past their expiry (the store's own pruning is off: the scheduler runs this on one instance). */
export async function pruneExpiredSessions(db: Db): Promise<void> {
  await db('sessions').where('expire', '<', db.fn.now()).delete();
}
