import type { Db } from '../db/knex';
import type { ReferenceCounters } from '../db/references';
import { sql } from '../db/sql';

/** Why a recorded password sign-in failed: a wrong password, or refused by the sign-in limits. */
export type FailedSignInReason = 'wrong_password' | 'rate_limited';

export type FailedSignInRow = {
  id: string;
  user_id: string;
  occurred_at: Date;
  ip_address: string | null;
  user_agent: string | null;
  reason: FailedSignInReason;
  delay_ms: number;
};

/** How long failed sign-ins are kept and shown. */
export const FAILED_SIGN_IN_RETENTION_DAYS = 30;
/** A user agent is the client's own text: it is kept only this long. */
const USER_AGENT_MAX_LENGTH = 300;

/** The failed password sign-ins of each account (table failed_sign_ins, owned by the auth module). */
export function failedSignIns(db: Db) {
  return {
    async record(entry: {
      userId: string;
      ip: string | null;
      userAgent: string | null;
      reason: FailedSignInReason;
      delayMs: number;
    }): Promise<void> {
      await db('failed_sign_ins').insert({
        user_id: entry.userId,
        ip_address: entry.ip,
        user_agent: entry.userAgent?.slice(0, USER_AGENT_MAX_LENGTH) ?? null,
        reason: entry.reason,
        delay_ms: entry.delayMs,
      });
    },

    /** The account's failed sign-ins of the last 30 days, newest first. */
    async recent(userId: string): Promise<FailedSignInRow[]> {
      return db<FailedSignInRow>('failed_sign_ins')
        .where({ user_id: userId })
        .andWhere('occurred_at', '>', db.raw(`now() - make_interval(days => ?)`, [FAILED_SIGN_IN_RETENTION_DAYS]))
        .orderBy([
          { column: 'occurred_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ]);
    },

    /** Drops the rows past the retention (the scheduler runs it). */
    async prune(): Promise<void> {
      await db('failed_sign_ins')
        .where('occurred_at', '<', db.raw(`now() - make_interval(days => ?)`, [FAILED_SIGN_IN_RETENTION_DAYS]))
        .delete();
    },
  };
}

/** The rows of failed sign-ins that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const failedSignInReferences: ReferenceCounters = {
  users: [
    {
      table: 'failed_sign_ins',
      column: 'user_id',
      count: (id) => sql`SELECT count(*) FROM failed_sign_ins WHERE user_id = ${id}`,
    },
  ],
};
