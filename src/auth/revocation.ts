import type { Db } from '../db/knex';

// Kept apart from tokens.service.ts, which reads users: the users module ends a user's
// credentials in its own transaction without importing back the module that imports it.

/**
 * Every API token of the user stops working (deactivation, a password change or reset); how
 * many did. The change that asks records this on the user's own audit row.
 */
export async function revokeAllTokensOf(db: Db, userId: string): Promise<number> {
  return db('api_tokens').where({ user_id: userId }).delete();
}
