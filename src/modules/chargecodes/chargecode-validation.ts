import type { Db } from '../../db/knex';
import { BadRequest } from '../../http/errors';
import { preparedRaw } from '../../db/prepared';
import type { ChargeCodeRow } from './chargecodes.service';

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
  /** inside a processing transaction: lock the row FOR SHARE so a concurrent hold waits for us, or wins if first */
  lock?: boolean;
  now?: Date;
};

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
 * The one charge code validation (draft save, charge-code change, processing):
 * existence, validity window, hold, category exclusions, in that order.
 */
export async function validateChargeCode(db: Db, code: string, check: ChargeCodeCheck): Promise<ChargeCodeRow> {
  const now = check.now ?? new Date();
  const categoryIds = [...new Set(check.categoryIds)];
  // One round trip (a prepared statement of fixed text): the code row and whether any of the categories is excluded from it.
  const { rows } = await preparedRaw<{ rows: (ChargeCodeRow & { excluded: boolean })[] }>(
    db,
    `SELECT cc.*, EXISTS (
       SELECT 1 FROM charge_code_exclusions e WHERE e.charge_code_id = cc.id AND e.category_id = ANY(?::int[])
     ) AS excluded
       FROM charge_codes cc WHERE cc.code = ?${check.lock ? ' FOR SHARE OF cc' : ''}`,
    [categoryIds, code],
  );
  const row = rows[0];
  if (!row) {
    let message = `Invalid charge code: '${code}' does not exist`;
    if (check.processing) {
      const available = await availableChargeCodes(db, now);
      message += `. Available codes: ${available.length > 0 ? available.join(', ') : 'none'}`;
    }
    throw BadRequest(message);
  }
  if (row.valid_until.getTime() < now.getTime()) {
    throw BadRequest(`Charge code '${row.code}' has expired on ${formatUsDate(row.valid_until)}.`);
  }
  if (row.valid_from.getTime() > now.getTime()) {
    throw BadRequest(`Charge code '${row.code}' is not yet valid until ${formatUsDate(row.valid_from)}.`);
  }
  if (row.on_hold) {
    throw BadRequest(`Charge code '${row.code}' is on hold: ${row.hold_reason ?? ''}`);
  }
  if (row.excluded) {
    throw BadRequest(`Charge code '${row.code}' cannot be used for some items in this quote due to category restrictions.`);
  }
  return row;
}
