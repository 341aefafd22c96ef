import type { Knex } from 'knex';

// Recharge batches: what the finance office charged to the cost centres, closed once and never
// changed. A batch keeps its own copy of every entry (the sale or the refund, its charge code and
// the code's cost centre at close time, its amounts), so a later refund, a renamed code or an
// archived sale leaves it as it was: entries hold the sale's id without a foreign key for that
// reason. Both tables refuse UPDATE and DELETE.
//
// A sale enters one batch at most (the unique index on sale entries), a refund line one batch at
// most (its batch_id, set once). Closes are serialised by a lock on recharge_batches; the index is
// the last guard. The foreign keys to the batch are deferred: a close writes its entries first and
// the batch row last, with the totals of those entries, so the batch row is never updated.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE recharge_batches (
      id serial PRIMARY KEY,
      number text NOT NULL UNIQUE,
      period text NOT NULL CHECK (period ~ '^[0-9]{6}$'),
      seq integer NOT NULL CHECK (seq > 0),
      recorded_before timestamptz NOT NULL,
      closed_at timestamptz NOT NULL DEFAULT now(),
      closed_by uuid,
      closed_by_email text,
      sales_count integer NOT NULL,
      refunds_count integer NOT NULL,
      net_amount numeric(14, 2) NOT NULL,
      vat_amount numeric(14, 2) NOT NULL,
      gross_amount numeric(14, 2) NOT NULL,
      UNIQUE (period, seq)
    )`);
  await knex.raw('CREATE INDEX recharge_batches_closed ON recharge_batches (closed_at DESC, id DESC)');
  await knex.raw(`
    CREATE TABLE recharge_batch_entries (
      id bigserial PRIMARY KEY,
      batch_id integer NOT NULL REFERENCES recharge_batches(id) DEFERRABLE INITIALLY DEFERRED,
      kind text NOT NULL CHECK (kind IN ('sale', 'refund')),
      sale_ref integer NOT NULL,
      sale_number text NOT NULL,
      recorded_at timestamptz NOT NULL,
      charge_code text NOT NULL,
      cost_centre text NOT NULL,
      description text NOT NULL,
      net_amount numeric(14, 2) NOT NULL,
      vat_amount numeric(14, 2) NOT NULL,
      gross_amount numeric(14, 2) NOT NULL
    )`);
  await knex.raw(
    `CREATE UNIQUE INDEX recharge_batch_entries_one_sale ON recharge_batch_entries (sale_ref) WHERE kind = 'sale'`,
  );
  await knex.raw('CREATE INDEX recharge_batch_entries_batch ON recharge_batch_entries (batch_id, id)');
  await knex.raw(
    'ALTER TABLE sale_refund_lines ADD CONSTRAINT sale_refund_lines_batch FOREIGN KEY (batch_id) REFERENCES recharge_batches(id) DEFERRABLE INITIALLY DEFERRED',
  );
  await knex.raw(`
    CREATE FUNCTION recharge_batches_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '% is immutable: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
    END $$`);
  for (const table of ['recharge_batches', 'recharge_batch_entries']) {
    await knex.raw(
      `CREATE TRIGGER ${table}_immutable BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION recharge_batches_are_immutable()`,
    );
  }
  // a refund line taken by a batch stays in it (the line itself may go with its sale's archive)
  await knex.raw(`CREATE TRIGGER sale_refund_lines_batched_immutable BEFORE UPDATE ON sale_refund_lines
                  FOR EACH ROW WHEN (OLD.batch_id IS NOT NULL) EXECUTE FUNCTION recharge_batches_are_immutable()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER sale_refund_lines_batched_immutable ON sale_refund_lines');
  await knex.raw('ALTER TABLE sale_refund_lines DROP CONSTRAINT sale_refund_lines_batch');
  await knex.raw('DROP TABLE recharge_batch_entries');
  await knex.raw('DROP TABLE recharge_batches');
  await knex.raw('DROP FUNCTION recharge_batches_are_immutable()');
}
