import type { Knex } from 'knex';

// Issue 43: hazards on items. The GHS data is kept in columns (not one JSON value) so that the
// database checks what it can and the hazard register and the safety data sheet alert can find the
// hazardous items by an index. `hazardous` is what the issue calls hazardous: any pictogram or H statement.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE items
    ADD COLUMN hazard_signal_word text CONSTRAINT items_hazard_signal_word_check CHECK (hazard_signal_word IN ('Danger', 'Warning')),
    ADD COLUMN hazard_pictograms text[] NOT NULL DEFAULT '{}',
    ADD COLUMN hazard_statements text[] NOT NULL DEFAULT '{}',
    ADD COLUMN precautionary_statements text[] NOT NULL DEFAULT '{}',
    ADD COLUMN cas_number text,
    ADD COLUMN un_number text CONSTRAINT items_un_number_check CHECK (un_number ~ '^[0-9]{4}$'),
    ADD COLUMN hazard_storage text,
    ADD COLUMN hazardous boolean GENERATED ALWAYS AS (cardinality(hazard_pictograms) > 0 OR cardinality(hazard_statements) > 0) STORED,
    ADD COLUMN coshh_required boolean NOT NULL DEFAULT false,
    ADD COLUMN restricted boolean NOT NULL DEFAULT false`);
  await knex.raw('CREATE INDEX items_hazardous ON items (id) WHERE hazardous');
  await knex.raw('ALTER TABLE categories ADD COLUMN coshh_required boolean NOT NULL DEFAULT false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE categories DROP COLUMN IF EXISTS coshh_required');
  await knex.raw(`ALTER TABLE items
    DROP COLUMN IF EXISTS hazardous,
    DROP COLUMN IF EXISTS hazard_signal_word,
    DROP COLUMN IF EXISTS hazard_pictograms,
    DROP COLUMN IF EXISTS hazard_statements,
    DROP COLUMN IF EXISTS precautionary_statements,
    DROP COLUMN IF EXISTS cas_number,
    DROP COLUMN IF EXISTS un_number,
    DROP COLUMN IF EXISTS hazard_storage,
    DROP COLUMN IF EXISTS coshh_required,
    DROP COLUMN IF EXISTS restricted`);
}
