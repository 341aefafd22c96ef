import type { Db } from '../../db/knex';
import { containsPattern } from '../../db/like-pattern';
import { preparedRaw } from '../../db/prepared';
import { sql, type Sql } from '../../db/sql';
import type { ReferenceCounters } from '../../db/references';

/** Whether the charge code exists (a note's reference). */
export async function chargeCodeExists(db: Db, code: string): Promise<boolean> {
  return (await db('charge_codes').where({ code }).first('id')) !== undefined;
}

/** The codes containing `term` (case-insensitively, % and _ literal), in code order: a handful of rows. */
export async function chargeCodesContaining(db: Db, term: string): Promise<string[]> {
  const { rows } = await preparedRaw<{ rows: { code: string }[] }>(
    db,
    sql`SELECT code FROM charge_codes WHERE code ILIKE ${containsPattern(term)} ORDER BY code`,
  );
  return rows.map((r) => r.code);
}

/*
 * The charge-codes module's fragments for another module's statement that reads a charge code in
 * the same round trip (a sale taking its code with its locks, the reports' departments, the
 * recharges' cost centres). `alias` is the caller's name for charge_codes.
 */

/** charge_codes as `alias`, joined on the code `code` names: `LEFT JOIN ${chargeCodeByCode('c', sql.raw('s.charge_code'))}`. */
export const chargeCodeByCode = (alias: string, code: Sql): Sql =>
  sql`charge_codes ${sql.ident(alias)} ON ${sql.ident(alias, 'code')} = ${code}`;

/** The cost centre (the reports' department) of the charge code `alias`. */
export const costCentreOf = (alias: string): Sql => sql.ident(alias, 'cost_centre');

/** The codes of a cost centre, as a subquery: `s.charge_code IN ${codesOfCostCentre(centre)}`. */
export const codesOfCostCentre = (costCentre: string): Sql =>
  sql`(SELECT code FROM charge_codes WHERE cost_centre = ${costCentre})`;

/** The categories the charge code `chargeCodeId` may not pay for, as an int[] in id order. */
export const excludedCategoryIdsOf = (chargeCodeId: Sql): Sql =>
  sql`ARRAY(SELECT e.category_id FROM charge_code_exclusions e WHERE e.charge_code_id = ${chargeCodeId} ORDER BY e.category_id)`;

/**
 * The SELECT of a ChargeCodeForCheck (chargecodes.validation.ts) for the code `code` evaluates to
 * (a bound value, sql`${code}`, or a subquery), charge_codes being `alias`. Statements that read
 * other rows in the same round trip (draft save, processing) embed it; processing appends
 * `FOR SHARE OF` the alias so a hold committed first wins and a hold arriving later waits for the sale.
 */
export const chargeCodeForCheckSql = (alias: string, code: Sql): Sql => {
  const cc = (column: string) => sql.ident(alias, column);
  return sql`SELECT ${cc('id')}, ${cc('code')}, ${cc('valid_from')}, ${cc('valid_until')}, ${cc('on_hold')}, ${cc('hold_reason')}, ${cc('pin_hash')},
    ${excludedCategoryIdsOf(cc('id'))} AS excluded_category_ids,
    ARRAY(SELECT a.email FROM charge_code_authorised_users a WHERE a.charge_code_id = ${cc('id')}) AS authorised_emails
  FROM charge_codes ${sql.ident(alias)} WHERE ${cc('code')} = ${code}`;
};

/** Issue 33: the codes whose approver is `email` (stored lower-case), as a subquery: `r.charge_code IN ${codesApprovedBy(email)}`. */
export const codesApprovedBy = (email: string): Sql =>
  sql`(SELECT code FROM charge_codes WHERE approver_email = lower(${email}))`;

/** What a request reads of its charge code: who approves it and over what total (null: none). */
export type ChargeCodeApproval = { code: string; approver_email: string | null; approval_threshold: string | null };

/** The approver and threshold of each of these codes that exists, by code. */
export async function chargeCodeApprovals(db: Db, codes: string[]): Promise<Map<string, ChargeCodeApproval>> {
  if (codes.length === 0) return new Map();
  const rows: ChargeCodeApproval[] = await db('charge_codes')
    .whereIn('code', [...new Set(codes)])
    .select('code', 'approver_email', 'approval_threshold');
  return new Map(rows.map((r) => [r.code, r]));
}

/** The rows of charge codes that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const chargeCodesReferences: ReferenceCounters = {
  users: [
    {
      table: 'charge_codes',
      column: 'authorised_by',
      count: (id) => sql`SELECT count(*) FROM charge_codes WHERE authorised_by = ${id}`,
    },
  ],
  categories: [
    {
      table: 'charge_code_exclusions',
      column: 'category_id',
      count: (id) => sql`SELECT count(*) FROM charge_code_exclusions WHERE category_id = ${id}`,
    },
  ],
};
