import type { Knex } from 'knex';

// Issue 34: the dashboard's figures kept current by the writes that move them, so no request
// reads the whole catalogue.
//
// - item_stock_figures: per category, over active items, how many are low on stock (the one
//   rule, items.queries.ts lowStock: is_active AND current_stock <= minimum_stock), how many of
//   those are out of stock (current_stock = 0), and the stock value sum(price * current_stock).
//   The rule is written as lowStock writes it, current_stock - minimum_stock <= 0 (see there why).
//   The active item count per category is item_counts' (migration 20261121002001).
// - item_count_days: active items by the UTC day they were last counted by a posted stocktake
//   ('-infinity': never counted), so "due for a count" (not counted in the last N days) is a sum
//   over a few day rows plus the items of the cut-off's own day.
//
// Both are kept by statement-level triggers on items, in the transaction of the change (a sale,
// a refund, a receipt, an adjustment, a bulk update, an import, a delete, a stocktake posted, a
// restore's migrations). Every stock change moves the stock value, so, as the sales rollup does,
// each key is striped over up to 16 slots, one per database connection (its backend pid mod 16):
// concurrent sales of items of one category write different rows instead of queueing behind each
// other's commits. A key's figure is the sum of its slots (one slot alone can go negative); rows
// are upserted in key order, so writers queue instead of deadlocking.
//
// The low-stock list reads the partial index items_low_stock, which holds only the items the
// rule selects: its predicate is the rule's expression, written the same way (a test compares
// them as PostgreSQL reads them). items_shortfall_stats gives the planner the distribution of
// current_stock - minimum_stock, so it estimates the low items as few, not a third of the
// catalogue (its default for a comparison of two columns). The cycle-count list reads items_due_for_count in its order
// (highest stock value first) and stops at its limit; the cut-off day's items come from
// items_active_last_counted.
const SLOTS = 16;
const LOW = 'is_active AND current_stock - minimum_stock <= 0';
const COUNT_DAY = `coalesce((last_counted_at AT TIME ZONE 'UTC')::date, '-infinity'::date)`;

const figuresOf = (rows: string, sign: '' | '-') =>
  `SELECT category_id,
          ${sign}count(*) FILTER (WHERE ${LOW}) AS low_stock,
          ${sign}count(*) FILTER (WHERE ${LOW} AND current_stock = 0) AS out_of_stock,
          ${sign}coalesce(sum(price * current_stock) FILTER (WHERE is_active), 0) AS stock_value
     FROM ${rows} GROUP BY category_id`;

const upsertFigures = (contributions: string) => `
      INSERT INTO item_stock_figures AS f (category_id, slot, low_stock, out_of_stock, stock_value)
      SELECT category_id, pg_backend_pid() % ${SLOTS}, sum(low_stock), sum(out_of_stock), sum(stock_value)
        FROM (${contributions}) c
       GROUP BY category_id
      HAVING sum(low_stock) <> 0 OR sum(out_of_stock) <> 0 OR sum(stock_value) <> 0
       ORDER BY category_id
      ON CONFLICT (category_id, slot) DO UPDATE SET
        low_stock = f.low_stock + excluded.low_stock,
        out_of_stock = f.out_of_stock + excluded.out_of_stock,
        stock_value = f.stock_value + excluded.stock_value`;

const daysOf = (rows: string, sign: '' | '-') =>
  `SELECT ${COUNT_DAY} AS day, ${sign}count(*) AS items FROM ${rows} WHERE is_active GROUP BY 1`;

const upsertDays = (contributions: string) => `
      INSERT INTO item_count_days AS d (day, slot, items)
      SELECT day, pg_backend_pid() % ${SLOTS}, sum(items)
        FROM (${contributions}) c
       GROUP BY day
      HAVING sum(items) <> 0
       ORDER BY day
      ON CONFLICT (day, slot) DO UPDATE SET items = d.items + excluded.items`;

// An update moves an item's contribution only when a column the figures read changed (a name or
// a description does not).
const changed = (side: 'o' | 'n', columns: string) => `(SELECT ${side}.* FROM old_rows o JOIN new_rows n ON n.id = o.id
                  WHERE (${columns.replace(/\w+/g, (c) => `o.${c}`)}) IS DISTINCT FROM (${columns.replace(/\w+/g, (c) => `n.${c}`)})) ${side}`;
const FIGURE_COLUMNS = 'is_active, category_id, current_stock, minimum_stock, price';
const DAY_COLUMNS = 'is_active, last_counted_at';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE item_stock_figures (
      category_id integer NOT NULL,
      slot smallint NOT NULL,
      low_stock bigint NOT NULL,
      out_of_stock bigint NOT NULL,
      stock_value numeric NOT NULL,
      PRIMARY KEY (category_id, slot)
    )`);
  await knex.raw(`
    CREATE TABLE item_count_days (
      day date NOT NULL,
      slot smallint NOT NULL,
      items bigint NOT NULL,
      PRIMARY KEY (day, slot)
    )`);
  await knex.raw(`
    CREATE FUNCTION item_stock_figures_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${upsertFigures(figuresOf('new_rows', ''))};
      ${upsertDays(daysOf('new_rows', ''))};
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION item_stock_figures_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${upsertFigures(figuresOf('old_rows', '-'))};
      ${upsertDays(daysOf('old_rows', '-'))};
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION item_stock_figures_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${upsertFigures(`${figuresOf(changed('o', FIGURE_COLUMNS), '-')} UNION ALL ${figuresOf(changed('n', FIGURE_COLUMNS), '')}`)};
      ${upsertDays(`${daysOf(changed('o', DAY_COLUMNS), '-')} UNION ALL ${daysOf(changed('n', DAY_COLUMNS), '')}`)};
      RETURN NULL;
    END $$`);
  // TRUNCATE fires no DELETE trigger: the figures go with the rows they sum.
  await knex.raw(`
    CREATE FUNCTION item_stock_figures_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM item_stock_figures;
      DELETE FROM item_count_days;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER items_stock_figures_insert AFTER INSERT ON items REFERENCING NEW TABLE AS new_rows
                  FOR EACH STATEMENT EXECUTE FUNCTION item_stock_figures_after_insert()`);
  await knex.raw(`CREATE TRIGGER items_stock_figures_delete AFTER DELETE ON items REFERENCING OLD TABLE AS old_rows
                  FOR EACH STATEMENT EXECUTE FUNCTION item_stock_figures_after_delete()`);
  await knex.raw(`CREATE TRIGGER items_stock_figures_update AFTER UPDATE ON items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
                  FOR EACH STATEMENT EXECUTE FUNCTION item_stock_figures_after_update()`);
  await knex.raw(
    `CREATE TRIGGER items_stock_figures_truncate AFTER TRUNCATE ON items FOR EACH STATEMENT EXECUTE FUNCTION item_stock_figures_after_truncate()`,
  );
  await knex.raw(`
    INSERT INTO item_stock_figures (category_id, slot, low_stock, out_of_stock, stock_value)
    SELECT category_id, 0, low_stock, out_of_stock, stock_value FROM (${figuresOf('items', '')}) f`);
  await knex.raw(`INSERT INTO item_count_days (day, slot, items) SELECT day, 0, items FROM (${daysOf('items', '')}) d`);

  await knex.raw(`CREATE INDEX items_low_stock ON items ((current_stock - minimum_stock), name, id) WHERE ${LOW}`);
  await knex.raw(
    `CREATE INDEX items_due_for_count ON items ((price * current_stock) DESC, last_counted_at ASC NULLS FIRST, name, id) WHERE is_active`,
  );
  await knex.raw('CREATE INDEX items_active_last_counted ON items (last_counted_at) WHERE is_active');
  await knex.raw('CREATE STATISTICS items_shortfall_stats ON (current_stock - minimum_stock) FROM items');
  await knex.raw('ANALYZE items');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP STATISTICS items_shortfall_stats');
  await knex.raw('DROP INDEX items_active_last_counted');
  await knex.raw('DROP INDEX items_due_for_count');
  await knex.raw('DROP INDEX items_low_stock');
  await knex.raw('DROP TRIGGER items_stock_figures_truncate ON items');
  await knex.raw('DROP TRIGGER items_stock_figures_update ON items');
  await knex.raw('DROP TRIGGER items_stock_figures_delete ON items');
  await knex.raw('DROP TRIGGER items_stock_figures_insert ON items');
  await knex.raw(
    'DROP FUNCTION item_stock_figures_after_truncate(), item_stock_figures_after_update(), item_stock_figures_after_delete(), item_stock_figures_after_insert()',
  );
  await knex.raw('DROP TABLE item_count_days');
  await knex.raw('DROP TABLE item_stock_figures');
}
