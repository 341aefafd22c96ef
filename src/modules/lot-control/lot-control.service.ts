import type { Knex } from 'knex';
import { hasRole } from '../../auth/guards';
import type { Role } from '../../auth/roles';
import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { Conflict, NotFound } from '../../http/errors';
import { D } from '../../lib/money';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { chargeCodeApprovals } from '../chargecodes/chargecodes.queries';
import { queueLotRecallEmail } from '../emails/emails.service';
import { findItemsForLines, itemStock } from '../items/items.queries';
import { expiryWarningDays, lotById, lotsPage, setLotQuarantine, storesToday, type LotRow } from '../lots/lots.queries';
import { ordersByNumber } from '../orders/orders.queries';
import { publishEvent } from '../outbound-webhooks/outbound-webhooks.queries';
import { salesByNumber } from '../sales/sales.queries';
import { changeStock } from '../stock-movements/stock-movements.ledger';
import { stockMovementsService, type LotMovementRow } from '../stock-movements/stock-movements.service';
import type { LotItem, LotsQuery, QuarantineBody, RecallBody, RecallResult, WriteOffBody } from './lot-control.schemas';

/*
 * Issue 42, on the floor: the lots that need a manager (expiring, expired, quarantined), writing a
 * lot off, quarantining and releasing it, tracing who got it, and recalling it. The lots' rows are
 * the lots module's, their quantities change only through the stock ledger, and the trace reads the
 * ledger's share of each lot (stock_movement_lots) with the sales and orders it names.
 */

/** Who manages lots (writes one off, quarantines, releases, traces and recalls it): the access of those API routes and pages. */
export const LOT_MANAGERS = 'manager' satisfies Role;

/** Whether the user manages lots: the lot pages' and the item page's lot actions. */
export const managesLots = (user: Express.User): boolean => hasRole(user, LOT_MANAGERS);

/**
 * What may be done with a lot as it is: written off while it holds stock, quarantined while it is
 * not, released while it is. The service's refusals (409) and the pages' buttons both read it.
 */
export const lotActions = (lot: Pick<LotRow, 'quantity' | 'quarantined_at'>) => ({
  writeOff: new D(lot.quantity).gt(0),
  quarantine: lot.quarantined_at === null,
  release: lot.quarantined_at !== null,
});

/** A lot as the lots list shows it: its row, its item, and the day and warning its status is read on. */
export type LotView = { row: LotRow; item: LotItem; today: string; warningDays: number };

/** What a sale took of a lot, net of refunds, and who it went to. */
export type TracedSale = {
  saleId: number | null;
  saleNumber: string;
  chargeCode: string | null;
  deliveredTo: string | null;
  deliveredToEmail: string | null;
  quantity: string;
  soldAt: Date;
};

export type TracedReceipt = {
  orderId: number | null;
  orderNumber: string;
  supplier: string | null;
  quantity: string;
  receivedAt: Date;
};

export type LotTraceRecord = {
  lot: LotView;
  received: TracedReceipt[];
  sales: TracedSale[];
  movements: LotMovementRow[];
};

/** The lot.recalled event's record: the lot, the message, the sales that took it, how many addresses were emailed. */
export type LotRecallRecord = { lot: LotView; message: string; sales: TracedSale[]; notified: number };

const lotNotFound = () => NotFound('Lot not found');

/** The movements of a lot that a reference of this type made, by reference id: their net share of the lot and the first one's time. */
function byReference(movements: LotMovementRow[], type: string): Map<string, { quantity: D; first: Date }> {
  const byId = new Map<string, { quantity: D; first: Date }>();
  for (const movement of movements) {
    if (movement.reference_type !== type || movement.reference_id === null) continue;
    const seen = byId.get(movement.reference_id);
    if (seen) seen.quantity = seen.quantity.plus(movement.lot_quantity);
    else byId.set(movement.reference_id, { quantity: new D(movement.lot_quantity), first: movement.created_at });
  }
  return byId;
}

export function lotControlService(db: Db) {
  async function view(trx: Db, row: LotRow, day?: { today: string; warningDays: number }): Promise<LotView> {
    const item = (await findItemsForLines(trx, [row.item_id])).get(row.item_id)!;
    return {
      row,
      item: { id: item.id, sku: item.sku, name: item.name },
      ...(day ?? { today: storesToday(), warningDays: await expiryWarningDays(trx) }),
    };
  }

  async function found(trx: Db, id: number, lock = false): Promise<LotView> {
    const row = await lotById(trx, id, { lock });
    if (!row) throw lotNotFound();
    return view(trx, row);
  }

  /** The lot's trace: its receipts, the sales that still hold some of it, and every movement of it. */
  async function traceOf(trx: Db, lot: LotView): Promise<LotTraceRecord> {
    const movements = await stockMovementsService(trx).ofLot(lot.row.id);
    const receipts = [...byReference(movements, 'order')].filter(([, r]) => r.quantity.gt(0));
    const taken = [...byReference(movements, 'sale')].filter(([, s]) => s.quantity.lt(0));
    const orders = await ordersByNumber(
      trx,
      receipts.map(([number]) => number),
    );
    const sales = await salesByNumber(
      trx,
      taken.map(([number]) => number),
    );
    return {
      lot,
      received: receipts.map(([orderNumber, receipt]) => {
        const order = orders.get(orderNumber);
        return {
          orderId: order?.id ?? null,
          orderNumber,
          supplier: order?.supplier_name ?? null,
          quantity: receipt.quantity.toFixed(2),
          receivedAt: receipt.first,
        };
      }),
      sales: taken.map(([saleNumber, share]) => {
        const sale = sales.get(saleNumber);
        return {
          saleId: sale?.id ?? null,
          saleNumber,
          chargeCode: sale?.charge_code ?? null,
          deliveredTo: sale?.delivered_to ?? null,
          deliveredToEmail: sale?.delivered_to_email ?? null,
          quantity: share.quantity.negated().toFixed(2),
          soldAt: sale?.created_at ?? share.first,
        };
      }),
      movements,
    };
  }

  /** Whom a recall emails: each sale's recipient, else its charge code's holder (its approver) where it has one; the sale numbers by address. */
  async function recallAddresses(trx: Db, sales: TracedSale[]): Promise<Map<string, string[]>> {
    const holders = await chargeCodeApprovals(
      trx,
      sales.filter((s) => !s.deliveredToEmail && s.chargeCode).map((s) => s.chargeCode!),
    );
    const addresses = new Map<string, string[]>();
    for (const sale of sales) {
      const address = (sale.deliveredToEmail ?? holders.get(sale.chargeCode ?? '')?.approver_email ?? '')
        .trim()
        .toLowerCase();
      if (!address) continue;
      addresses.set(address, [...(addresses.get(address) ?? []), sale.saleNumber]);
    }
    return addresses;
  }

  return {
    /** GET /api/lots: a page of the lots holding stock that are expiring, expired or quarantined, soonest expiry first. */
    async list(query: LotsQuery): Promise<{ lots: LotView[]; total: number }> {
      const [today, warningDays] = [storesToday(), await expiryWarningDays(db)];
      const { rows, total } = await lotsPage(
        db,
        { status: query.status, itemId: query.itemId, today, warningDays },
        query.page,
        query.limit,
      );
      const items = await findItemsForLines(db, [...new Set(rows.map((row) => row.item_id))]);
      return {
        lots: rows.map((row) => {
          const item = items.get(row.item_id)!;
          return { row, item: { id: item.id, sku: item.sku, name: item.name }, today, warningDays };
        }),
        total,
      };
    },

    /**
     * Empties the lot with one adjustment movement through the ledger, reason "Expired lot <lotNumber>"
     * or the one given; audited. 404 unknown lot, 409 a lot that holds nothing.
     */
    writeOff(id: number, body: WriteOffBody, actor: Actor): Promise<LotView> {
      return transaction(db, { retry: true, audit: auditAs(actor) }, async (trx) => {
        // read unlocked: the ledger locks the item, then its lots, as every stock change does
        const before = await found(trx, id);
        const { row, item } = before;
        if (!lotActions(row).writeOff) throw Conflict(`Lot ${row.lot_number} of ${item.sku} holds no stock`);
        const reason = body.reason ?? `Expired lot ${row.lot_number}`;
        await changeStock(trx, itemStock, {
          itemId: item.id,
          type: 'adjustment',
          quantity: 0,
          reason,
          performedBy: actor.userId,
          lot: { lotNumber: row.lot_number },
        });
        const after = await found(trx, id);
        return {
          result: after,
          audit: {
            entityType: 'lot',
            entityId: id,
            action: 'write_off',
            before: { itemId: item.id, lotNumber: row.lot_number, quantity: row.quantity },
            after: { itemId: item.id, lotNumber: row.lot_number, quantity: after.row.quantity, reason },
          },
        };
      });
    },

    /** Quarantines the lot: no sale takes it until it is released. Audited; 404 unknown lot, 409 quarantined already. */
    quarantine(id: number, body: QuarantineBody, actor: Actor): Promise<LotView> {
      return transaction(db, { retry: true, audit: auditAs(actor) }, async (trx) => {
        const lot = await found(trx, id, true);
        if (!lotActions(lot.row).quarantine)
          throw Conflict(`Lot ${lot.row.lot_number} of ${lot.item.sku} is quarantined already`);
        const row = await setLotQuarantine(trx, id, { reason: body.reason, by: actor.userId });
        return {
          result: { ...lot, row },
          audit: {
            entityType: 'lot',
            entityId: id,
            action: 'quarantine',
            before: { lotNumber: row.lot_number, quarantined: false },
            after: { lotNumber: row.lot_number, quarantined: true, reason: body.reason },
          },
        };
      });
    },

    /** Releases a quarantined lot: sales take it again (unless it is expired). Audited; 404 unknown lot, 409 not quarantined. */
    release(id: number, actor: Actor): Promise<LotView> {
      return transaction(db, { retry: true, audit: auditAs(actor) }, async (trx) => {
        const lot = await found(trx, id, true);
        if (!lotActions(lot.row).release)
          throw Conflict(`Lot ${lot.row.lot_number} of ${lot.item.sku} is not quarantined`);
        const row = await setLotQuarantine(trx, id, null);
        return {
          result: { ...lot, row },
          audit: {
            entityType: 'lot',
            entityId: id,
            action: 'release',
            before: { lotNumber: row.lot_number, quarantined: true, reason: lot.row.quarantine_reason },
            after: { lotNumber: row.lot_number, quarantined: false },
          },
        };
      });
    },

    /** Who got the lot: its receipts, the sales that took it (net of refunds), its movements; 404 unknown lot. */
    async trace(id: number): Promise<LotTraceRecord> {
      return traceOf(db, await found(db, id));
    },

    /**
     * Recalls the lot: quarantines it (if it is not already), publishes lot.recalled, and emails each
     * address the trace has once (a sale's recipient, else its charge code's holder), naming their
     * sales. Audited; 404 unknown lot.
     */
    recall(id: number, body: RecallBody, actor: Actor): Promise<RecallResult> {
      return transaction(db, { retry: true, audit: auditAs(actor) }, async (trx: Knex.Transaction) => {
        const lot = await found(trx, id, true);
        const wasQuarantined = lot.row.quarantined_at !== null;
        if (!wasQuarantined)
          lot.row = await setLotQuarantine(trx, id, { reason: `Recalled: ${body.message}`, by: actor.userId });
        const trace = await traceOf(trx, lot);
        const addresses = await recallAddresses(trx, trace.sales);
        for (const [address, saleNumbers] of addresses) {
          await queueLotRecallEmail(trx, address, {
            message: body.message,
            itemName: lot.item.name,
            sku: lot.item.sku,
            lotNumber: lot.row.lot_number,
            expiresOn: lot.row.expires_on,
            saleNumbers,
          });
        }
        const record: LotRecallRecord = {
          lot,
          message: body.message,
          sales: trace.sales,
          notified: addresses.size,
        };
        await publishEvent(trx, 'lot.recalled', record);
        return {
          result: { quarantined: true as const, notified: addresses.size },
          audit: {
            entityType: 'lot',
            entityId: id,
            action: 'recall',
            before: { lotNumber: lot.row.lot_number, quarantined: wasQuarantined },
            after: {
              lotNumber: lot.row.lot_number,
              quarantined: true,
              message: body.message,
              sales: trace.sales.length,
              notified: addresses.size,
            },
          },
        };
      });
    },
  };
}
