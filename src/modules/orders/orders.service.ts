import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { inTransaction } from '../../db/knex';
import { BadRequest, NotFound } from '../../http/errors';
import { D, money, quantityNumber } from '../../lib/money';
import { findItemsForLines } from '../items/items.lookup';
import { changeStockMany, type StockChange } from '../stock-movements/stock-ledger';
import { sourcesService } from '../sources/sources.service';
import { suppliersService } from '../suppliers/suppliers.service';
import type { AddToInventory, CreateOrder, ParsedData, ReceiveOrder } from './orders.schemas';
import { settingsService } from '../settings/settings.service';
import { itemsService } from '../items/items.service';
import { categoriesService } from '../categories/categories.service';
import { invoicesService } from '../invoices/invoices.service';
import type { ReadInvoice } from '../invoices/invoice-pdf';

export type OrderStatus = 'pending' | 'partially_received' | 'received';

export type OrderRow = {
  id: number;
  order_id: string;
  supplier_id: string;
  status: OrderStatus;
  total_amount: string;
  notes: string | null;
  invoice_number: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  received_at: Date | null;
};

/** An order row as read for the API: with its supplier's name, whether a PDF is attached, its line count. */
export type OrderListRow = OrderRow & { supplier_name: string; has_invoice: boolean; item_count: number };

export type OrderLineRow = {
  id: number;
  order_id: number;
  item_id: number | null;
  name: string;
  sku: string | null;
  quantity: string;
  unit_cost: string;
  received_quantity: string;
};

export type OrderDetail = { order: OrderListRow; lines: OrderLineRow[] };

/** The setting add-to-inventory reads when the request names no category: a number or {categoryId}. */
export const DEFAULT_CATEGORY_SETTING = 'orders.defaultCategoryId';

export function presentOrder(row: OrderListRow) {
  return {
    id: row.id,
    orderId: row.order_id,
    supplierId: row.supplier_id,
    supplier: { id: row.supplier_id, name: row.supplier_name },
    status: row.status,
    totalAmount: row.total_amount,
    notes: row.notes,
    invoiceNumber: row.invoice_number,
    hasInvoice: row.has_invoice,
    itemCount: row.item_count,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    receivedAt: row.received_at ? row.received_at.toISOString() : null,
  };
}

export function presentOrderLine(row: OrderLineRow) {
  return {
    orderItemId: row.id,
    itemId: row.item_id,
    name: row.name,
    sku: row.sku,
    quantity: quantityNumber(row.quantity),
    receivedQuantity: quantityNumber(row.received_quantity),
    outstandingQuantity: quantityNumber(new D(row.quantity).minus(row.received_quantity)),
    unitCost: row.unit_cost,
    lineTotal: money(new D(row.quantity).times(row.unit_cost)),
  };
}

export const presentOrderDetail = ({ order, lines }: OrderDetail) => ({ ...presentOrder(order), items: lines.map(presentOrderLine) });

/** A line to be ordered, after validation: a known item or a free-text name. */
type NewLine = { itemId: number | null; name: string; sku: string | null; quantity: string; unitCost: string };

export type ImportResult = { detail: OrderDetail; supplierCreated: boolean; matchedItems: number; unmatchedItems: number };

const outstanding = (line: OrderLineRow) => new D(line.quantity).minus(line.received_quantity);

export function ordersService(db: Db) {
  const listQuery = () =>
    db('orders as o')
      .join('suppliers as s', 's.id', 'o.supplier_id')
      .select<OrderListRow[]>(
        'o.*',
        's.name as supplier_name',
        db.raw('EXISTS (SELECT 1 FROM order_invoices oi WHERE oi.order_id = o.id) AS has_invoice'),
        db.raw('(SELECT count(*) FROM order_items li WHERE li.order_id = o.id)::int AS item_count'),
      );

  /** Resolves {id} (12 or O1012) to the order's primary key; 404 when there is none. */
  async function resolve(ref: string, trx: Db = db, lock = false): Promise<OrderRow> {
    const query = trx<OrderRow>('orders').where(/^\d+$/.test(ref) ? { id: Number(ref) } : { order_id: ref });
    const row = await (lock ? query.forUpdate() : query).first();
    if (!row) throw NotFound('Order not found');
    return row;
  }

  async function detail(id: number, trx: Db = db): Promise<OrderDetail> {
    const order = await ordersService(trx).listRow(id);
    const lines = await trx<OrderLineRow>('order_items').where({ order_id: id }).orderBy('id');
    return { order, lines };
  }

  /** Inserts an order and its lines; the caller has validated supplier and items. */
  async function insertOrder(
    trx: Knex.Transaction,
    head: { supplierId: string; notes: string | null; invoiceNumber: string | null; createdBy: string | null },
    lines: NewLine[],
  ): Promise<number> {
    const total = lines.reduce((sum, l) => sum.plus(new D(l.quantity).times(l.unitCost)), new D(0));
    const [order] = await trx('orders')
      .insert({
        supplier_id: head.supplierId,
        status: 'pending',
        total_amount: money(total),
        notes: head.notes,
        invoice_number: head.invoiceNumber,
        created_by: head.createdBy,
      })
      .returning('id');
    // The lines' foreign keys lock their items FOR KEY SHARE in line order, which would cross the
    // ascending FOR UPDATE order of the stock ledger (a receipt) and deadlock: take them ascending first.
    const itemIds = [...new Set(lines.map((l) => l.itemId).filter((id): id is number => id !== null))].sort((a, b) => a - b);
    if (itemIds.length > 0) await trx('items').whereIn('id', itemIds).orderBy('id').forKeyShare().select('id');
    await trx('order_items').insert(
      lines.map((l) => ({
        order_id: order.id,
        item_id: l.itemId,
        name: l.name,
        sku: l.sku,
        quantity: l.quantity,
        unit_cost: l.unitCost,
      })),
    );
    return order.id as number;
  }

  /** Items a free-text line names: by sku (case-insensitive) first, then by exact name. */
  async function matchItems(trx: Db, lines: { name: string; sku?: string | null }[]) {
    const skus = [...new Set(lines.map((l) => l.sku?.toLowerCase()).filter((s): s is string => !!s))];
    const names = [...new Set(lines.map((l) => l.name.toLowerCase()))];
    const bySku = new Map<string, { id: number; name: string; sku: string }>();
    const byName = new Map<string, { id: number; name: string; sku: string }>();
    if (skus.length > 0) {
      const rows = await trx('items').whereRaw('lower(sku) = ANY(?)', [skus]).select('id', 'name', 'sku');
      for (const r of rows) bySku.set(r.sku.toLowerCase(), r);
    }
    // Several items may share a name: prefer an active one, then the oldest.
    const rows = await trx('items')
      .whereRaw('lower(name) = ANY(?)', [names])
      .orderBy([{ column: 'is_active', order: 'desc' }, { column: 'id' }])
      .select('id', 'name', 'sku');
    for (const r of rows) if (!byName.has(r.name.toLowerCase())) byName.set(r.name.toLowerCase(), r);
    return (line: { name: string; sku?: string | null }) =>
      (line.sku ? bySku.get(line.sku.toLowerCase()) : undefined) ?? byName.get(line.name.toLowerCase());
  }

  return {
    resolve,

    async listRow(id: number): Promise<OrderListRow> {
      const row = await listQuery().where('o.id', id).first();
      if (!row) throw NotFound('Order not found');
      return row;
    },

    list(filter: { status?: OrderStatus; supplierId?: string; limit: number }): Promise<OrderListRow[]> {
      const query = listQuery().orderBy('o.created_at', 'desc').orderBy('o.id', 'desc').limit(filter.limit);
      if (filter.status) query.where('o.status', filter.status);
      if (filter.supplierId) query.where('o.supplier_id', filter.supplierId);
      return query;
    },

    async get(ref: string): Promise<OrderDetail> {
      return detail((await resolve(ref)).id);
    },

    create(input: CreateOrder, userId: string | null): Promise<OrderDetail> {
      return inTransaction(db, async (trx) => {
        const supplier = await trx('suppliers').where({ id: input.supplierId }).first('id');
        if (!supplier) throw BadRequest(`Supplier '${input.supplierId}' does not exist`);
        const ids = input.items.map((l) => l.itemId).filter((id): id is number => id != null);
        const items = await findItemsForLines(trx, ids);
        const missing = ids.filter((id) => !items.has(id));
        if (missing.length > 0) throw BadRequest(`Item(s) not found: ${[...new Set(missing)].join(', ')}`);
        const lines: NewLine[] = input.items.map((l) => {
          const item = l.itemId != null ? items.get(l.itemId) : undefined;
          return {
            itemId: item?.id ?? null,
            name: l.name ?? item!.name,
            sku: l.sku ?? item?.sku ?? null,
            quantity: l.quantity,
            unitCost: l.unitCost,
          };
        });
        const id = await insertOrder(
          trx,
          { supplierId: input.supplierId, notes: input.notes ?? null, invoiceNumber: input.invoiceNumber ?? null, createdBy: userId },
          lines,
        );
        return detail(id, trx);
      });
    },

    /**
     * A pending order from an invoice (typed in, read from a PDF or a CSV): the supplier is
     * matched by name case-insensitively or created; lines are matched to items by sku or name.
     * An invoice PDF it was read from is stored as the order's invoice, in the same transaction.
     */
    importOrder(data: ParsedData, userId: string | null, pdf?: ReadInvoice): Promise<ImportResult> {
      return inTransaction(db, async (trx) => {
        const suppliers = suppliersService(trx);
        const existing = await suppliers.findByName(data.supplier);
        const supplier = existing ?? (await suppliers.createFromName(data.supplier));
        const match = await matchItems(trx, data.items);
        let matched = 0;
        const lines: NewLine[] = data.items.map((l) => {
          const item = match(l);
          if (item) matched += 1;
          return { itemId: item?.id ?? null, name: l.name, sku: l.sku ?? item?.sku ?? null, quantity: l.quantity, unitCost: l.unitCost };
        });
        const id = await insertOrder(
          trx,
          { supplierId: supplier.id, notes: data.notes ?? null, invoiceNumber: data.invoiceNumber ?? null, createdBy: userId },
          lines,
        );
        if (pdf) await invoicesService(trx).attach(id, pdf, userId);
        return { detail: await detail(id, trx), supplierCreated: !existing, matchedItems: matched, unmatchedItems: lines.length - matched };
      });
    },

    /**
     * Receives goods: one transaction that locks the order, checks every line, puts stock in
     * through the ledger (movement type in, reason naming the order) for lines with an item
     * and addToInventory, records received quantities and sets the status.
     */
    receive(ref: string, input: ReceiveOrder, userId: string | null) {
      return inTransaction(db, async (trx) => {
        const order = await resolve(ref, trx, true);
        if (order.status === 'received') throw BadRequest(`Order ${order.order_id} has already been received`);
        const lines = new Map(
          (await trx<OrderLineRow>('order_items').where({ order_id: order.id }).orderBy('id').forUpdate()).map((l) => [l.id, l]),
        );

        const seen = new Set<number>();
        for (const r of input.receivedItems) {
          const line = lines.get(r.orderItemId);
          if (!line) throw BadRequest(`Order line ${r.orderItemId} does not belong to order ${order.order_id}`);
          if (seen.has(r.orderItemId)) throw BadRequest(`Order line ${r.orderItemId} is listed more than once`);
          seen.add(r.orderItemId);
          const open = outstanding(line);
          if (new D(r.receivedQuantity).gt(open)) {
            throw BadRequest(
              `Cannot receive ${new D(r.receivedQuantity).toString()} of '${line.name}' (line ${line.id}): only ${open.toString()} outstanding`,
            );
          }
        }

        const changes: StockChange[] = input.receivedItems
          .filter((r) => r.addToInventory && lines.get(r.orderItemId)!.item_id !== null)
          .map((r) => ({
            itemId: lines.get(r.orderItemId)!.item_id!,
            type: 'in',
            quantity: r.receivedQuantity,
            reason: `Received on order ${order.order_id}`,
            performedBy: userId,
            reference: { type: 'order', id: order.order_id },
          }));
        // changeStockMany locks every item in ascending id order before changing any.
        const movements = await changeStockMany(trx, changes);

        for (const r of input.receivedItems) {
          const line = lines.get(r.orderItemId)!;
          line.received_quantity = new D(line.received_quantity).plus(r.receivedQuantity).toFixed(2);
          await trx('order_items').where({ id: line.id }).update({ received_quantity: line.received_quantity });
        }
        const complete = [...lines.values()].every((l) => outstanding(l).lte(0));
        await trx('orders')
          .where({ id: order.id })
          .update({
            status: complete ? 'received' : 'partially_received',
            updated_at: trx.fn.now(),
            received_at: complete ? trx.fn.now() : null,
          });
        return { detail: await detail(order.id, trx), movements };
      });
    },

    /**
     * Creates inventory items for received lines that have none: sku from the line when free,
     * otherwise <orderId>-<orderItemId>; category from the request or the setting; price = unit
     * cost; the received quantity goes in through the ledger; the item is linked to the supplier.
     */
    addToInventory(ref: string, input: AddToInventory, userId: string | null) {
      return inTransaction(db, async (trx) => {
        const order = await resolve(ref, trx, true);
        const all = await trx<OrderLineRow>('order_items').where({ order_id: order.id }).orderBy('id').forUpdate();
        const eligible = all.filter((l) => l.item_id === null && new D(l.received_quantity).gt(0));
        let targets = eligible;
        if (input.orderItemIds) {
          const wanted = new Set(input.orderItemIds);
          const bad = [...wanted].filter((id) => !eligible.some((l) => l.id === id));
          if (bad.length > 0) {
            throw BadRequest(`Order line(s) ${bad.join(', ')} of order ${order.order_id} are not received lines without an item`);
          }
          targets = eligible.filter((l) => wanted.has(l.id));
        }
        if (targets.length === 0) return { created: [], detail: await detail(order.id, trx) };

        const categoryId = input.categoryId ?? (await defaultCategoryId(trx));
        if (categoryId === null) {
          throw BadRequest(`No category given: send categoryId or set the setting '${DEFAULT_CATEGORY_SETTING}'`);
        }
        await categoriesService(trx).get(categoryId);

        const sources = sourcesService(trx);
        const created: { orderItemId: number; item: { id: number; name: string; sku: string; categoryId: number } }[] = [];
        for (const line of targets) {
          const sku = await freeSku(trx, line.sku, `${order.order_id}-${line.id}`);
          // Created empty: the received quantity goes in below, as a movement naming the order.
          const item = await itemsService(trx).create(
            {
              name: line.name,
              sku,
              description: `Added to inventory from order ${order.order_id}`,
              categoryId,
              price: line.unit_cost,
              currentStock: '0',
              minimumStock: '0',
            },
            userId,
          );
          await trx('order_items').where({ id: line.id }).update({ item_id: item.id, sku });
          await sources.ensureLink(order.supplier_id, item.id, line.unit_cost, `Added from order ${order.order_id}`);
          created.push({ orderItemId: line.id, item: { id: item.id, name: item.name, sku: item.sku, categoryId: item.category_id } });
        }
        await changeStockMany(
          trx,
          targets.map((line, i) => ({
            itemId: created[i].item.id,
            type: 'in' as const,
            quantity: line.received_quantity,
            reason: `Received on order ${order.order_id} (added to inventory)`,
            performedBy: userId,
            reference: { type: 'order', id: order.order_id },
          })),
        );
        await trx('orders').where({ id: order.id }).update({ updated_at: trx.fn.now() });
        return { created, detail: await detail(order.id, trx) };
      });
    },

    /** The invoice PDF attached to the order; 404 for an unknown order or one without an invoice. */
    async invoicePdf(ref: string) {
      const order = await resolve(ref);
      const invoice = await invoicesService(db).find(order.id);
      if (!invoice) throw NotFound(`No invoice is attached to order ${order.order_id}`);
      return invoice;
    },

    /**
     * Stores the order's invoice PDF (replacing an earlier one); the order takes the invoice's
     * number when it has none.
     */
    attachInvoice(ref: string, pdf: ReadInvoice, userId: string) {
      return inTransaction(db, async (trx) => {
        const order = await resolve(ref, trx, true);
        const stored = await invoicesService(trx).attach(order.id, pdf, userId);
        if (!order.invoice_number && pdf.extracted.invoiceNumber) {
          await trx('orders').where({ id: order.id }).update({ invoice_number: pdf.extracted.invoiceNumber, updated_at: trx.fn.now() });
        }
        return { order, stored };
      });
    },

    /** Orders that include the item, newest first. */
    async itemHistory(itemId: number) {
      if (!(await findItemsForLines(db, [itemId])).has(itemId)) throw NotFound('Item not found');
      return db('order_items as li')
        .join('orders as o', 'o.id', 'li.order_id')
        .join('suppliers as s', 's.id', 'o.supplier_id')
        .where('li.item_id', itemId)
        .orderBy('o.created_at', 'desc')
        .orderBy('o.id', 'desc')
        .orderBy('li.id')
        .select<{ order_id: string; created_at: Date; supplier: string; quantity: string; received_quantity: string; unit_cost: string; status: string }[]>(
          'o.order_id',
          'o.created_at',
          's.name as supplier',
          'li.quantity',
          'li.received_quantity',
          'li.unit_cost',
          'o.status',
        );
    },
  };
}

async function defaultCategoryId(trx: Db): Promise<number | null> {
  const value: unknown = await settingsService(trx).get(DEFAULT_CATEGORY_SETTING);
  const candidate = typeof value === 'object' && value !== null ? (value as { categoryId?: unknown }).categoryId : value;
  const id = typeof candidate === 'string' ? Number(candidate) : candidate;
  return typeof id === 'number' && Number.isInteger(id) && id > 0 ? id : null;
}

/** The preferred sku when no item has it, otherwise the fallback (suffixed until free). */
async function freeSku(trx: Db, preferred: string | null, fallback: string): Promise<string> {
  const candidates = [...(preferred ? [preferred] : []), fallback];
  for (const sku of candidates) {
    if (!(await trx('items').where({ sku }).first('id'))) return sku;
  }
  for (let n = 2; ; n += 1) {
    const sku = `${fallback}-${n}`;
    if (!(await trx('items').where({ sku }).first('id'))) return sku;
  }
}
