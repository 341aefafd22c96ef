import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { agentsByRole, stockOf, type Agents } from './helpers/inventory-factories';
import { buildChargeCode, grantPermission, sessionId } from './helpers/sales-factories';
import { createItem, day, stockInLot } from './helpers/lots-factories';

/*
 * Issue 42, stock out: a sale line may name its lot; each sale line and each stock movement shows
 * the lots it took; request fulfilment and quote processing take lots first-expiry-first-out.
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

async function trackedItem(tracking: 'lot' | 'none' = 'lot'): Promise<{ id: number; sku: string; name: string }> {
  const { id, sku, name } = await createItem(as.manager, {
    categoryId,
    prefix: 'LS',
    name: (sku) => `Methanol ${sku}`,
    tracking,
    body: { currentStock: tracking === 'none' ? 10 : 0 },
  });
  return { id, sku, name };
}

const stockIn = (id: number, lotNumber: string, quantity: number, expiresOn?: string | null) =>
  stockInLot(as.manager, id, lotNumber, quantity, expiresOn).expect(200);

const lotQuantities = async (id: number) =>
  Object.fromEntries(
    ((await as.user.get(`/api/items/${id}/lots?includeEmpty=true`).expect(200)).body as Lot[]).map((lot) => [
      lot.lotNumber,
      lot.quantity,
    ]),
  );

type Lot = { lotNumber: string; expiresOn: string | null; quantity: number };

const sell = (items: { itemId: number; quantity: number; lotNumber?: string }[], agent: supertest.Agent = as.user) =>
  agent.post('/api/sales').send({ chargeCode: code, items, vatApplied: false });

const salesCount = async () => Number((await t.db('sales').count({ n: '*' }))[0].n);

describe('a sale line naming its lot', () => {
  it('takes that lot only, not the first to expire; the line and its movement show it', async () => {
    const item = await trackedItem();
    await stockIn(item.id, 'A', 2, day(20));
    await stockIn(item.id, 'B', 5, day(100));

    const res = await sell([{ itemId: item.id, quantity: 3, lotNumber: 'B' }]).expect(201);
    expect(res.body.sale.items[0]).toMatchObject({
      quantity: '3.00',
      lots: [{ lotNumber: 'B', expiresOn: day(100), quantity: 3 }],
    });
    expect(await lotQuantities(item.id)).toEqual({ A: 2, B: 2 });
    expect(await stockOf(t.db, item.id)).toBe('4.00');

    const sale = (await as.user.get(`/api/sales/${res.body.sale.id}`).expect(200)).body;
    expect(sale.items[0].lots).toEqual([{ lotNumber: 'B', expiresOn: day(100), quantity: 3 }]);
    const movements = (
      await as.user.get(`/api/stock-movements?referenceType=sale&referenceId=${sale.saleId}`).expect(200)
    ).body.movements;
    expect(movements).toEqual([
      expect.objectContaining({
        type: 'out',
        quantity: -3,
        lots: [{ lotNumber: 'B', expiresOn: day(100), quantity: -3 }],
      }),
    ]);
  });

  it("a named lot holding less than the line: the spec's 400 with what that lot holds; an unknown lot 404", async () => {
    const item = await trackedItem();
    await stockIn(item.id, 'SMALL', 2, day(40));
    await stockIn(item.id, 'BIG', 10, day(200));
    await stockIn(item.id, 'PAST', 3, day(-5));
    const before = await salesCount();

    const short = await sell([{ itemId: item.id, quantity: 3, lotNumber: 'SMALL' }]).expect(400);
    expect(short.body.message).toBe(`Insufficient stock for item '${item.name}'. Current stock: 2, Required: 3`);
    const unknown = await sell([{ itemId: item.id, quantity: 1, lotNumber: 'NOPE' }]).expect(404);
    expect(unknown.body.message).toBe(`Lot NOPE of ${item.sku} not found`);

    expect(await lotQuantities(item.id)).toEqual({ SMALL: 2, BIG: 10, PAST: 3 });
    expect(await salesCount()).toBe(before);
  });

  it('naming an expired or a quarantined lot is 409 and sells nothing, even beside a good line', async () => {
    const item = await trackedItem();
    await stockIn(item.id, 'GOOD', 5, day(90));
    await stockIn(item.id, 'OLD', 4, day(-1));
    await stockIn(item.id, 'HELD', 3, day(120));
    await t.db('stock_lots').where({ item_id: item.id, lot_number: 'HELD' }).update({ quarantined_at: t.db.fn.now() });
    const before = await salesCount();

    const expired = await sell([
      { itemId: item.id, quantity: 1 },
      { itemId: item.id, quantity: 1, lotNumber: 'OLD' },
    ]).expect(409);
    expect(expired.body.message).toBe(`Lot OLD of ${item.sku} is expired`);
    const quarantined = await sell([{ itemId: item.id, quantity: 1, lotNumber: 'HELD' }]).expect(409);
    expect(quarantined.body.message).toBe(`Lot HELD of ${item.sku} is quarantined`);

    expect(await lotQuantities(item.id)).toEqual({ GOOD: 5, OLD: 4, HELD: 3 });
    expect(await stockOf(t.db, item.id)).toBe('12.00');
    expect(await salesCount()).toBe(before);
  });

  it('an item not tracked by lot refuses a lot number; the field is validated', async () => {
    const plain = await trackedItem('none');
    const refused = await sell([{ itemId: plain.id, quantity: 1, lotNumber: 'L1' }]).expect(400);
    expect(refused.body.message).toBe(`${plain.sku} is not tracked by lot`);
    const blank = await sell([{ itemId: plain.id, quantity: 1, lotNumber: ' ' }]).expect(400);
    expect(blank.body.errors).toEqual([{ field: 'items.0.lotNumber', message: 'is required' }]);
    expect(await stockOf(t.db, plain.id)).toBe('10.00');
  });
});

describe('GET /api/sales/{id}: the lots of each line', () => {
  it('two lines of one item take in line order, first expiry first; an untracked line has none; a refund leaves them', async () => {
    const item = await trackedItem();
    const plain = await trackedItem('none');
    await stockIn(item.id, 'C', 5, day(300));
    await stockIn(item.id, 'A', 2, day(20));
    await stockIn(item.id, 'B', 3, day(100));

    const created = await sell([
      { itemId: item.id, quantity: 3 },
      { itemId: plain.id, quantity: 1 },
      { itemId: item.id, quantity: 4 },
    ]).expect(201);
    const expected = [
      [
        { lotNumber: 'A', expiresOn: day(20), quantity: 2 },
        { lotNumber: 'B', expiresOn: day(100), quantity: 1 },
      ],
      [],
      [
        { lotNumber: 'B', expiresOn: day(100), quantity: 2 },
        { lotNumber: 'C', expiresOn: day(300), quantity: 2 },
      ],
    ];
    expect(created.body.sale.items.map((line: { lots: Lot[] }) => line.lots)).toEqual(expected);
    const read = async () =>
      (await as.user.get(`/api/sales/${created.body.sale.id}`).expect(200)).body.items.map(
        (line: { itemId: number; lots: Lot[] }) => [line.itemId, line.lots],
      );
    expect(await read()).toEqual([
      [item.id, expected[0]],
      [plain.id, expected[1]],
      [item.id, expected[2]],
    ]);
    // the sales list carries them too
    const listed = (await as.user.get(`/api/sales?search=${created.body.sale.saleId}`).expect(200)).body.sales;
    expect(listed[0].items.map((line: { lots: Lot[] }) => line.lots)).toEqual(expected);

    const refunder = await buildUser(t.db);
    await grantPermission(t.db, refunder.id, 'sales.refund');
    await (
      await t.loginAs(refunder)
    )
      .patch(`/api/sales/${created.body.sale.id}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: 2 }] })
      .expect(200);
    expect(await lotQuantities(item.id)).toEqual({ A: 0, B: 0, C: 5 });
    expect(await read()).toEqual([
      [item.id, expected[0]],
      [plain.id, expected[1]],
      [item.id, expected[2]],
    ]);
  });

  it('a processed quote takes its lots first expiry first, and its sale shows them', async () => {
    const item = await trackedItem();
    await stockIn(item.id, 'LATE', 4, day(250));
    await stockIn(item.id, 'EARLY', 1, day(10));
    await stockIn(item.id, 'GONE', 6, day(-2));
    const quote = (
      await as.user
        .post('/api/sales/quotes')
        .send({ chargeCode: code, sessionId: sessionId(), items: [{ itemId: item.id, quantity: 2 }] })
        .expect(200)
    ).body.quote;
    const processed = await as.user.post(`/api/sales/quotes/${quote.id}/process`).expect(200);
    expect(processed.body.sale.items[0].lots).toEqual([
      { lotNumber: 'EARLY', expiresOn: day(10), quantity: 1 },
      { lotNumber: 'LATE', expiresOn: day(250), quantity: 1 },
    ]);
    expect(await lotQuantities(item.id)).toEqual({ LATE: 3, EARLY: 0, GONE: 6 });
  });
});

describe('stock movements carry their lots', () => {
  it("GET /api/stock-movements and the item's movements: each lot signed as its movement, [] untracked", async () => {
    const item = await trackedItem();
    const plain = await trackedItem('none');
    await stockIn(item.id, 'M1', 2, day(30));
    await stockIn(item.id, 'M2', 4, null);
    const sale = (
      await sell([
        { itemId: item.id, quantity: 3 },
        { itemId: plain.id, quantity: 2 },
      ]).expect(201)
    ).body.sale;

    const ofItem = (await as.user.get(`/api/items/${item.id}/stock-movements`).expect(200)).body.movements;
    expect(ofItem.map((m: { type: string; quantity: number; lots: Lot[] }) => [m.type, m.quantity, m.lots])).toEqual([
      [
        'out',
        -3,
        [
          { lotNumber: 'M1', expiresOn: day(30), quantity: -2 },
          { lotNumber: 'M2', expiresOn: null, quantity: -1 },
        ],
      ],
      ['in', 4, [{ lotNumber: 'M2', expiresOn: null, quantity: 4 }]],
      ['in', 2, [{ lotNumber: 'M1', expiresOn: day(30), quantity: 2 }]],
    ]);

    const ofSale = (await as.user.get(`/api/stock-movements?referenceType=sale&referenceId=${sale.saleId}`).expect(200))
      .body.movements;
    expect(ofSale.map((m: { itemId: number; lots: Lot[] }) => [m.itemId, m.lots.length])).toEqual([
      [plain.id, 0],
      [item.id, 2],
    ]);
    const ofPlain = (await as.user.get(`/api/items/${plain.id}/stock-movements`).expect(200)).body.movements;
    expect(ofPlain.every((m: { lots: Lot[] }) => m.lots.length === 0)).toBe(true);
  });
});

describe('request fulfilment', () => {
  it('takes lots first expiry first, never an expired one, and sells less when the sellable lots fall short', async () => {
    const requester = await buildUser(t.db, { role: 'requester' });
    const asRequester = await t.loginAs(requester);
    const requestCode = (await buildChargeCode(t.db, { authorisedEmails: [requester.email] })).code;
    const item = await trackedItem();
    await stockIn(item.id, 'LATER', 4, day(200));
    await stockIn(item.id, 'PAST', 3, day(-2));
    await stockIn(item.id, 'SOON', 2, day(15));

    const request = (
      await asRequester
        .post('/api/requests')
        .send({ chargeCode: requestCode, items: [{ itemId: item.id, quantity: 5 }] })
        .expect(201)
    ).body;
    const ready = (await as.user.post(`/api/requests/${request.id}/fulfil`).send({}).expect(200)).body;
    expect(ready).toMatchObject({ status: 'ready', shortfall: [] });
    expect(ready.items[0]).toMatchObject({ fulfilledQuantity: '5.00' });
    expect(await lotQuantities(item.id)).toEqual({ LATER: 1, PAST: 3, SOON: 0 });
    const sale = (await as.user.get(`/api/sales/${ready.saleId}`).expect(200)).body;
    expect(sale.items[0].lots).toEqual([
      { lotNumber: 'SOON', expiresOn: day(15), quantity: 2 },
      { lotNumber: 'LATER', expiresOn: day(200), quantity: 3 },
    ]);

    // 1 sellable left beside the 3 expired: a request for 3 gets 1
    const second = (
      await asRequester
        .post('/api/requests')
        .send({ chargeCode: requestCode, items: [{ itemId: item.id, quantity: 3 }] })
        .expect(201)
    ).body;
    const short = (await as.user.post(`/api/requests/${second.id}/fulfil`).send({}).expect(200)).body;
    expect(short.items[0]).toMatchObject({ fulfilledQuantity: '1.00' });
    expect(short.shortfall).toEqual([
      expect.objectContaining({ requested: '3.00', fulfilled: '1.00', reason: 'stock' }),
    ]);
    expect(await lotQuantities(item.id)).toEqual({ LATER: 0, PAST: 3, SOON: 0 });
    expect(await stockOf(t.db, item.id)).toBe('3.00');
  });
});

describe('a request of an item tracked by lot: short and availability count its sellable lots only', () => {
  const lotIdOf = async (itemId: number, lotNumber: string): Promise<number> =>
    ((await as.user.get(`/api/items/${itemId}/lots`).expect(200)).body as { id: number; lotNumber: string }[]).find(
      (lot) => lot.lotNumber === lotNumber,
    )!.id;

  it('submission marks a line short against the sellable lots, not the stock that expired or quarantined lots hold', async () => {
    const requester = await buildUser(t.db, { role: 'requester' });
    const asRequester = await t.loginAs(requester);
    const requestCode = (await buildChargeCode(t.db, { authorisedEmails: [requester.email] })).code;
    const item = await trackedItem();
    await stockIn(item.id, 'GOOD', 1, day(200));
    await stockIn(item.id, 'PAST', 3, day(-2));
    await stockIn(item.id, 'HELD', 2, day(100));
    await as.manager
      .post(`/api/lots/${await lotIdOf(item.id, 'HELD')}/quarantine`)
      .send({ reason: 'Supplier notice' })
      .expect(200);
    const expiredOnly = await trackedItem();
    await stockIn(expiredOnly.id, 'OLD', 5, day(-1));
    expect(await stockOf(t.db, item.id)).toBe('6.00');

    const submit = async (items: { itemId: number; quantity: number }[]) => {
      const created = (await asRequester.post('/api/requests').send({ chargeCode: requestCode, items }).expect(201))
        .body;
      return (await as.user.get(`/api/requests/${created.id}`).expect(200)).body;
    };
    // 6 in stock, 1 of it for sale: 2 is short, 1 is not
    const short = await submit([
      { itemId: item.id, quantity: 2 },
      { itemId: expiredOnly.id, quantity: 1 },
    ]);
    expect(short.items).toEqual([
      expect.objectContaining({ itemId: item.id, short: true, shortReason: 'stock', availability: 'in_stock' }),
      expect.objectContaining({ itemId: expiredOnly.id, short: true, shortReason: 'stock', availability: 'out' }),
    ]);
    const covered = await submit([{ itemId: item.id, quantity: 1 }]);
    expect(covered.items[0]).toMatchObject({ short: false, shortReason: null, availability: 'in_stock' });
    // the catalogue the requester chose from says the same
    const listed = async (sku: string) =>
      (await asRequester.get(`/api/catalogue?search=${sku}`).expect(200)).body.items.map(
        (entry: { sku: string; availability: string }) => [entry.sku, entry.availability],
      );
    expect(await listed(expiredOnly.sku)).toEqual([[expiredOnly.sku, 'out']]);
    expect(await listed(item.sku)).toEqual([[item.sku, 'in_stock']]);
    // and so does the sales' stock check: the stock figure as it is, available by the sellable lots
    const check = (
      await as.user
        .post('/api/sales/stock-check')
        .send({
          items: [
            { itemId: item.id, quantity: 2 },
            { itemId: expiredOnly.id, quantity: 1 },
          ],
        })
        .expect(200)
    ).body;
    expect(check).toMatchObject({
      allAvailable: false,
      items: [
        { itemId: item.id, available: false, currentStock: 6 },
        { itemId: expiredOnly.id, available: false, currentStock: 5 },
      ],
    });
  });

  it("fulfilment leaving out a line whose item has only expired lots records it short for stock, not the staff's choice", async () => {
    const requester = await buildUser(t.db, { role: 'requester' });
    const asRequester = await t.loginAs(requester);
    const requestCode = (await buildChargeCode(t.db, { authorisedEmails: [requester.email] })).code;
    const sellable = await trackedItem();
    await stockIn(sellable.id, 'GOOD', 4, day(200));
    const expiredOnly = await trackedItem();
    await stockIn(expiredOnly.id, 'OLD', 3, day(-1));
    const untracked = await trackedItem('none');

    const request = (
      await asRequester
        .post('/api/requests')
        .send({
          chargeCode: requestCode,
          items: [
            { itemId: sellable.id, quantity: 2 },
            { itemId: expiredOnly.id, quantity: 2 },
            { itemId: untracked.id, quantity: 2 },
          ],
        })
        .expect(201)
    ).body;
    const ready = (
      await as.user
        .post(`/api/requests/${request.id}/fulfil`)
        .send({ items: [{ itemId: sellable.id, quantity: 2 }] })
        .expect(200)
    ).body;
    expect(ready.shortfall).toEqual([
      expect.objectContaining({ itemId: expiredOnly.id, requested: '2.00', fulfilled: '0.00', reason: 'stock' }),
      expect.objectContaining({ itemId: untracked.id, requested: '2.00', fulfilled: '0.00', reason: 'staff' }),
    ]);
    expect(await lotQuantities(expiredOnly.id)).toEqual({ OLD: 3 });
  });
});
