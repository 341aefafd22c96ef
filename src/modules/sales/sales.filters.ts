import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { inDateRange } from '../../lib/date-range';
import { containsPattern } from '../../db/like-pattern';
import { preparedRaw } from '../../db/prepared';
import { sql, toRaw, type Sql } from '../../db/sql';
import { chargeCodesContaining } from '../chargecodes/chargecodes.queries';

export type SalesFilterInput = {
  chargeCode?: string;
  startDate?: string;
  endDate?: string;
  unpaidOnly?: boolean;
  search?: string;
};

/** A filter whose partial charge code was resolved to the codes it matches (every sale's code is a charge code's). */
export type ResolvedSalesFilter = Omit<SalesFilterInput, 'chargeCode'> & { chargeCodes?: string[] };

/**
 * Resolves the partial charge code against the charge codes (a handful of rows), so that the sales
 * are filtered by equality: the planner then reads them through sales(charge_code, created_at, id)
 * in date order instead of testing ILIKE on every sale of the range.
 */
export async function resolveSalesFilter(
  db: Db,
  { chargeCode, ...rest }: SalesFilterInput,
): Promise<ResolvedSalesFilter> {
  if (!chargeCode) return rest;
  return { ...rest, chargeCodes: await chargeCodesContaining(db, chargeCode) };
}

/**
 * The sales filters shared by the list, the reports, the CSV, the figures and the analytics, as
 * the condition on a row `s` (sales, or the rollup's rows for the codes and the paid state), given
 * as typed or resolved. Its text depends only on which filters are set, so it can be prepared.
 */
export function salesWhere(filter: SalesFilterInput | ResolvedSalesFilter): Sql {
  const clauses: Sql[] = [];
  if ('chargeCodes' in filter && filter.chargeCodes) {
    // One code (the usual case) by equality: a prepared statement's generic plan then still reads
    // sales(charge_code, created_at, id) in date order, which it cannot for a list of codes.
    const codes = filter.chargeCodes;
    clauses.push(codes.length === 1 ? sql`s.charge_code = ${codes[0]}` : sql`s.charge_code = ANY(${codes}::text[])`);
  }
  if ('chargeCode' in filter && filter.chargeCode)
    clauses.push(sql`s.charge_code ILIKE ${containsPattern(filter.chargeCode)}`);
  clauses.push(...inDateRange(sql.raw('s.created_at'), filter.startDate, filter.endDate));
  if (filter.unpaidOnly) clauses.push(sql.raw('s.is_paid = false'));
  if (filter.search) clauses.push(saleSearch(filter.search));
  return clauses.length > 0 ? sql.join(clauses, sql.raw(' AND ')) : sql.raw('true');
}

/**
 * The sales a search finds: by sale number from its start, by part of the recipient's name or
 * email or of the COSHH assessment reference (issue 43), or by part of the SKU or name of any of
 * its lines, case-insensitive. Each condition is read through its index (migrations 20261126070000
 * and 20261129042000); the lines' as the ids of the sales they belong to, so the planner can OR
 * the five index reads instead of testing every sale.
 * Only on sales: the rollup cannot tell the sales of a day apart (see sales.figures.ts).
 */
function saleSearch(term: string): Sql {
  const anywhere = containsPattern(term);
  return sql`(lower(s.sale_id) ^@ lower(${term}) OR s.delivered_to ILIKE ${anywhere} OR s.delivered_to_email ILIKE ${anywhere}
    OR s.coshh_reference ILIKE ${anywhere}
    OR s.id = ANY(ARRAY(SELECT si.sale_id FROM sale_items si WHERE (si.item_sku || ' ' || si.item_name) ILIKE ${anywhere})))`;
}

/**
 * A statement over the filtered sales: prepared (planned once per connection), unless it searches:
 * how many sales a term finds decides the plan, and a generic plan, which cannot know, reads every
 * sale in date order testing each.
 */
export const salesRaw = <T>(db: Db, filter: SalesFilterInput | ResolvedSalesFilter, statement: Sql): Knex.Raw<T> =>
  filter.search ? toRaw<T>(db, statement) : preparedRaw<T>(db, statement);

/** salesWhere on a query builder over `sales as s`. */
export function applySalesFilter<Q extends Knex.QueryBuilder>(
  query: Q,
  filter: SalesFilterInput | ResolvedSalesFilter,
): Q {
  const where = salesWhere(filter);
  query.whereRaw(where.text, where.bindings as Knex.RawBinding[]);
  return query;
}
