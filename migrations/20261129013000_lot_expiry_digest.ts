import type { Knex } from 'knex';

// Issue 42: the daily expiry digest. Each lot keeps the expiry status the digest last reported
// (expiring, expired; null: not reported), so a lot is reported, and its lot.expiring / lot.expired
// webhook event published, once per status; and each person has a switch for the digest on My account
// (NULL: their role's default, on for managers and admins).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stock_lots
    ADD COLUMN expiry_reported text CONSTRAINT stock_lots_expiry_reported_check CHECK (expiry_reported IN ('expiring', 'expired'))`);
  await knex.raw('ALTER TABLE email_preferences ADD COLUMN expiry_digest boolean');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE email_preferences DROP COLUMN IF EXISTS expiry_digest');
  await knex.raw('ALTER TABLE stock_lots DROP COLUMN IF EXISTS expiry_reported');
}
