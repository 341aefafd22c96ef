import type { Knex } from 'knex';

// Issue 33: a researcher's request for items against a charge code, its lines and its history.
// The reference RQ-<YYYYMMDD>-<seq> draws on stock_request_number_seq (carried across a restore
// like every sequence).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE stock_request_number_seq');
  await knex.raw(`CREATE TABLE stock_requests (
    id serial PRIMARY KEY,
    reference text NOT NULL UNIQUE,
    status text NOT NULL CHECK (status IN ('submitted', 'awaiting_approval', 'approved', 'rejected', 'ready', 'collected', 'cancelled')),
    charge_code text NOT NULL,
    requested_by uuid NOT NULL REFERENCES users(id),
    notes text,
    needed_by date,
    subtotal_amount numeric(14,2) NOT NULL,
    vat_amount numeric(14,2) NOT NULL,
    total_amount numeric(14,2) NOT NULL,
    sale_id integer REFERENCES sales(id) ON DELETE SET NULL, -- an archive purge may delete old sales
    sale_number text,
    delivered_to text,
    decided_by uuid REFERENCES users(id),
    decided_at timestamptz,
    fulfilled_by uuid REFERENCES users(id),
    fulfilled_at timestamptz,
    collected_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`);
  // the queue, oldest first by state; a person's own requests
  await knex.raw('CREATE INDEX stock_requests_status ON stock_requests (status, created_at, id)');
  await knex.raw('CREATE INDEX stock_requests_requested_by ON stock_requests (requested_by, created_at, id)');
  await knex.raw('CREATE INDEX stock_requests_charge_code ON stock_requests (charge_code)');
  await knex.raw('CREATE UNIQUE INDEX stock_requests_sale ON stock_requests (sale_id) WHERE sale_id IS NOT NULL');
  await knex.raw(`CREATE TABLE stock_request_items (
    id serial PRIMARY KEY,
    request_id integer NOT NULL REFERENCES stock_requests(id) ON DELETE CASCADE,
    position integer NOT NULL,
    item_id integer REFERENCES items(id) ON DELETE SET NULL,
    item_name text NOT NULL,
    item_sku text NOT NULL,
    quantity numeric(12,2) NOT NULL CHECK (quantity > 0),
    unit_price numeric(12,2) NOT NULL,
    vat_rate numeric(5,4) NOT NULL,
    subtotal numeric(14,2) NOT NULL,
    vat_amount numeric(14,2) NOT NULL,
    total numeric(14,2) NOT NULL,
    short_at_submission boolean NOT NULL DEFAULT false,
    fulfilled_quantity numeric(12,2) CHECK (fulfilled_quantity >= 0 AND fulfilled_quantity <= quantity)
  )`);
  await knex.raw('CREATE INDEX stock_request_items_request ON stock_request_items (request_id, position)');
  await knex.raw('CREATE INDEX stock_request_items_item ON stock_request_items (item_id)');
  await knex.raw(`CREATE TABLE stock_request_history (
    id serial PRIMARY KEY,
    request_id integer NOT NULL REFERENCES stock_requests(id) ON DELETE CASCADE,
    status text NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    by_user uuid REFERENCES users(id) ON DELETE SET NULL,
    comment text
  )`);
  await knex.raw('CREATE INDEX stock_request_history_request ON stock_request_history (request_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS stock_request_history');
  await knex.raw('DROP TABLE IF EXISTS stock_request_items');
  await knex.raw('DROP TABLE IF EXISTS stock_requests');
  await knex.raw('DROP SEQUENCE IF EXISTS stock_request_number_seq');
}
