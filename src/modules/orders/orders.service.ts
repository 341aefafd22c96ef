import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { sql, toRaw } from '../../db/sql';
import { BadRequest, Conflict, NotFound } from '../../http/errors';
import { D, money } from '../../lib/money';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { readInvoicePdf, type UploadedFile } from '../invoices/invoices.pdf';
import { hasInvoice } from '../invoices/invoices.queries';
import { invoicesService } from '../invoices/invoices.service';
import { findItemsForLines } from '../items/items.queries';
import { itemsService, type ItemOrderHistoryRow } from '../items/items.service';
import { chosenSourcesSql } from '../sources/sources.queries';
import { supplierRefs } from '../suppliers/suppliers.queries';
import { suppliersService } from '../suppliers/suppliers.service';
import type { CreateOrder, OrderStatus } from './orders.schemas';
import { isCancellable } from './orders.policy';

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

/** A line to be ordered, after validation: a known item or a free-text name. */
export type NewLine = { itemId: number | null; name: string; sku: string | null; quantity: string; unitCost: string };

export type NewOrderHead = {
  supplierId: string;
  notes: string | null;
  invoiceNumber: string | null;
  createdBy: string | null;
};

/**
 * Purchase orders: create, list and read them, their invoice PDF, and an item's order history.
 * Receiving lives in orders.receive, imports from an invoice in orders.import.
 */
export function ordersService(db: Db) {
  // The supplier's name is joined in the one statement that reads the orders.
  const listQuery = () =>
    db('orders as o')
      .join(toRaw(db, supplierRefs('s')), 's.supplier_id', 'o.supplier_id')
      .select<OrderListRow[]>(
        'o.*',
        's.supplier_name',
        toRaw(db, sql`${hasInvoice(sql.raw('o.id'))} AS has_invoice`),
        db.raw('(SELECT count(*) FROM order_items li WHERE li.order_id = o.id)::int AS item_count'),
      );

  /** The order {id} names (12 or O1012), locked FOR UPDATE when asked; 404 when there is none. */
  async function resolve(ref: string, opts: { lock?: boolean } = {}): Promise<OrderRow> {
    const query = db<OrderRow>('orders').where(/^\d+$/.test(ref) ? { id: Number(ref) } : { order_id: ref });
    const row = await (opts.lock ? query.forUpdate() : query).first();
    if (!row) throw NotFound('Order not found');
    return row;
  }

  async function listRow(id: number): Promise<OrderListRow> {
    const row = await listQuery().where('o.id', id).first();
    if (!row) throw NotFound('Order not found');
    return row;
  }

  async function detail(id: number): Promise<OrderDetail> {
    const order = await listRow(id);
    const lines = await db<OrderLineRow>('order_items').where({ order_id: id }).orderBy('id');
    return { order, lines };
  }

  /** Inserts an order and its lines in the caller's transaction; the caller has validated supplier and items. */
  async function insert(head: NewOrderHead, lines: NewLine[]): Promise<number> {
    const total = lines.reduce((sum, l) => sum.plus(new D(l.quantity).times(l.unitCost)), new D(0));
    const [order] = await db('orders')
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
    await itemsService(db).lockKeysShared(lines.map((l) => l.itemId).filter((id): id is number => id !== null));
    await db('order_items').insert(
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

  return {
    resolve,
    listRow,
    detail,
    insert,

    /** The order's lines, locked FOR UPDATE (a receipt or add-to-inventory changes them). */
    linesForUpdate(orderPk: number): Promise<OrderLineRow[]> {
      return db<OrderLineRow>('order_items').where({ order_id: orderPk }).orderBy('id').forUpdate();
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
      return transaction(db, async (trx) => {
        if (!(await suppliersService(trx).exists(input.supplierId)))
          throw BadRequest(`Supplier '${input.supplierId}' does not exist`);
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
        const orders = ordersService(trx);
        const id = await orders.insert(
          {
            supplierId: input.supplierId,
            notes: input.notes ?? null,
            invoiceNumber: input.invoiceNumber ?? null,
            createdBy: userId,
          },
          lines,
        );
        return orders.detail(id);
      });
    },

    /**
     * Cancels an order while nothing on it is received (409 otherwise, and for one already
     * cancelled); replenishment counts only pending and partly received orders as on order.
     */
    cancel(ref: string, actor: Actor): Promise<OrderDetail> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const orders = ordersService(trx);
        const order = await orders.resolve(ref, { lock: true });
        if (order.status === 'cancelled') throw Conflict(`Order ${order.order_id} is already cancelled`);
        const lines = await orders.linesForUpdate(order.id);
        if (
          !isCancellable(
            order.status,
            lines.map((line) => line.received_quantity),
          )
        ) {
          throw Conflict('An order with received lines cannot be cancelled');
        }
        await trx('orders').where({ id: order.id }).update({ status: 'cancelled', updated_at: trx.fn.now() });
        return {
          result: await orders.detail(order.id),
          audit: {
            entityType: 'order',
            entityId: order.order_id,
            action: 'cancel',
            before: { status: order.status },
            after: { status: 'cancelled' },
          },
        };
      });
    },

    /**
     * The bytes of the invoice PDF attached to the order, with the order's number; 404 for an
     * unknown order or one without an invoice.
     */
    async invoicePdf(ref: string): Promise<{ orderId: string; data: Buffer }> {
      const order = await resolve(ref);
      const invoice = await invoicesService(db).find(order.id);
      if (!invoice) throw NotFound(`No invoice is attached to order ${order.order_id}`);
      return { orderId: order.order_id, data: invoice.data };
    },

    /**
     * Reads the uploaded file as an invoice PDF (400 when it is none) and stores it as the order's
     * invoice, replacing an earlier one; the order takes the invoice's number when it has none.
     */
    async attachInvoice(ref: string, file: UploadedFile | undefined, userId: string) {
      const pdf = await readInvoicePdf(file, { readBy: userId });
      return transaction(db, async (trx) => {
        const order = await ordersService(trx).resolve(ref, { lock: true });
        const stored = await invoicesService(trx).attach(order.id, pdf, userId);
        if (!order.invoice_number && pdf.extracted.invoiceNumber) {
          await trx('orders')
            .where({ id: order.id })
            .update({ invoice_number: pdf.extracted.invoiceNumber, updated_at: trx.fn.now() });
        }
        return { order, stored, extracted: pdf.extracted };
      });
    },

    /** Orders that include the item, newest first (the supplier's name joined in the same statement). */
    async itemHistory(itemId: number): Promise<ItemOrderHistoryRow[]> {
      if (!(await findItemsForLines(db, [itemId])).has(itemId)) throw NotFound('Item not found');
      return db('order_items as li')
        .join('orders as o', 'o.id', 'li.order_id')
        .join(toRaw(db, supplierRefs('s')), 's.supplier_id', 'o.supplier_id')
        .where('li.item_id', itemId)
        .orderBy('o.created_at', 'desc')
        .orderBy('o.id', 'desc')
        .orderBy('li.id')
        .select<ItemOrderHistoryRow[]>(
          'o.order_id',
          'o.created_at',
          's.supplier_name as supplier',
          'li.quantity',
          'li.received_quantity',
          'li.unit_cost',
          'o.status',
        );
    },

    /**
     * What a new order's line for each item is expected to cost: its preferred source's price (else its
     * cheapest, as replenishment buys), else the unit cost of the last line of it received; an item with
     * neither is absent.
     */
    async expectedCosts(itemIds: number[]): Promise<Map<number, string>> {
      if (itemIds.length === 0) return new Map();
      const [sources, lastPaid] = await Promise.all([
        toRaw<{ rows: { source_item_id: number; source_price: string }[] }>(
          db,
          chosenSourcesSql(sql`SELECT unnest(${itemIds}::int[])`),
        ),
        db('order_items as li')
          .join('orders as o', 'o.id', 'li.order_id')
          .whereIn('li.item_id', itemIds)
          .where('li.received_quantity', '>', 0)
          .distinctOn('li.item_id')
          .orderBy([
            { column: 'li.item_id' },
            { column: 'o.created_at', order: 'desc' },
            { column: 'li.id', order: 'desc' },
          ])
          .select<{ item_id: number; unit_cost: string }[]>('li.item_id', 'li.unit_cost'),
      ]);
      const costs = new Map(lastPaid.map((row) => [row.item_id, row.unit_cost]));
      for (const row of sources.rows) costs.set(row.source_item_id, row.source_price);
      return costs;
    },
  };
}

export type OrdersService = ReturnType<typeof ordersService>;
