import type { Knex } from 'knex';

// A new install backs itself up: daily at 02:00 (server time), keeping the newest 14 scheduled
// backups, from the moment it is installed (no slot before it is run). An install where no
// admin ever saved a schedule had none running and gets this one too; a saved schedule, on or
// off, is kept as it is.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    INSERT INTO backup_schedule (id, enabled, frequency, "time", retention, changed_at, enabled_at)
    VALUES (1, true, 'daily', '02:00', 14, now(), now())
    ON CONFLICT (id) DO NOTHING`);
}

// Removes the schedule only while it is still the one this migration added (never saved since).
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DELETE FROM backup_schedule
     WHERE enabled AND frequency = 'daily' AND "time" = '02:00' AND retention = 14 AND changed_at = enabled_at`);
}
