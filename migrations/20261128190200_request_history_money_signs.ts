import type { Knex } from 'knex';

// Issue 39: money in a request's history carries its currency sign, as everywhere else. The one
// comment the service writes with amounts (a request over its code's approval threshold) now says
// "Total £84.72 is over the code's approval threshold £50.00"; the comments written before are
// rewritten to match.
const AMOUNT = `'FM999,999,999,990.00'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE stock_request_history h
       SET comment = 'Total £' || to_char(x.m[1]::numeric, ${AMOUNT}) ||
                     ' is over the code''s approval threshold £' || to_char(x.m[2]::numeric, ${AMOUNT})
      FROM (SELECT id, regexp_match(comment, '^Total ([0-9]+\\.[0-9]+) is over the code''s approval threshold ([0-9]+\\.[0-9]+)$') AS m
              FROM stock_request_history WHERE status = 'awaiting_approval') x
     WHERE x.id = h.id AND x.m IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE stock_request_history
       SET comment = replace(replace(comment, '£', ''), ',', '')
     WHERE status = 'awaiting_approval' AND comment LIKE 'Total £% is over the code''s approval threshold £%'`);
}
