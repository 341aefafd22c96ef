import type { Db } from '../../db/knex';
import { BadRequest } from '../../http/errors';
import { preparedRaw } from '../../db/prepared';
import { sql, type Sql } from '../../db/sql';

/** MM/DD/YYYY in UTC, as the spec's messages show dates. */
export function formatUsDate(date: Date): string {
  const mm = String(date.getUTCMonth() + 1).padStart(2, '0');
  const dd = String(date.getUTCDate()).padStart(2, '0');
  return `${mm}/${dd}/${date.getUTCFullYear()}`;
}

export const missingChargeCodeMessage =
  'This quote is missing a charge code. Please edit the quote and add a charge code before processing.';

export type ChargeCodeCheck = {
  /** categories of the lines the code would pay for (exclusion check) */
  categoryIds: number[];
  /** processing appends the available codes to the unknown-code message */
  processing?: boolean;
  now?: Date;
};

/**
 * What validation reads of a charge code. Dates are Date objects from a plain query and
 * ISO strings when the row arrives as JSON inside a larger statement.
 */
export type ChargeCodeForCheck = {
  id: number;
  code: string;
  valid_from: Date | string;
  valid_until: Date | string;
  on_hold: boolean;
  hold_reason: string | null;
  excluded_category_ids: number[];
};

/**
 * The SELECT of ChargeCodeForCheck for the code `codeExpression` evaluates to (a bound value,
 * sql`${code}`, or a subquery). Statements that read other rows in the same round trip (draft
 * save, processing) embed it; processing appends FOR SHARE OF cc so a hold committed first wins
 * and a hold arriving later waits for the sale.
 */
export const chargeCodeForCheckSql = (codeExpression: Sql) => sql`SELECT cc.id, cc.code, cc.valid_from, cc.valid_until, cc.on_hold, cc.hold_reason,
    ARRAY(SELECT e.category_id FROM charge_code_exclusions e WHERE e.charge_code_id = cc.id ORDER BY e.category_id) AS excluded_category_ids
  FROM charge_codes cc WHERE cc.code = ${codeExpression}`;

/** Codes a user could pick now: within their validity window and not on hold. */
export async function availableChargeCodes(db: Db, now = new Date()): Promise<string[]> {
  return db('charge_codes')
    .where('valid_from', '<=', now)
    .andWhere('valid_until', '>=', now)
    .andWhere('on_hold', false)
    .orderBy('code')
    .pluck('code');
}

/**
 * The one charge code validation (draft save, charge-code change, processing) of a row read
 * with chargeCodeForCheckSql (undefined: no such code): existence, validity window, hold,
 * category exclusions, in that order. Only an unknown code at processing reads the database
 * again, for the list of available codes.
 */
export async function checkChargeCode(
  db: Db,
  row: ChargeCodeForCheck | null | undefined,
  code: string,
  check: ChargeCodeCheck,
): Promise<ChargeCodeForCheck> {
  const now = check.now ?? new Date();
  if (!row) {
    let message = `Invalid charge code: '${code}' does not exist`;
    if (check.processing) {
      const available = await availableChargeCodes(db, now);
      message += `. Available codes: ${available.length > 0 ? available.join(', ') : 'none'}`;
    }
    throw BadRequest(message);
  }
  const [validFrom, validUntil] = [new Date(row.valid_from), new Date(row.valid_until)];
  if (validUntil.getTime() < now.getTime()) {
    throw BadRequest(`Charge code '${row.code}' has expired on ${formatUsDate(validUntil)}.`);
  }
  if (validFrom.getTime() > now.getTime()) {
    throw BadRequest(`Charge code '${row.code}' is not yet valid until ${formatUsDate(validFrom)}.`);
  }
  if (row.on_hold) {
    throw BadRequest(`Charge code '${row.code}' is on hold: ${row.hold_reason ?? ''}`);
  }
  if (check.categoryIds.some((id) => row.excluded_category_ids.includes(id))) {
    throw BadRequest(`Charge code '${row.code}' cannot be used for some items in this quote due to category restrictions.`);
  }
  return row;
}

/** Reads the code and checks it (checkChargeCode) in one call, for paths with nothing else to read. */
export async function validateChargeCode(db: Db, code: string, check: ChargeCodeCheck): Promise<ChargeCodeForCheck> {
  const { rows } = await preparedRaw<{ rows: ChargeCodeForCheck[] }>(db, chargeCodeForCheckSql(sql`${code}`));
  return checkChargeCode(db, rows[0], code, check);
}
