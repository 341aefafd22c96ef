import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { BadRequest, Conflict, HttpError, Unprocessable } from '../../http/errors';
import { UnknownItemCode } from '../items/items.unknown-code';
import { D, money, type DecimalInput } from '../../lib/money';
import { categoriesService } from '../categories/categories.service';
import { queueOrderReceivedEmail } from '../emails/emails.service';
import { itemIdForCode, itemStock, lotTrackedItemIds } from '../items/items.queries';
import { scannedLot } from '../../lib/barcodes';
import { itemsService, type ItemReadRow } from '../items/items.service';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { sourcesService } from '../sources/sources.service';
import { publishEvent } from '../outbound-webhooks/outbound-webhooks.queries';
import { lotNumberRequiredMessage, notTrackedByLotMessage } from '../lots/lots.picking';
import { storesToday } from '../lots/lots.queries';
import {
  changeStockMany,
  writeStockChanges,
  type MovementRow,
  type StockChange,
} from '../stock-movements/stock-movements.ledger';
import type { AddToInventory, ReceiveOrder } from './orders.schemas';
import { ordersService, type OrderDetail, type OrderLineRow } from './orders.service';
import { isReceivable } from './orders.policy';

/** The setting add-to-inventory reads when the request names no category: a number or {categoryId}. */
export const DEFAULT_CATEGORY_SETTING = 'orders.defaultCategoryId';

/** The setting whose markup on unit cost proposes a new item's sale price. */
export const DEFAULT_MARKUP_SETTING = 'purchasing.defaultMarkup';

/** The sale price a markup proposes for a unit cost: cost x (1 + percent / 100), to the penny. */
export const markedUpPrice = (unitCost: DecimalInput, percent: DecimalInput): string =>
  money(new D(unitCost).times(new D(percent).div(100).plus(1)));

/** The default markup in percent; unset, 0 (the price proposed is the cost). */
export async function defaultMarkupPercent(db: Db): Promise<string> {
  const value = KNOWN_SETTINGS[DEFAULT_MARKUP_SETTING].safeParse(await settingsService(db).get(DEFAULT_MARKUP_SETTING));
  return value.success ? String(value.data.percent) : '0';
}

type ReceivedLine = ReceiveOrder['receivedItems'][number];

const LOTS_ONLY_INTO_STOCK = 'only a line of an item, received into inventory, takes lots';

const NEW_ITEM_ONLY = 'only a line without an item, received into inventory, becomes a new item';

const lineFieldError = (index: number, field: string, message: string) =>
  BadRequest('Validation failed', { errors: [{ field: `receivedItems.${index}.${field}`, message }] });

/**
 * The received lines that become new items (those given a SKU, price or category), checked: each
 * is a line without an item received into inventory, and names its SKU.
 */
function newItemRequests(received: ReceivedLine[], lines: Map<number, OrderLineRow>) {
  return received.flatMap((r, index) => {
    const given = (['sku', 'price', 'categoryId'] as const).find((field) => r[field] !== undefined);
    if (!given) return [];
    if (lines.get(r.orderItemId)!.item_id !== null || !r.addToInventory)
      throw lineFieldError(index, given, NEW_ITEM_ONLY);
    if (r.sku === undefined) throw lineFieldError(index, 'sku', 'is required to make the line a new item');
    return [{ index, received: r, sku: r.sku }];
  });
}

export type ReceiveOutcome = { detail: OrderDetail; movements: MovementRow[] };

/** The items add-to-inventory created, each with the order line it now belongs to. */
export type AddToInventoryOutcome = { created: { orderItemId: number; item: ItemReadRow }[]; detail: OrderDetail };

const outstanding = (line: OrderLineRow) => new D(line.quantity).minus(line.received_quantity);

/** Goods arriving against an order: receiving lines, and creating items for lines that have none. */
/** What a code scanned on an order's receive form names: its item and that item's lines still to receive. */
export type ScannedLines = {
  code: string;
  itemId: number;
  lines: OrderLineRow[];
  /** the item is tracked by lot (issue 42) */
  tracked: boolean;
  /** the lot and expiry a GS1 scan carries, null when it carries no lot */
  lot: { lotNumber: string; expiresOn: string | null } | null;
};

export function orderReceiptService(db: Db) {
  return {
    /**
     * Receiving by scan: the open lines of the item a scanned code names, found by the one code
     * lookup (itemIdForCode). 400 no code, 409 an order that is not open, 404 no such item, 422 an
     * item not on the order or received in full.
     */
    async openLinesForCode(ref: string, rawCode: string): Promise<ScannedLines> {
      const { order, lines } = await ordersService(db).get(ref);
      const code = rawCode.trim();
      if (code === '') throw BadRequest('Scan or type a code');
      if (!isReceivable(order.status))
        throw Conflict(
          order.status === 'received'
            ? `Order ${order.order_id} has already been received`
            : `Order ${order.order_id} is cancelled`,
        );
      const itemId = await itemIdForCode(db, code);
      if (itemId === undefined) throw new UnknownItemCode(code);
      const ofItem = lines.filter((line) => line.item_id === itemId);
      if (ofItem.length === 0) throw Unprocessable(`'${code}' is not on this order`);
      const open = ofItem.filter((line) => outstanding(line).gt(0));
      if (open.length === 0) throw Unprocessable(`${ofItem[0].name} is already received in full on this order`);
      const tracked = (await lotTrackedItemIds(db, [itemId])).has(itemId);
      return { code, itemId, lines: open, tracked, lot: scannedLot(code) ?? null };
    },

    /**
     * Receives goods: one transaction that locks the order, checks every line, puts stock in
     * through the ledger (movement type in, reason naming the order) for lines with an item
     * and addToInventory, records received quantities and sets the status.
     */
    receive(ref: string, input: ReceiveOrder, actor: Actor): Promise<ReceiveOutcome> {
      const userId = actor.userId;
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const orders = ordersService(trx);
        const order = await orders.resolve(ref, { lock: true });
        if (!isReceivable(order.status))
          throw BadRequest(
            order.status === 'received'
              ? `Order ${order.order_id} has already been received`
              : `Order ${order.order_id} has been cancelled`,
          );
        const lines = new Map((await orders.linesForUpdate(order.id)).map((l) => [l.id, l]));

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

        const arrivedEarlier = new Map<number, string>();
        for (const { index, received, sku } of newItemRequests(input.receivedItems, lines)) {
          const line = lines.get(received.orderItemId)!;
          const categoryId = received.categoryId ?? (await defaultCategoryId(trx));
          if (categoryId === null) {
            throw lineFieldError(
              index,
              'categoryId',
              `is required: send categoryId or set the setting '${DEFAULT_CATEGORY_SETTING}'`,
            );
          }
          const price = received.price ?? markedUpPrice(line.unit_cost, await defaultMarkupPercent(trx));
          const item = await createItemForLine(trx, actor, {
            order,
            line,
            values: { sku, price, categoryId },
            fieldPath: `receivedItems.${index}`,
          });
          line.item_id = item.id;
          // what arrived earlier on the line, recorded without an item, is in the stores too: it goes into stock with this receipt
          arrivedEarlier.set(line.id, line.received_quantity);
        }

        const stocked = input.receivedItems.flatMap((received, index) => {
          const itemId = lines.get(received.orderItemId)!.item_id;
          if (received.addToInventory && itemId !== null) return [{ received, index, itemId }];
          if (received.lots) throw lineFieldError(index, 'lots', LOTS_ONLY_INTO_STOCK);
          return [];
        });
        // The items locked in ascending id order before any changes, so a line's lots follow its item's tracking as it is now.
        const locked =
          stocked.length > 0
            ? await itemStock.lock(
                trx,
                stocked.map((s) => s.itemId),
              )
            : new Map();
        const today = storesToday();
        const changes = stocked.flatMap(({ received: r, index, itemId }): StockChange[] => {
          const item = locked.get(itemId)!;
          const change = {
            itemId,
            type: 'in' as const,
            reason: `Received on order ${order.order_id}`,
            performedBy: userId,
            reference: { type: 'order', id: order.order_id },
          };
          if (item.tracking !== 'lot') {
            if (r.lots) throw lineFieldError(index, 'lots', notTrackedByLotMessage(item.sku));
            const quantity = new D(r.receivedQuantity).plus(arrivedEarlier.get(r.orderItemId) ?? 0);
            return [{ ...change, quantity: quantity.toFixed(2) }];
          }
          if (!r.lots) throw BadRequest(lotNumberRequiredMessage(item.sku));
          r.lots.forEach((lot, j) => {
            if (lot.expiresOn && lot.expiresOn < today)
              throw lineFieldError(index, `lots.${j}.expiresOn`, `must not be in the past (today is ${today})`);
          });
          // each lot one movement; a new lot records its order and supplier, and without a date takes the item's shelf life
          return r.lots.map((lot) => ({
            ...change,
            quantity: lot.quantity,
            lot: {
              lotNumber: lot.lotNumber,
              expiresOn: lot.expiresOn ?? undefined,
              orderId: order.id,
              supplierId: order.supplier_id,
            },
          }));
        });
        const movements = changes.length > 0 ? await writeStockChanges(trx, { itemStock, locked, changes }) : [];

        for (const r of input.receivedItems) {
          const line = lines.get(r.orderItemId)!;
          line.received_quantity = new D(line.received_quantity).plus(r.receivedQuantity).toFixed(2);
          await trx('order_items').where({ id: line.id }).update({ received_quantity: line.received_quantity });
        }
        const complete = [...lines.values()].every((l) => outstanding(l).lte(0));
        const status = complete ? 'received' : 'partially_received';
        await trx('orders')
          .where({ id: order.id })
          .update({ status, updated_at: trx.fn.now(), received_at: complete ? trx.fn.now() : null });
        const detail = await orders.detail(order.id);
        await publishEvent(trx, 'order.received', detail);
        if (complete) {
          const { order: head, lines: all } = detail;
          await queueOrderReceivedEmail(
            trx,
            {
              orderId: head.order_id,
              supplierName: head.supplier_name,
              createdBy: head.created_by,
              lines: all.map((l) => ({
                name: l.name,
                sku: l.sku,
                quantity: l.quantity,
                receivedQuantity: l.received_quantity,
              })),
            },
            userId,
          );
        }
        return {
          result: { detail, movements },
          audit: {
            entityType: 'order',
            entityId: order.order_id,
            action: 'receive',
            before: { status: order.status },
            after: {
              status,
              received: input.receivedItems.map((r) => ({
                orderItemId: r.orderItemId,
                quantity: r.receivedQuantity,
                addToInventory: r.addToInventory,
                ...(r.lots ? { lots: r.lots } : {}),
              })),
            },
          },
        };
      });
    },

    /**
     * Creates inventory items for received lines that have none (those of items or orderItemIds
     * when given): sku and price as given in items, otherwise the line's sku when free, else
     * <orderId>-<orderItemId>, at the unit cost with the default markup; category from the request
     * or the setting; the received quantity goes in through the ledger; the item is linked to the supplier.
     */
    addToInventory(ref: string, input: AddToInventory, actor: Actor): Promise<AddToInventoryOutcome> {
      const userId = actor.userId;
      return transaction(db, async (trx) => {
        const orders = ordersService(trx);
        const order = await orders.resolve(ref, { lock: true });
        const all = await orders.linesForUpdate(order.id);
        const eligible = all.filter((l) => l.item_id === null && new D(l.received_quantity).gt(0));
        let targets = eligible;
        const named = input.items?.map((entry) => entry.orderItemId) ?? input.orderItemIds;
        if (named) {
          const wanted = new Set(named);
          const bad = [...wanted].filter((id) => !eligible.some((l) => l.id === id));
          if (bad.length > 0) {
            throw BadRequest(
              `Order line(s) ${bad.join(', ')} of order ${order.order_id} are not received lines without an item`,
            );
          }
          targets = eligible.filter((l) => wanted.has(l.id));
        }
        if (targets.length === 0) return { created: [], detail: await orders.detail(order.id) };

        const categoryId = input.categoryId ?? (await defaultCategoryId(trx));
        if (categoryId === null) {
          throw BadRequest(`No category given: send categoryId or set the setting '${DEFAULT_CATEGORY_SETTING}'`);
        }
        await categoriesService(trx).get(categoryId);

        const items = itemsService(trx);
        const markup = await defaultMarkupPercent(trx);
        const given = new Map((input.items ?? []).map((entry, index) => [entry.orderItemId, { ...entry, index }]));
        const created: AddToInventoryOutcome['created'] = [];
        for (const line of targets) {
          const chosen = given.get(line.id);
          const sku = chosen?.sku ?? (await items.freeSku(line.sku, `${order.order_id}-${line.id}`));
          const price = chosen?.price ?? markedUpPrice(line.unit_cost, markup);
          created.push({
            orderItemId: line.id,
            item: await createItemForLine(trx, actor, {
              order,
              line,
              values: { sku, price, categoryId },
              fieldPath: chosen && `items.${chosen.index}`,
            }),
          });
        }
        // the items created here are never tracked by lot (createItemForLine), so their stock needs no lot
        await changeStockMany(
          trx,
          itemStock,
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
        return { created, detail: await orders.detail(order.id) };
      });
    },
  };
}

/**
 * The item a line without one becomes: the line's name, the SKU, price and category given, created
 * empty (the caller puts the received stock in through the ledger), the line pointing at it, and
 * linked to the order's supplier at the line's cost. A refusal names the request's field under
 * fieldPath when the request gave the values (a taken SKU is a 409 on its sku).
 */
async function createItemForLine(
  trx: Db,
  actor: Actor,
  {
    order,
    line,
    values,
    fieldPath,
  }: {
    order: { order_id: string; supplier_id: string };
    line: OrderLineRow;
    values: { sku: string; price: string; categoryId: number };
    fieldPath: string | undefined;
  },
): Promise<ItemReadRow> {
  try {
    const item = await itemsService(trx).create(
      {
        name: line.name,
        description: `Added to inventory from order ${order.order_id}`,
        ...values,
        tracking: 'none',
        currentStock: '0',
        minimumStock: '0',
      },
      actor,
    );
    await trx('order_items').where({ id: line.id }).update({ item_id: item.id, sku: item.sku });
    await sourcesService(trx).ensureLink(
      order.supplier_id,
      item.id,
      line.unit_cost,
      `Added from order ${order.order_id}`,
    );
    return item;
  } catch (err) {
    if (!(err instanceof HttpError) || fieldPath === undefined) throw err;
    if (err.status === 409)
      throw Conflict(err.message, { errors: [{ field: `${fieldPath}.sku`, message: err.message }] });
    const listed = Array.isArray(err.details?.errors)
      ? (err.details.errors as { field: string; message: string }[])
      : [];
    if (err.status === 400 && listed.length > 0) {
      throw BadRequest(err.message, {
        errors: listed.map((e) => ({ field: `${fieldPath}.${e.field}`, message: e.message })),
      });
    }
    throw err;
  }
}

async function defaultCategoryId(trx: Db): Promise<number | null> {
  const value: unknown = await settingsService(trx).get(DEFAULT_CATEGORY_SETTING);
  const candidate =
    typeof value === 'object' && value !== null ? (value as { categoryId?: unknown }).categoryId : value;
  const id = typeof candidate === 'string' ? Number(candidate) : candidate;
  return typeof id === 'number' && Number.isInteger(id) && id > 0 ? id : null;
}
