import type { Knex } from 'knex';

// The backup schedule: one row (id 1), absent until an admin first saves a schedule. changed_at
// is when it was last saved (slots before it are never run); enabled_at is when it was last
// switched on (the overdue alert counts from it until a scheduled backup succeeds).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE backup_schedule (
      id integer PRIMARY KEY CHECK (id = 1),
      enabled boolean NOT NULL,
      frequency text NOT NULL CHECK (frequency IN ('hourly', 'daily', 'weekly')),
      "time" text NOT NULL CHECK ("time" ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
      retention integer NOT NULL CHECK (retention BETWEEN 1 AND 1000),
      changed_at timestamptz NOT NULL DEFAULT now(),
      enabled_at timestamptz,
      CHECK (enabled = (enabled_at IS NOT NULL))
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('backup_schedule');
}
