import type { Db } from '../../db/knex';
import { chargeCodesService, type ChargeCodeRow } from '../chargecodes/chargecodes.service';
import { isLowStock, itemsService, type ItemReadRow } from '../items/items.service';
import { chargeCodeFigures, type SalesFiguresRow } from '../sales/sales.figures';
import { D } from '../../lib/money';
import { sellableLotStockNow } from '../lots/lots.queries';
import type { Availability } from './catalogue.schemas';

/**
 * The catalogue (issue 33): what every signed-in person, a requester included, may see of the
 * stores. Items come from the items list (active items only, the items search), their stock only
 * as an availability; charge codes are those the person is an authorised user of, with their
 * spending from the sales figures.
 */

/** out: none in stock; low: the one low-stock rule (items.queries.ts lowStock, isLowStock for a read row); else in_stock. */
export function availabilityOf(item: Pick<ItemReadRow, 'is_active' | 'current_stock' | 'minimum_stock'>): Availability {
  if (new D(item.current_stock).lte(0)) return 'out';
  return isLowStock(item) ? 'low' : 'in_stock';
}

/**
 * An item of the catalogue: the items list's row, and what it has for sale (`for_sale`): its stock,
 * or for an item tracked by lot its sellable lots only (issue 42: the rule a sale and a request's
 * short flag apply), which its availability is of.
 */
export type CatalogueRow = ItemReadRow & { for_sale: string };

export type CatalogueFilter = { search?: string; categoryId?: number; page: number; limit: number };

/** A charge code the person may charge, with the figures of its sales so far. */
export type CatalogueChargeCodeRecord = {
  code: ChargeCodeRow;
  spending: Pick<SalesFiguresRow, 'sales' | 'total_amount' | 'refunded_amount' | 'net_amount'>;
};

const NO_SPENDING = { sales: 0, total_amount: '0.00', refunded_amount: '0.00', net_amount: '0.00' };

export function catalogueService(db: Db) {
  return {
    /** One page of active items, by name: the items list itself (never the inactive ones), with what each has for sale. */
    async items(filter: CatalogueFilter): Promise<{ rows: CatalogueRow[]; total: number }> {
      const { rows, total } = await itemsService(db).list({ ...filter, includeInactive: false });
      const lotStock = await sellableLotStockNow(
        db,
        rows.filter((row) => row.tracking === 'lot').map((row) => row.id),
      );
      return {
        rows: rows.map((row) => ({
          ...row,
          for_sale: lotStock.get(row.id)?.sellable.toFixed(2) ?? row.current_stock,
        })),
        total,
      };
    },

    /** The codes `email` is an authorised user of, by code, each with its spending (the sales figures, all time). */
    async chargeCodesOf(email: string): Promise<CatalogueChargeCodeRecord[]> {
      const codes = await chargeCodesService(db).authorisedFor(email);
      if (codes.length === 0) return [];
      const figures = await chargeCodeFigures(db, { chargeCodes: codes.map((c) => c.code) });
      const byCode = new Map(figures.map((f) => [f.key, f]));
      return codes.map((code) => ({ code, spending: byCode.get(code.code) ?? NO_SPENDING }));
    },
  };
}

export type CatalogueService = ReturnType<typeof catalogueService>;
