import type { Knex } from 'knex';

// Issue 43, COSHH and restricted substances at the point of sale:
// - a sale records the COSHH assessment reference it was made under (1 to 100 characters), found by
//   Search sales through a trigram index holding only the sales that have one (like the recipient's);
// - a request records the reference it was submitted with (carried to its sale at fulfilment), and,
//   when it holds a restricted substance, the manager's approval it waits for on top of any charge-code
//   approval (restricted_approval_required set at submission; approved_by/at once a manager approved).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE sales
    ADD COLUMN coshh_reference text CONSTRAINT sales_coshh_reference_check CHECK (char_length(coshh_reference) BETWEEN 1 AND 100)`);
  await knex.raw(
    'CREATE INDEX sales_coshh_reference_trgm ON sales USING gin (coshh_reference gin_trgm_ops) WHERE coshh_reference IS NOT NULL',
  );
  await knex.raw(`ALTER TABLE stock_requests
    ADD COLUMN coshh_reference text CONSTRAINT stock_requests_coshh_reference_check CHECK (char_length(coshh_reference) BETWEEN 1 AND 100),
    ADD COLUMN restricted_approval_required boolean NOT NULL DEFAULT false,
    ADD COLUMN restricted_approved_by uuid REFERENCES users(id),
    ADD COLUMN restricted_approved_at timestamptz`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE stock_requests
    DROP COLUMN IF EXISTS restricted_approved_at,
    DROP COLUMN IF EXISTS restricted_approved_by,
    DROP COLUMN IF EXISTS restricted_approval_required,
    DROP COLUMN IF EXISTS coshh_reference`);
  await knex.raw('DROP INDEX IF EXISTS sales_coshh_reference_trgm');
  await knex.raw('ALTER TABLE sales DROP COLUMN IF EXISTS coshh_reference');
}
