import type { Knex } from 'knex';

// Issue 39: a requester's unsubmitted request basket, one per person, kept here rather than in the
// session so it follows them from one device (or sign-in) to the next. Its lines are one JSON list,
// read and written whole under the row's lock. Untouched for 30 days it is empty and purged.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE request_baskets (
    user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    lines jsonb NOT NULL DEFAULT '[]',
    charge_code text NOT NULL DEFAULT '',
    notes text NOT NULL DEFAULT '',
    needed_by text NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL DEFAULT now()
  )`);
  // the purge of baskets untouched for 30 days
  await knex.raw('CREATE INDEX request_baskets_updated_at ON request_baskets (updated_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS request_baskets');
}
