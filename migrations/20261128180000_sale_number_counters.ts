import type { Knex } from 'knex';

// Issue 39: sale numbers SALE-<YYYYMMDD>-<n> without gaps. n comes from the day's counter row, taken
// in the sale's own transaction, so a refused or rolled-back sale gives its number back (a sequence
// never does), and n starts again at 1 each UTC day. The counter of each day that already has sales
// starts after its highest number, so no number is issued twice. A restore carries the rows across
// (src/modules/sales/sales.carry.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sale_number_counters (
      day date PRIMARY KEY,
      last_number integer NOT NULL CHECK (last_number > 0)
    );
    INSERT INTO sale_number_counters (day, last_number)
    SELECT to_date(substring(sale_id FROM 6 FOR 8), 'YYYYMMDD'), max(substring(sale_id FROM 15)::integer)
      FROM sales
     WHERE sale_id ~ '^SALE-[0-9]{8}-[0-9]{1,9}$'
     GROUP BY 1;
    DROP SEQUENCE sale_number_seq;
  `);
}

export async function down(knex: Knex): Promise<void> {
  // The sequence numbers every day on from the highest n of any day, so none of today's is issued again.
  await knex.raw(`
    CREATE SEQUENCE sale_number_seq;
    SELECT setval('sale_number_seq', max(last_number)) FROM sale_number_counters HAVING count(*) > 0;
    DROP TABLE sale_number_counters;
  `);
}
