import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gs1CheckDigit, GS } from '../src/lib/gs1';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory } from './helpers/factories';
import { agentsByRole, stockOf, type Agents } from './helpers/inventory-factories';
import { buildOrder, buildSupplier } from './helpers/purchasing-factories';
import { createItem, day, yymmdd } from './helpers/lots-factories';

/*
 * Issue 42, stock in: receiving an order into lots (each lot records its order and supplier), and
 * a GS1 scan's lot and expiry in GET /api/items/lookup.
 */

let t: TestApp;
let as: Agents;
let categoryId: number;

beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  categoryId = (await buildCategory(t.db)).id;
});
afterAll(() => t.close());

let serial = 0;
async function trackedItem(body: Record<string, unknown> = {}): Promise<{ id: number; sku: string }> {
  const { id, sku } = await createItem(as.manager, {
    categoryId,
    prefix: 'RCV',
    name: (sku) => `Ethanol ${sku}`,
    body,
  });
  return { id, sku };
}

/** A GTIN-14 no other test uses, with its check digit. */
function freshGtin(): string {
  const body = `9${String(Date.now()).slice(-9)}${String(++serial).padStart(3, '0')}`;
  return body + gs1CheckDigit(body);
}

async function orderOf(itemId: number, quantity = '10') {
  const supplier = await buildSupplier(t.db);
  const { order, lines } = await buildOrder(t.db, supplier.id, [
    { itemId, name: 'Ethanol', quantity, unitCost: '2.00' },
  ]);
  return { order: order as { id: number; order_id: string }, line: lines[0] as { id: number }, supplier };
}

const receive = (orderId: number, receivedItems: unknown[]) =>
  as.manager.post(`/api/orders/${orderId}/receive`).send({ receivedItems });

type LotBody = {
  id: number;
  lotNumber: string;
  expiresOn: string | null;
  quantity: number;
  status: string;
  orderId: number | null;
  supplierId: string | null;
};
const lotsOf = async (id: number) => (await as.user.get(`/api/items/${id}/lots`).expect(200)).body as LotBody[];

const receivedOnLine = async (lineId: number) =>
  (await t.db('order_items').where({ id: lineId }).first('received_quantity')).received_quantity as string;

describe('POST /api/orders/{id}/receive: a lot-tracked line takes lots', () => {
  it('receives into two lots: one movement each, the lots record their order and supplier, in FEFO order', async () => {
    const item = await trackedItem();
    const { order, line, supplier } = await orderOf(item.id);
    const res = await receive(order.id, [
      {
        orderItemId: line.id,
        receivedQuantity: 10,
        lots: [
          { lotNumber: 'A-200', expiresOn: day(200), quantity: 6 },
          { lotNumber: 'B-100', expiresOn: day(100), quantity: '4' },
        ],
      },
    ]).expect(200);
    expect(res.body.order.status).toBe('received');
    expect(res.body.stockMovements).toEqual([
      { itemId: item.id, quantity: 6, previousStock: 0, newStock: 6 },
      { itemId: item.id, quantity: 4, previousStock: 6, newStock: 10 },
    ]);
    expect(await stockOf(t.db, item.id)).toBe('10.00');
    expect(await lotsOf(item.id)).toMatchObject([
      {
        lotNumber: 'B-100',
        expiresOn: day(100),
        quantity: 4,
        status: 'available',
        orderId: order.id,
        supplierId: supplier.id,
      },
      {
        lotNumber: 'A-200',
        expiresOn: day(200),
        quantity: 6,
        status: 'available',
        orderId: order.id,
        supplierId: supplier.id,
      },
    ]);
    const movements = await t
      .db('stock_movements as m')
      .join('stock_movement_lots as s', 's.movement_id', 'm.id')
      .where({ 'm.item_id': item.id })
      .orderBy('m.id')
      .select('m.type', 'm.reason', 'm.reference_id', 's.lot_number', 's.quantity');
    expect(movements).toEqual([
      {
        type: 'in',
        reason: `Received on order ${order.order_id}`,
        reference_id: order.order_id,
        lot_number: 'A-200',
        quantity: '6.00',
      },
      {
        type: 'in',
        reason: `Received on order ${order.order_id}`,
        reference_id: order.order_id,
        lot_number: 'B-100',
        quantity: '4.00',
      },
    ]);
  });

  it('400 "Lot number is required for <SKU>" for a tracked line without lots; nothing is received', async () => {
    const item = await trackedItem();
    const { order, line } = await orderOf(item.id);
    const res = await receive(order.id, [{ orderItemId: line.id, receivedQuantity: 3 }]).expect(400);
    expect(res.body).toEqual({ message: `Lot number is required for ${item.sku}` });
    expect(await stockOf(t.db, item.id)).toBe('0.00');
    expect(await receivedOnLine(line.id)).toBe('0.00');
  });

  it('a tracked line received only as a quantity (addToInventory false) needs no lot', async () => {
    const item = await trackedItem();
    const { order, line } = await orderOf(item.id);
    await receive(order.id, [{ orderItemId: line.id, receivedQuantity: 3, addToInventory: false }]).expect(200);
    expect(await stockOf(t.db, item.id)).toBe('0.00');
    expect(await receivedOnLine(line.id)).toBe('3.00');
  });

  it('400 naming the field for an expiry in the past, lots not adding up, a lot listed twice, lots on an untracked item', async () => {
    const item = await trackedItem();
    const { order, line } = await orderOf(item.id);
    const past = await receive(order.id, [
      {
        orderItemId: line.id,
        receivedQuantity: 2,
        lots: [
          { lotNumber: 'OK', expiresOn: day(0), quantity: 1 },
          { lotNumber: 'OLD', expiresOn: day(-1), quantity: 1 },
        ],
      },
    ]).expect(400);
    expect(past.body.errors).toEqual([
      { field: 'receivedItems.0.lots.1.expiresOn', message: expect.stringContaining('must not be in the past') },
    ]);

    const sum = await receive(order.id, [
      {
        orderItemId: line.id,
        receivedQuantity: 5,
        lots: [
          { lotNumber: 'L1', quantity: 2 },
          { lotNumber: 'L2', quantity: 2 },
        ],
      },
    ]).expect(400);
    expect(sum.body.errors).toEqual([
      { field: 'receivedItems.0.lots', message: 'quantities must add up to receivedQuantity (5), not 4' },
    ]);

    const twice = await receive(order.id, [
      {
        orderItemId: line.id,
        receivedQuantity: 2,
        lots: [
          { lotNumber: 'L1', quantity: 1 },
          { lotNumber: 'L1', quantity: 1 },
        ],
      },
    ]).expect(400);
    expect(twice.body.errors).toEqual([
      { field: 'receivedItems.0.lots.1.lotNumber', message: 'is listed more than once' },
    ]);

    const plain = await as.manager
      .post('/api/items')
      .send({ name: 'Plain gloves', sku: `PLAIN-${Date.now()}`, categoryId, price: '1.00' })
      .expect(201);
    const plainOrder = await orderOf(plain.body.id);
    const untracked = await receive(plainOrder.order.id, [
      { orderItemId: plainOrder.line.id, receivedQuantity: 1, lots: [{ lotNumber: 'X', quantity: 1 }] },
    ]).expect(400);
    expect(untracked.body.errors).toEqual([
      { field: 'receivedItems.0.lots', message: `${plain.body.sku} is not tracked by lot` },
    ]);

    expect(await stockOf(t.db, item.id)).toBe('0.00');
    expect(await stockOf(t.db, plain.body.id)).toBe('0.00');
    expect(await lotsOf(item.id)).toEqual([]);
    expect(await receivedOnLine(line.id)).toBe('0.00');
  });

  it("a lot without expiry takes the item's shelf life from today, or none without one", async () => {
    const kept = await trackedItem({ shelfLifeDays: 365 });
    const { order, line } = await orderOf(kept.id);
    await receive(order.id, [
      { orderItemId: line.id, receivedQuantity: 2, lots: [{ lotNumber: 'S1', quantity: 2 }] },
    ]).expect(200);
    expect(await lotsOf(kept.id)).toMatchObject([{ lotNumber: 'S1', expiresOn: day(365), quantity: 2 }]);

    const open = await trackedItem();
    const other = await orderOf(open.id);
    await receive(other.order.id, [
      { orderItemId: other.line.id, receivedQuantity: 2, lots: [{ lotNumber: 'N1', expiresOn: null, quantity: 2 }] },
    ]).expect(200);
    expect(await lotsOf(open.id)).toMatchObject([{ lotNumber: 'N1', expiresOn: null, quantity: 2 }]);
  });

  it('the same lot received again adds to it; a differing expiry is 409 naming the lot and changes nothing', async () => {
    const item = await trackedItem();
    const { order, line, supplier } = await orderOf(item.id, '20');
    await receive(order.id, [
      { orderItemId: line.id, receivedQuantity: 3, lots: [{ lotNumber: 'R7', expiresOn: day(90), quantity: 3 }] },
    ]).expect(200);
    await receive(order.id, [
      { orderItemId: line.id, receivedQuantity: 2, lots: [{ lotNumber: 'R7', expiresOn: day(90), quantity: 2 }] },
    ]).expect(200);
    await receive(order.id, [
      { orderItemId: line.id, receivedQuantity: 1, lots: [{ lotNumber: 'R7', quantity: 1 }] },
    ]).expect(200);
    expect(await lotsOf(item.id)).toMatchObject([
      { lotNumber: 'R7', expiresOn: day(90), quantity: 6, orderId: order.id, supplierId: supplier.id },
    ]);

    const clash = await receive(order.id, [
      { orderItemId: line.id, receivedQuantity: 4, lots: [{ lotNumber: 'R7', expiresOn: day(120), quantity: 4 }] },
    ]).expect(409);
    expect(clash.body.message).toBe(`Lot R7 of ${item.sku} expires on ${day(90)}, not ${day(120)}`);
    expect(await stockOf(t.db, item.id)).toBe('6.00');
    expect(await receivedOnLine(line.id)).toBe('6.00');
  });
});

describe('GET /api/items/lookup: the lot a GS1 scan carries', () => {
  it('answers scanned {lotNumber, expiresOn, lotId}: null lotId for a new lot, the lot for a known one; null without a lot', async () => {
    const item = await trackedItem();
    const gtin = freshGtin();
    await as.manager.post(`/api/items/${item.id}/barcodes`).send({ code: gtin }).expect(201);
    const expiry = day(180);

    const fresh = await as.user
      .get('/api/items/lookup')
      .query({ code: `01${gtin}17${yymmdd(expiry)}10NEW-1${GS}21SER9\r` })
      .expect(200);
    expect(fresh.body).toMatchObject({ id: item.id, scanned: { lotNumber: 'NEW-1', expiresOn: expiry, lotId: null } });

    const { order, line } = await orderOf(item.id);
    await receive(order.id, [
      { orderItemId: line.id, receivedQuantity: 1, lots: [{ lotNumber: 'K-9', expiresOn: expiry, quantity: 1 }] },
    ]).expect(200);
    const [known] = await lotsOf(item.id);
    const bracketed = await as.user
      .get('/api/items/lookup')
      .query({ code: `(01)${gtin}(10)K-9` })
      .expect(200);
    expect(bracketed.body.scanned).toEqual({ lotNumber: 'K-9', expiresOn: null, lotId: known.id });

    const noLot = await as.user
      .get('/api/items/lookup')
      .query({ code: `(01)${gtin}(17)${yymmdd(expiry)}` })
      .expect(200);
    expect(noLot.body).toMatchObject({ id: item.id, scanned: null });
    const bySku = await as.user.get('/api/items/lookup').query({ code: item.sku }).expect(200);
    expect(bySku.body.scanned).toBeNull();
  });

  it('receiving by GS1 scan: the lot and expiry the lookup reads go into the receipt', async () => {
    const item = await trackedItem();
    const gtin = freshGtin();
    await as.manager.post(`/api/items/${item.id}/barcodes`).send({ code: gtin }).expect(201);
    const { order, line, supplier } = await orderOf(item.id, '2');
    // day 00 of (17): the month's last day
    const scans = [
      `]d201${gtin}17${yymmdd(day(400)).slice(0, 4)}0010GS1-LOT${GS}`,
      `01${gtin}10GS1-LOT${GS}17${yymmdd(day(400)).slice(0, 4)}00`,
    ];
    const read = await Promise.all(
      scans.map(async (code) => (await as.user.get('/api/items/lookup').query({ code }).expect(200)).body),
    );
    const lastDay = new Date(Date.UTC(Number(day(400).slice(0, 4)), Number(day(400).slice(5, 7)), 0))
      .toISOString()
      .slice(0, 10);
    expect(read.map((r) => [r.id, r.scanned])).toEqual([
      [item.id, { lotNumber: 'GS1-LOT', expiresOn: lastDay, lotId: null }],
      [item.id, { lotNumber: 'GS1-LOT', expiresOn: lastDay, lotId: null }],
    ]);
    await receive(order.id, [
      {
        orderItemId: line.id,
        receivedQuantity: 2,
        lots: [{ lotNumber: read[0].scanned.lotNumber, expiresOn: read[0].scanned.expiresOn, quantity: 2 }],
      },
    ]).expect(200);
    expect(await lotsOf(item.id)).toMatchObject([
      { lotNumber: 'GS1-LOT', expiresOn: lastDay, quantity: 2, orderId: order.id, supplierId: supplier.id },
    ]);
  });
});
