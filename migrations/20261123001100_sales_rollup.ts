import type { Knex } from 'knex';

// The sales figures (count, total, refunded) per UTC day, charge code and paid state, kept by
// statement-level triggers on sales, so the reports read a few thousand rollup rows instead of
// every sale in their range. A trigger covers every path that writes sales (sale, quote
// processing, paid changes, refunds, a charge code renamed through its ON UPDATE CASCADE, archive
// purges, seeds) in that statement's transaction.
//
// Each key is striped over up to 16 slots, one per database connection (its backend pid mod 16):
// an upserted row stays locked until its transaction commits, so with one row per key every
// concurrent sale on the same code and day would queue behind the others' commits. A connection
// runs one transaction at a time, so sales on different connections write different rows. A key's
// figures are the sum of its slots; one slot alone can go negative (a sale counted in one slot
// and deleted through another), and rows stay when their sum falls to 0: the readers sum the slots
// and leave out keys without sales. Rows are upserted in key order, so writers queue instead of
// deadlocking.
const SLOTS = 16;
const ROLLUP_DAY = `(created_at AT TIME ZONE 'UTC')::date`;

const upsertFrom = (contributions: string) => `
      INSERT INTO sales_daily_totals AS t (day, charge_code, is_paid, slot, sales_count, total_amount, refunded_amount)
      SELECT day, charge_code, is_paid, pg_backend_pid() % ${SLOTS}, sum(sales_count), sum(total_amount), sum(refunded_amount)
        FROM (${contributions}) c
       GROUP BY day, charge_code, is_paid
      HAVING sum(sales_count) <> 0 OR sum(total_amount) <> 0 OR sum(refunded_amount) <> 0
       ORDER BY day, charge_code, is_paid
      ON CONFLICT (day, charge_code, is_paid, slot) DO UPDATE SET
        sales_count = t.sales_count + excluded.sales_count,
        total_amount = t.total_amount + excluded.total_amount,
        refunded_amount = t.refunded_amount + excluded.refunded_amount`;

const contributionsOf = (rows: string, sign: '' | '-') =>
  `SELECT ${ROLLUP_DAY} AS day, charge_code, is_paid, ${sign}1 AS sales_count, ${sign}total_amount AS total_amount, ${sign}refunded_amount AS refunded_amount FROM ${rows}`;

// An update moves a sale's contribution only when a rolled-up column changed (a recipient or a status does not).
const changed = (side: 'o' | 'n') => `(SELECT ${side}.* FROM old_rows o JOIN new_rows n ON n.id = o.id
                  WHERE (o.created_at, o.charge_code, o.is_paid, o.total_amount, o.refunded_amount)
                        IS DISTINCT FROM (n.created_at, n.charge_code, n.is_paid, n.total_amount, n.refunded_amount)) ${side}`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sales_daily_totals (
      day date NOT NULL,
      charge_code text NOT NULL,
      is_paid boolean NOT NULL,
      slot smallint NOT NULL,
      sales_count bigint NOT NULL,
      total_amount numeric NOT NULL,
      refunded_amount numeric NOT NULL,
      PRIMARY KEY (day, charge_code, is_paid, slot)
    )`);
  await knex.raw(`
    CREATE FUNCTION sales_daily_totals_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${upsertFrom(contributionsOf('new_rows', ''))};
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION sales_daily_totals_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${upsertFrom(contributionsOf('old_rows', '-'))};
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION sales_daily_totals_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${upsertFrom(`${contributionsOf(changed('o'), '-')} UNION ALL ${contributionsOf(changed('n'), '')}`)};
      RETURN NULL;
    END $$`);
  // TRUNCATE fires no DELETE trigger: the rollup goes with the rows it sums.
  await knex.raw(`
    CREATE FUNCTION sales_daily_totals_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM sales_daily_totals;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER sales_daily_totals_insert AFTER INSERT ON sales REFERENCING NEW TABLE AS new_rows
                  FOR EACH STATEMENT EXECUTE FUNCTION sales_daily_totals_after_insert()`);
  await knex.raw(`CREATE TRIGGER sales_daily_totals_delete AFTER DELETE ON sales REFERENCING OLD TABLE AS old_rows
                  FOR EACH STATEMENT EXECUTE FUNCTION sales_daily_totals_after_delete()`);
  await knex.raw(`CREATE TRIGGER sales_daily_totals_update AFTER UPDATE ON sales REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
                  FOR EACH STATEMENT EXECUTE FUNCTION sales_daily_totals_after_update()`);
  await knex.raw(
    `CREATE TRIGGER sales_daily_totals_truncate AFTER TRUNCATE ON sales FOR EACH STATEMENT EXECUTE FUNCTION sales_daily_totals_after_truncate()`,
  );
  await knex.raw(`
    INSERT INTO sales_daily_totals (day, charge_code, is_paid, slot, sales_count, total_amount, refunded_amount)
    SELECT ${ROLLUP_DAY}, charge_code, is_paid, 0, count(*), sum(total_amount), sum(refunded_amount) FROM sales GROUP BY 1, 2, 3`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER sales_daily_totals_truncate ON sales');
  await knex.raw('DROP TRIGGER sales_daily_totals_update ON sales');
  await knex.raw('DROP TRIGGER sales_daily_totals_delete ON sales');
  await knex.raw('DROP TRIGGER sales_daily_totals_insert ON sales');
  await knex.raw(
    'DROP FUNCTION sales_daily_totals_after_truncate(), sales_daily_totals_after_update(), sales_daily_totals_after_delete(), sales_daily_totals_after_insert()',
  );
  await knex.raw('DROP TABLE sales_daily_totals');
}
