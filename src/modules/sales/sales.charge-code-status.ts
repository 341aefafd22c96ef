import type { Db } from '../../db/knex';
import { HttpError } from '../../http/errors';
import { chargeCodesService, type ChargeCodeRow, type ExcludedCategoryRow } from '../chargecodes/chargecodes.service';
import { validateChargeCode } from '../chargecodes/chargecodes.validation';
import { chargeCodeFigures } from './sales.figures';

/** What the sales on one charge code come to: how many, their totals with VAT as recorded, what was refunded of them, and the rest; decimal strings. */
export type ChargeCodeSpent = { count: number; total: string; refunds: string; net: string };

export type ChargeCodeStatusRecord = {
  code: ChargeCodeRow;
  excludedCategories: ExcludedCategoryRow[];
  /** why a sale on the code would be refused now (the counter's own message), null when it is usable */
  refusal: string | null;
  /** whole days left when it expires within the expiring-soon window, else null */
  daysUntilExpiry: number | null;
  spent: ChargeCodeSpent;
};

/**
 * A charge code as the counter sees it: whether a sale on it would be refused now, by the sale's own
 * validation (validity window, hold), when it expires, what it excludes, and what has been spent on
 * it (the sales figures). 404 for an unknown code.
 */
export async function chargeCodeStatus(db: Db, code: string, now = new Date()): Promise<ChargeCodeStatusRecord> {
  const codes = chargeCodesService(db);
  const row = await codes.find(code);
  const refusal = await validateChargeCode(db, row.code, { categoryIds: [], now }).then(
    () => null,
    (err: unknown) => {
      if (err instanceof HttpError && err.status === 400) return err.message;
      throw err;
    },
  );
  const expiring = (await codes.expiringSoon(now)).find((e) => e.code.id === row.id);
  const [figures] = await chargeCodeFigures(db, { chargeCodes: [row.code] });
  return {
    code: row,
    excludedCategories: await codes.listExclusions(row.code),
    refusal,
    daysUntilExpiry: expiring?.daysUntilExpiry ?? null,
    spent: figures
      ? { count: figures.sales, total: figures.total_amount, refunds: figures.refunded_amount, net: figures.net_amount }
      : { count: 0, total: '0', refunds: '0', net: '0' },
  };
}
