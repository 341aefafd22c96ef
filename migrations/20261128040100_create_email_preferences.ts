import type { Knex } from 'knex';

// Issue 32 (email): each person's email switches (My account), the state of the emailing jobs (the
// last low-stock digest, the last backup-overdue alert), and each category's buyers.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE email_preferences (
      user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      -- NULL: the person has not chosen, and their role's default applies (src/modules/emails/emails.switches.ts)
      low_stock_digest boolean,
      order_received boolean,
      backup_alerts boolean,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE email_runs (
      -- 'low-stock-digest', 'backup-overdue'
      name text PRIMARY KEY,
      last_run_at timestamptz NOT NULL,
      -- the digest: the last stock movement it covered (the next one reads the movements after it)
      last_movement_id bigint
    );

    ALTER TABLE categories ADD COLUMN buyer_emails text[] NOT NULL DEFAULT '{}';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE categories DROP COLUMN IF EXISTS buyer_emails;
    DROP TABLE IF EXISTS email_runs;
    DROP TABLE IF EXISTS email_preferences;
  `);
}
