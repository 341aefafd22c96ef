import type { Knex } from 'knex';

// Issue 43: safety data sheets. Every version uploaded for an item is kept (an auditor asks which
// one was current on a date), its PDF in PostgreSQL as invoice PDFs are, so every instance serves
// it and backups (pg_dump) and restores carry it. The current one is the latest revision date,
// then the latest upload: the index serves that order per item.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE safety_data_sheets (
    id serial PRIMARY KEY,
    item_id integer NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    revision_date date NOT NULL,
    language text NOT NULL DEFAULT 'en' CONSTRAINT safety_data_sheets_language_check CHECK (language ~ '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$'),
    supplier_id text REFERENCES suppliers (id) ON DELETE SET NULL,
    filename text NOT NULL,
    size_bytes integer NOT NULL,
    sha256 text NOT NULL,
    data bytea NOT NULL,
    uploaded_by uuid REFERENCES users (id) ON DELETE SET NULL,
    uploaded_at timestamptz NOT NULL DEFAULT now()
  )`);
  await knex.raw(
    'CREATE INDEX safety_data_sheets_by_item ON safety_data_sheets (item_id, revision_date DESC, uploaded_at DESC, id DESC)',
  );
  await knex.raw(
    'CREATE INDEX safety_data_sheets_supplier ON safety_data_sheets (supplier_id) WHERE supplier_id IS NOT NULL',
  );
  await knex.raw(
    'CREATE INDEX safety_data_sheets_uploaded_by ON safety_data_sheets (uploaded_by) WHERE uploaded_by IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS safety_data_sheets');
}
