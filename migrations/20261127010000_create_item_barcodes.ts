import type { Knex } from 'knex';

// An item's extra codes (issue 31): manufacturers' EAN-13, UPC-A and GTIN-14, a supplier's code, a
// shelf label. `code` is as entered (a GS1 string's GTIN); `lookup_key` is what a scan is compared
// by (src/lib/barcodes.ts lookupKey: a GTIN's GTIN-14 form, else the code in lower case), unique
// across every item so two items never answer to one code. A barcode belongs to its item and goes
// with it when the item is deleted.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE item_barcodes (
      id serial PRIMARY KEY,
      item_id integer NOT NULL REFERENCES items (id) ON DELETE CASCADE,
      code text NOT NULL CHECK (length(code) BETWEEN 1 AND 100),
      lookup_key text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('ean13', 'upca', 'gtin14', 'code128', 'other')),
      note text CHECK (note IS NULL OR length(note) <= 500),
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  await knex.raw('CREATE UNIQUE INDEX item_barcodes_lookup_key ON item_barcodes (lookup_key)');
  await knex.raw('CREATE INDEX item_barcodes_item_id ON item_barcodes (item_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE item_barcodes');
}
