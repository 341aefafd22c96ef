import type { Knex } from 'knex';

// Issue 42: lots and expiry. An item tracked by lot keeps its stock in stock_lots (current_stock is
// their sum); each movement of such an item records the lots it touched in stock_movement_lots,
// with the lot's number and expiry copied, so the history outlives the lot as movements outlive items.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE items
    ADD COLUMN tracking text NOT NULL DEFAULT 'none' CONSTRAINT items_tracking_check CHECK (tracking IN ('none', 'lot')),
    ADD COLUMN shelf_life_days integer CONSTRAINT items_shelf_life_days_check CHECK (shelf_life_days BETWEEN 1 AND 36500)`);
  await knex.raw(`CREATE TABLE stock_lots (
    id serial PRIMARY KEY,
    item_id integer NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    lot_number text NOT NULL,
    expires_on date,
    quantity numeric(14, 2) NOT NULL DEFAULT 0 CONSTRAINT stock_lots_quantity_check CHECK (quantity >= 0),
    received_at timestamptz NOT NULL DEFAULT now(),
    order_id integer REFERENCES orders (id) ON DELETE SET NULL,
    supplier_id text REFERENCES suppliers (id) ON DELETE SET NULL,
    quarantined_at timestamptz,
    quarantine_reason text,
    quarantined_by uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT stock_lots_item_lot_number UNIQUE (item_id, lot_number)
  )`);
  // first-expiry-first-out within an item: earliest expiry, no expiry last, then by receipt
  await knex.raw('CREATE INDEX stock_lots_fefo ON stock_lots (item_id, expires_on NULLS LAST, received_at, id)');
  // the lots list and the dashboard's figures read only lots holding stock, by expiry
  await knex.raw('CREATE INDEX stock_lots_holding_by_expiry ON stock_lots (expires_on, id) WHERE quantity > 0');
  await knex.raw('CREATE INDEX stock_lots_order ON stock_lots (order_id) WHERE order_id IS NOT NULL');
  await knex.raw('CREATE INDEX stock_lots_supplier ON stock_lots (supplier_id) WHERE supplier_id IS NOT NULL');
  await knex.raw(
    'CREATE INDEX stock_lots_quarantined_by ON stock_lots (quarantined_by) WHERE quarantined_by IS NOT NULL',
  );
  await knex.raw(`CREATE TABLE stock_movement_lots (
    movement_id integer NOT NULL REFERENCES stock_movements (id) ON DELETE CASCADE,
    lot_id integer REFERENCES stock_lots (id) ON DELETE SET NULL,
    lot_number text NOT NULL,
    expires_on date,
    quantity numeric(14, 2) NOT NULL,
    PRIMARY KEY (movement_id, lot_number)
  )`);
  await knex.raw('CREATE INDEX stock_movement_lots_lot ON stock_movement_lots (lot_id, movement_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS stock_movement_lots');
  await knex.raw('DROP TABLE IF EXISTS stock_lots');
  await knex.raw('ALTER TABLE items DROP COLUMN IF EXISTS tracking, DROP COLUMN IF EXISTS shelf_life_days');
}
