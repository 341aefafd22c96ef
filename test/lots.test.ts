import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { agentsByRole, stockOf, type Agents } from './helpers/inventory-factories';
import { buildChargeCode, grantPermission } from './helpers/sales-factories';
import { createItem, day, stockInLot } from './helpers/lots-factories';
import { ledgerMismatches } from '../src/modules/items/items.queries';

/*
 * Issue 42: lots and expiry. A lot-tracked item keeps its stock in lots; every sale path takes
 * them first-expiry-first-out and never sells an expired or quarantined one.
 */

let t: TestApp;
let as: Agents;
let code: string;
let categoryId: number;

beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  code = (await buildChargeCode(t.db)).code;
  categoryId = (await buildCategory(t.db)).id;
});
afterAll(() => t.close());

async function trackedItem(body: Record<string, unknown> = {}): Promise<{ id: number; sku: string }> {
  const { id, sku, created } = await createItem(as.manager, {
    categoryId,
    prefix: 'LOT',
    name: (sku) => `Acetone ${sku}`,
    body,
  });
  expect(created).toMatchObject({ tracking: 'lot' });
  return { id, sku };
}

const stockIn = stockInLot;

const lotsOf = async (id: number, query = '') =>
  (await as.user.get(`/api/items/${id}/lots${query}`).expect(200)).body as {
    id: number;
    lotNumber: string;
    expiresOn: string | null;
    quantity: number;
    status: string;
  }[];

const lotQuantities = async (id: number) =>
  Object.fromEntries((await lotsOf(id, '?includeEmpty=true')).map((lot) => [lot.lotNumber, lot.quantity]));

const sell = (id: number, quantity: number) =>
  as.user.post('/api/sales').send({ chargeCode: code, items: [{ itemId: id, quantity }], vatApplied: false });

describe('tracking by lot', () => {
  it('an item created tracked keeps its opening stock in the lot UNLOTTED, with no expiry', async () => {
    const item = await trackedItem({ currentStock: 4, shelfLifeDays: 365 });
    expect(await lotsOf(item.id)).toEqual([
      expect.objectContaining({
        lotNumber: 'UNLOTTED',
        expiresOn: null,
        quantity: 4,
        status: 'available',
        orderId: null,
      }),
    ]);
    const detail = (await as.user.get(`/api/items/${item.id}`).expect(200)).body;
    expect(detail).toMatchObject({ tracking: 'lot', shelfLifeDays: 365, currentStock: 4 });
  });

  it('turning it on puts the stock into UNLOTTED; off is 409 while two lots hold stock, then allowed with one', async () => {
    const created = await as.manager
      .post('/api/items')
      .send({ name: 'Ethanol', sku: `ETH-${Date.now()}`, categoryId, price: '3.00', currentStock: 7 })
      .expect(201);
    const id = created.body.id as number;
    expect(await lotsOf(id)).toEqual([]);
    await as.manager.put(`/api/items/${id}`).send({ tracking: 'lot' }).expect(200);
    expect(await lotQuantities(id)).toEqual({ UNLOTTED: 7 });
    expect(await stockOf(t.db, id)).toBe('7.00');

    await stockIn(as.manager, id, 'E100', 3, day(200)).expect(200);
    const refused = await as.manager.put(`/api/items/${id}`).send({ tracking: 'none' }).expect(409);
    expect(refused.body.message).toBe(
      `Tracking by lot cannot be turned off for ${created.body.sku}: 2 lots hold stock`,
    );

    await as.manager
      .post(`/api/items/${id}/stock`)
      .send({ type: 'adjustment', quantity: 0, lotNumber: 'UNLOTTED', reason: 'Poured away' })
      .expect(200);
    const off = await as.manager.put(`/api/items/${id}`).send({ tracking: 'none' }).expect(200);
    expect(off.body).toMatchObject({ tracking: 'none', currentStock: 3 });
    // the item's figure keeps the stock, and untracked it sells without lots
    await sell(id, 1).expect(201);
    expect(await stockOf(t.db, id)).toBe('2.00');
  });
});

describe('turning tracking by lot on and off goes through the ledger', () => {
  type Movement = {
    type: string;
    quantity: number;
    previousStock: number;
    newStock: number;
    reason: string;
    lots: { lotNumber: string; expiresOn: string | null; quantity: number }[];
  };
  const movementsOf = async (id: number) =>
    ((await as.user.get(`/api/stock-movements?itemId=${id}`).expect(200)).body.movements as Movement[]).reverse();
  const trace = async (lotId: number) =>
    (await as.manager.get(`/api/lots/${lotId}/trace`).expect(200)).body as {
      movements: { type: string; quantity: number; reason: string }[];
      remaining: number;
    };
  /** What the lot's movements add up to: the trace explains what it holds. */
  const explained = (lotTrace: Awaited<ReturnType<typeof trace>>) =>
    lotTrace.movements.reduce((sum, movement) => sum + movement.quantity, 0);

  it('on: one adjustment of 0 whose lot share is the stock into UNLOTTED; off: one whose share empties it; the stock never moves', async () => {
    const sku = `TRK-${Date.now()}`;
    const created = await as.manager
      .post('/api/items')
      .send({ name: 'Toluene', sku, categoryId, price: '4.00', currentStock: 10 })
      .expect(201);
    const id = created.body.id as number;

    await as.manager.put(`/api/items/${id}`).send({ tracking: 'lot' }).expect(200);
    expect(await stockOf(t.db, id)).toBe('10.00');
    const on = await movementsOf(id);
    expect(on).toHaveLength(2);
    expect(on[1]).toMatchObject({
      type: 'adjustment',
      quantity: 0,
      previousStock: 10,
      newStock: 10,
      reason: 'Tracking by lot turned on: the stock into lot UNLOTTED',
      lots: [{ lotNumber: 'UNLOTTED', expiresOn: null, quantity: 10 }],
    });
    const [unlotted] = await lotsOf(id);
    expect(unlotted).toMatchObject({ lotNumber: 'UNLOTTED', quantity: 10 });
    const traced = await trace(unlotted.id);
    expect(traced.movements).toEqual([
      expect.objectContaining({ type: 'adjustment', quantity: 10, reason: on[1].reason }),
    ]);
    expect(explained(traced)).toBe(traced.remaining);

    await sell(id, 3).expect(201);
    await as.manager.put(`/api/items/${id}`).send({ tracking: 'none' }).expect(200);
    expect(await stockOf(t.db, id)).toBe('7.00');
    const off = (await movementsOf(id)).at(-1)!;
    expect(off).toMatchObject({
      type: 'adjustment',
      quantity: 0,
      previousStock: 7,
      newStock: 7,
      reason: 'Tracking by lot turned off: the stock out of its lots',
      lots: [{ lotNumber: 'UNLOTTED', expiresOn: null, quantity: -7 }],
    });
    const tracedOff = await trace(unlotted.id);
    expect(tracedOff.remaining).toBe(0);
    expect(explained(tracedOff)).toBe(0);

    // untracked, it sells without lots; on again, the stock goes back into the same (empty) UNLOTTED
    await sell(id, 2).expect(201);
    await as.manager.put(`/api/items/${id}`).send({ tracking: 'lot' }).expect(200);
    expect(await lotQuantities(id)).toEqual({ UNLOTTED: 5 });
    expect((await movementsOf(id)).at(-1)).toMatchObject({
      quantity: 0,
      newStock: 5,
      lots: [{ lotNumber: 'UNLOTTED', quantity: 5 }],
    });
    const again = await trace(unlotted.id);
    expect(again.remaining).toBe(5);
    expect(explained(again)).toBe(5);

    // the ledger chains: each movement starts where the one before ended, the last is the stock
    const all = await movementsOf(id);
    all.slice(1).forEach((movement, i) => expect(movement.previousStock).toBe(all[i].newStock));
    expect(all.at(-1)!.newStock).toBe(5);
    expect(await ledgerMismatches(t.db)).toEqual({ count: 0, skus: null });
    const page = await as.manager.get(`/stock-movements?item=${sku}`).expect(200);
    expect(page.text).toContain('Tracking by lot turned on: the stock into lot UNLOTTED');
    expect(page.text).toContain('Tracking by lot turned off: the stock out of its lots');
  });

  it('nothing to move, no movement: on with no stock, off with every lot empty', async () => {
    const created = await as.manager
      .post('/api/items')
      .send({ name: 'Xylene', sku: `TRK0-${Date.now()}`, categoryId, price: '4.00' })
      .expect(201);
    const id = created.body.id as number;
    const before = (await movementsOf(id)).length;
    await as.manager.put(`/api/items/${id}`).send({ tracking: 'lot' }).expect(200);
    await as.manager.put(`/api/items/${id}`).send({ tracking: 'none' }).expect(200);
    expect(await movementsOf(id)).toHaveLength(before);
    expect(await lotsOf(id, '?includeEmpty=true')).toEqual([]);
  });
});

describe('manual stock of a tracked item', () => {
  it('in adds to the lot (created when new), lists FEFO with statuses; out and adjustment need the lot', async () => {
    const item = await trackedItem();
    await stockIn(as.manager, item.id, 'LATE', 2, day(400)).expect(200);
    await stockIn(as.manager, item.id, 'SOON', 3, day(10)).expect(200);
    await stockIn(as.manager, item.id, 'NODATE', 1, null).expect(200);
    // a bottle found on the shelf past its date is recorded, and is expired at once
    await stockIn(as.manager, item.id, 'OLD', 5, day(-3)).expect(200);
    await stockIn(as.manager, item.id, 'SOON', 1).expect(200);

    const lots = await lotsOf(item.id);
    expect(lots.map((l) => [l.lotNumber, l.expiresOn, l.quantity, l.status])).toEqual([
      ['OLD', day(-3), 5, 'expired'],
      ['SOON', day(10), 4, 'expiring'],
      ['LATE', day(400), 2, 'available'],
      ['NODATE', null, 1, 'available'],
    ]);
    expect(await stockOf(t.db, item.id)).toBe('12.00');

    const clash = await stockIn(as.manager, item.id, 'SOON', 1, day(11)).expect(409);
    expect(clash.body.message).toBe(`Lot SOON of ${item.sku} expires on ${day(10)}, not ${day(11)}`);

    for (const type of ['out', 'adjustment']) {
      const res = await as.manager.post(`/api/items/${item.id}/stock`).send({ type, quantity: 1 }).expect(400);
      expect(res.body.message).toBe(`Lot number is required for ${item.sku}`);
    }
    // a manager may take expired stock out (to dispose of it): out names the lot
    const out = await as.manager
      .post(`/api/items/${item.id}/stock`)
      .send({ type: 'out', quantity: 5, lotNumber: 'OLD', reason: 'Disposed' })
      .expect(200);
    expect(out.body.movement).toMatchObject({ type: 'out', quantity: -5 });
    expect((await lotsOf(item.id)).map((l) => l.lotNumber)).toEqual(['SOON', 'LATE', 'NODATE']);
    expect((await lotsOf(item.id, '?includeEmpty=true')).map((l) => [l.lotNumber, l.status])).toContainEqual([
      'OLD',
      'empty',
    ]);

    const badDate = await as.manager
      .post(`/api/items/${item.id}/stock`)
      .send({ type: 'in', quantity: 1, lotNumber: 'X', expiresOn: '2027-02-30' })
      .expect(400);
    expect(badDate.body.errors).toEqual([{ field: 'expiresOn', message: 'must be a date YYYY-MM-DD' }]);
    await as.user.get('/api/items/999999/lots').expect(404);
  });

  it('a new lot without an expiry takes the shelf life from today', async () => {
    const item = await trackedItem({ shelfLifeDays: 90 });
    await stockIn(as.manager, item.id, 'S1', 2).expect(200);
    expect((await lotsOf(item.id))[0]).toMatchObject({ lotNumber: 'S1', expiresOn: day(90) });
  });

  it('an untracked item refuses a lot number', async () => {
    const res = await as.manager
      .post('/api/items')
      .send({ name: 'Gloves', sku: `GLV-${Date.now()}`, categoryId, price: '1.00' })
      .expect(201);
    const refused = await stockIn(as.manager, res.body.id, 'L1', 1).expect(400);
    expect(refused.body.message).toBe(`${res.body.sku} is not tracked by lot`);
  });
});

describe('sales take lots first-expiry-first-out', () => {
  it('splits a sale across three lots, earliest expiry first, recording each lot on its movement', async () => {
    const item = await trackedItem();
    await stockIn(as.manager, item.id, 'C', 5, day(300)).expect(200);
    await stockIn(as.manager, item.id, 'A', 2, day(20)).expect(200);
    await stockIn(as.manager, item.id, 'B', 3, day(100)).expect(200);

    const sale = (await sell(item.id, 6).expect(201)).body.sale;
    expect(await lotQuantities(item.id)).toEqual({ A: 0, B: 0, C: 4 });
    expect(await stockOf(t.db, item.id)).toBe('4.00');

    const movement = await t.db('stock_movements').where({ reference_id: sale.saleId, item_id: item.id }).first();
    expect(movement).toMatchObject({ type: 'out', quantity: '-6.00', previous_stock: '10.00', new_stock: '4.00' });
    const shares = await t
      .db('stock_movement_lots')
      .where({ movement_id: movement.id })
      .orderBy('lot_number')
      .select('lot_number', 'quantity');
    expect(shares).toEqual([
      { lot_number: 'A', quantity: '-2.00' },
      { lot_number: 'B', quantity: '-3.00' },
      { lot_number: 'C', quantity: '-1.00' },
    ]);
  });

  it('never sells an expired or quarantined lot: the shortfall names what they hold', async () => {
    const item = await trackedItem();
    await stockIn(as.manager, item.id, 'GOOD', 2, day(60)).expect(200);
    await stockIn(as.manager, item.id, 'PAST', 4, day(-1)).expect(200);
    await t.db('stock_lots').where({ item_id: item.id, lot_number: 'GOOD' }).update({ quarantined_at: t.db.fn.now() });
    await stockIn(as.manager, item.id, 'FINE', 1, day(90)).expect(200);

    const short = await sell(item.id, 2).expect(400);
    const name = `Acetone ${item.sku}`;
    expect(short.body.message).toBe(
      `Insufficient stock for item '${name}'. Current stock: 1, Required: 2 (6 in expired or quarantined lots)`,
    );
    await sell(item.id, 1).expect(201);
    expect(await lotQuantities(item.id)).toEqual({ GOOD: 2, PAST: 4, FINE: 0 });
    // the refused sale wrote nothing
    expect(await stockOf(t.db, item.id)).toBe('6.00');
  });

  it('a refund puts the quantity back into the lots it came from, the latest-expiring first', async () => {
    const refunder = await buildUser(t.db);
    await grantPermission(t.db, refunder.id, 'sales.refund');
    const agent = await t.loginAs(refunder);
    const item = await trackedItem();
    await stockIn(as.manager, item.id, 'EARLY', 2, day(30)).expect(200);
    await stockIn(as.manager, item.id, 'LATER', 5, day(200)).expect(200);
    const sale = (await sell(item.id, 4).expect(201)).body.sale;
    expect(await lotQuantities(item.id)).toEqual({ EARLY: 0, LATER: 3 });

    await agent
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: 1 }] })
      .expect(200);
    expect(await lotQuantities(item.id)).toEqual({ EARLY: 0, LATER: 4 });
    await agent
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: 3 }] })
      .expect(200);
    expect(await lotQuantities(item.id)).toEqual({ EARLY: 2, LATER: 5 });
    expect(await stockOf(t.db, item.id)).toBe('7.00');
  });

  it('two concurrent sales on the last units of a lot never take more than it holds', async () => {
    const item = await trackedItem();
    await stockIn(as.manager, item.id, 'LAST', 3, day(50)).expect(200);
    const results = await Promise.all([2, 2, 2, 2].map((quantity) => sell(item.id, quantity)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400]);
    expect(await lotQuantities(item.id)).toEqual({ LAST: 1 });
    expect(await stockOf(t.db, item.id)).toBe('1.00');
  });
});
