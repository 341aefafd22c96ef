import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { sql, toRaw } from '../../db/sql';
import { BadRequest } from '../../http/errors';
import { D, money } from '../../lib/money';
import type { Actor } from '../audit/audit.actor';
import { auditTrail, type AuditEntry } from '../audit/audit.service';
import { findItemsForLines, itemsToReplenishSql } from '../items/items.queries';
import { notesService } from '../notes/notes.service';
import { onOrderSql } from '../orders/orders.queries';
import { ordersService, type OrderDetail } from '../orders/orders.service';
import { chosenSourcesSql } from '../sources/sources.queries';
import { supplierRefs } from '../suppliers/suppliers.queries';

/** One item at or below its minimum: its quantities, what is on order, and the source it would be ordered from (null: none). */
export type SuggestionRow = {
  item_id: number;
  name: string;
  sku: string;
  current_stock: string;
  minimum_stock: string;
  reorder_quantity: string | null;
  target: string;
  /** outstanding (ordered - received) on the item's pending and partly received orders */
  on_order: string;
  /** target - current stock - on order, at least 0: what replenishment orders */
  quantity: string;
  source_id: number | null;
  supplier_id: string | null;
  supplier_name: string | null;
  price: string | null;
  preferred: boolean | null;
};

/** A supplier's share of the suggestions: the lines ordered from it. */
export type SupplierSuggestion = { supplierId: string; supplierName: string; lines: SuggestionRow[] };

/**
 * The suggestions: items short of their target after what is on order, grouped by the supplier of
 * their chosen source; items short with no source apart; items at or below their minimum whose
 * shortfall pending orders already cover apart as well.
 */
export type Suggestions = { suppliers: SupplierSuggestion[]; withoutSource: SuggestionRow[]; covered: SuggestionRow[] };

export type ReplenishmentOutcome = { orders: OrderDetail[]; withoutSource: SuggestionRow[] };

/** The advisory lock every POST /replenishment/orders takes: one replenishment run at a time. */
const RUN_LOCK = 'replenishment.orders';

/** The note written on each order replenishment creates. */
export const REPLENISHMENT_NOTE = (lines: number) =>
  `Created from replenishment: ${lines} line(s) for items at or below their minimum stock, to bring them up to their reorder target.`;

/**
 * One statement: the items to replenish (the items module's itemsToReplenishSql: low on stock and
 * below their reorder target), the outstanding quantity of their pending and partly received order
 * lines, and their source: the preferred one, else the cheapest (ties: the oldest link).
 */
function suggestionRows(db: Db, itemIds?: number[]): Promise<SuggestionRow[]> {
  return toRaw<{ rows: SuggestionRow[] }>(
    db,
    sql`WITH low AS (${itemsToReplenishSql(itemIds)}),
        on_order AS (${onOrderSql(sql.raw('SELECT item_id FROM low'))}),
        source AS (${chosenSourcesSql(sql.raw('SELECT item_id FROM low'))})
        SELECT low.item_id, low.item_name AS name, low.item_sku AS sku, low.item_current_stock AS current_stock,
               low.item_minimum_stock AS minimum_stock, low.item_reorder_quantity AS reorder_quantity, low.item_target AS target,
               coalesce(oo.on_order, 0) AS on_order,
               greatest(low.item_target - low.item_current_stock - coalesce(oo.on_order, 0), 0) AS quantity,
               src.source_id, src.source_supplier_id AS supplier_id, sup.supplier_name, src.source_price AS price, src.source_preferred AS preferred
          FROM low
          LEFT JOIN on_order oo ON oo.on_order_item_id = low.item_id
          LEFT JOIN source src ON src.source_item_id = low.item_id
          LEFT JOIN ${supplierRefs('sup')} ON sup.supplier_id = src.source_supplier_id
         ORDER BY lower(sup.supplier_name), src.source_supplier_id, low.item_name, low.item_id`,
  ).then((r) => r.rows);
}

function group(rows: SuggestionRow[]): Suggestions {
  const suppliers = new Map<string, SupplierSuggestion>();
  const withoutSource: SuggestionRow[] = [];
  const covered: SuggestionRow[] = [];
  for (const row of rows) {
    if (!new D(row.quantity).gt(0)) covered.push(row);
    else if (row.supplier_id === null) withoutSource.push(row);
    else {
      const entry = suppliers.get(row.supplier_id) ?? {
        supplierId: row.supplier_id,
        supplierName: row.supplier_name!,
        lines: [],
      };
      entry.lines.push(row);
      suppliers.set(row.supplier_id, entry);
    }
  }
  return { suppliers: [...suppliers.values()], withoutSource, covered };
}

/** A line's amount at its source's price. */
export const lineTotal = (row: SuggestionRow) => money(new D(row.quantity).times(row.price ?? 0));

const TOO_LARGE =
  'A suggested quantity or order total is larger than an order can hold (numeric(14,2)); order these items by hand (POST /api/orders) or pass fewer itemIds';

/** What a run orders: only itemIds when given, and the chosen quantities of some items in place of the suggested ones. */
export type ReplenishmentRequest = { itemIds?: number[]; quantities?: { itemId: number; quantity: string }[] };

/**
 * A run in the caller's transaction under the advisory lock RUN_LOCK: reads the suggestions (of
 * itemIds only when given; 400 when one, or an item of quantities, names no item), creates one
 * pending order per supplier with a line per item at its source's price (in the chosen quantity
 * when given: only items still short are ordered, so a repeat creates nothing), writes the
 * replenishment note and an audit row on each.
 */
async function run(
  trx: Db,
  { itemIds, quantities = [] }: ReplenishmentRequest,
  actor: Actor,
): Promise<ReplenishmentOutcome> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [RUN_LOCK]);
  const named = [...(itemIds ?? []), ...quantities.map((q) => q.itemId)];
  if (named.length > 0) {
    const found = await findItemsForLines(trx, named);
    const missing = [...new Set(named.filter((id) => !found.has(id)))];
    if (missing.length > 0) throw BadRequest(`Item(s) not found: ${missing.join(', ')}`, { missingIds: missing });
  }
  const { suppliers, withoutSource } = group(await suggestionRows(trx, itemIds));
  const chosen = new Map(quantities.map((q) => [q.itemId, q.quantity]));
  for (const line of suppliers.flatMap((s) => s.lines)) line.quantity = chosen.get(line.item_id) ?? line.quantity;
  const orders = ordersService(trx);
  const notes = notesService(trx);
  const details: OrderDetail[] = [];
  const audit: AuditEntry[] = [];
  for (const supplier of suppliers) {
    const id = await orders.insert(
      { supplierId: supplier.supplierId, notes: null, invoiceNumber: null, createdBy: actor.userId },
      supplier.lines.map((l) => ({
        itemId: l.item_id,
        name: l.name,
        sku: l.sku,
        quantity: l.quantity,
        unitCost: l.price!,
      })),
    );
    await notes.add({
      text: REPLENISHMENT_NOTE(supplier.lines.length),
      referenceType: 'order',
      referenceId: String(id),
      createdBy: actor.userId,
    });
    const detail = await orders.detail(id);
    details.push(detail);
    audit.push({
      entityType: 'order',
      entityId: detail.order.order_id,
      action: 'create',
      after: {
        origin: 'replenishment',
        supplier_id: supplier.supplierId,
        total_amount: detail.order.total_amount,
        lines: supplier.lines.map((l) => ({ item_id: l.item_id, quantity: l.quantity, unit_cost: l.price })),
      },
    });
  }
  await auditTrail(trx).recordMany(actor, audit);
  return { orders: details, withoutSource };
}

/** Replenishment (issue 17): what to reorder, and the pending orders that reorder it. */
export function replenishmentService(db: Db) {
  return {
    async suggestions(): Promise<Suggestions> {
      return group(await suggestionRows(db));
    },

    /**
     * One transaction (see run). Because the suggestions are net of what pending orders bring, a
     * repeat while those orders are pending finds nothing short and creates nothing; a concurrent
     * run waits on the lock and then reads the orders the first one committed. A quantity or total
     * beyond numeric(14,2) is a 400 and nothing is created.
     */
    createOrders(request: ReplenishmentRequest, actor: Actor): Promise<ReplenishmentOutcome> {
      return transaction(db, (trx) => run(trx, request, actor)).catch((err: unknown) => {
        if ((err as { code?: string }).code === '22003') throw BadRequest(TOO_LARGE);
        throw err;
      });
    },
  };
}
