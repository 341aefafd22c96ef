import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gs1CheckDigit, GS } from '../src/lib/gs1';
import { ledgerMismatches } from '../src/modules/items/items.queries';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory } from './helpers/factories';
import { agentsByRole, stockOf, type Agents } from './helpers/inventory-factories';
import { buildChargeCode } from './helpers/sales-factories';
import { createItem, day, stockInLot, yymmdd } from './helpers/lots-factories';

/*
 * Issue 42: a stocktake counts a lot-tracked item per lot. A GS1 scan counts its lot; a SKU or a
 * plain barcode needs lotNumber; posting adjusts each lot by its own variance, keeping a sale made
 * between the count and the posting, as for an item not tracked by lot.
 */

let t: TestApp;
let as: Agents;
let chargeCode: string;
let categoryId: number;

beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  chargeCode = (await buildChargeCode(t.db)).code;
  categoryId = (await buildCategory(t.db)).id;
});
afterAll(() => t.close());

let serial = 0;
/** A lot-tracked item with a GTIN-14 barcode of its own, and its lots stocked in. */
async function trackedItem(lots: { lotNumber: string; quantity: number; expiresOn: string | null }[]) {
  serial += 1;
  const { id, sku } = await createItem(as.manager, {
    categoryId,
    prefix: 'STL',
    name: (sku) => `Reagent ${sku}`,
    price: '4.00',
  });
  const body = `0${String(Date.now() % 1e9).padStart(9, '0')}${String(serial % 1000).padStart(3, '0')}`;
  const gtin = `${body}${gs1CheckDigit(body)}`;
  await as.manager.post(`/api/items/${id}/barcodes`).send({ code: gtin }).expect(201);
  for (const lot of lots) await stockInLot(as.manager, id, lot.lotNumber, lot.quantity, lot.expiresOn).expect(200);
  return { id, sku, gtin };
}

/** A bottle's GS1 DataMatrix as a wedge scanner types it: (01) GTIN, (17) expiry, (10) lot, no brackets. */
const gs1 = (gtin: string, lotNumber: string, expiresOn: string) =>
  `01${gtin}17${yymmdd(expiresOn)}10${lotNumber}${GS}`;

async function create(itemIds: number[]) {
  const res = await as.manager.post('/api/stocktakes').send({ scope: { itemIds } }).expect(201);
  return res.body as { id: number; reference: string };
}

const count = (id: number, body: object) => as.user.post(`/api/stocktakes/${id}/counts`).send(body);

type Line = { itemId: number; lotNumber: string | null; expiresOn: string | null; expected: number; counted: number };
const linesOf = async (id: number) =>
  ((await as.manager.get(`/api/stocktakes/${id}`).expect(200)).body.lines as Line[]).map((l) => ({
    lotNumber: l.lotNumber,
    expiresOn: l.expiresOn,
    expected: l.expected,
    counted: l.counted,
  }));

const lotQuantities = async (id: number) =>
  Object.fromEntries(
    ((await as.user.get(`/api/items/${id}/lots?includeEmpty=true`).expect(200)).body as Line[]).map((lot) => [
      lot.lotNumber,
      (lot as unknown as { quantity: number }).quantity,
    ]),
  );

/** The item's movements (by reason, or a sale's) with each lot they moved, oldest first. */
const lotMovements = (itemId: number, reason: string) =>
  t
    .db('stock_movements as m')
    .join('stock_movement_lots as ml', 'ml.movement_id', 'm.id')
    .where('m.item_id', itemId)
    .modify((q) => (reason === 'sale' ? q.where('m.reference_type', 'sale') : q.where('m.reason', reason)))
    .orderBy('m.id')
    .select('m.type', 'm.quantity', 'ml.lot_number', 'ml.quantity as lot_quantity');

const sell = (itemId: number, quantity: number) =>
  as.user
    .post('/api/sales')
    .send({ chargeCode, items: [{ itemId, quantity }], vatApplied: false })
    .expect(201);

describe('counting a lot-tracked item', () => {
  it('a GS1 scan counts its lot: the first lot takes the item line, each further lot has its own; expected is the lot', async () => {
    const soon = day(60);
    const later = day(400);
    const item = await trackedItem([
      { lotNumber: 'A100', quantity: 5, expiresOn: soon },
      { lotNumber: 'B200', quantity: 3, expiresOn: later },
    ]);
    const st = await create([item.id]);

    // three bottles of A100 by GS1 scan with its GS separator, one typed bracketed
    for (let i = 0; i < 2; i += 1) await count(st.id, { code: gs1(item.gtin, 'A100', soon), quantity: 1 }).expect(200);
    const third = await count(st.id, { code: `(01)${item.gtin}(17)${yymmdd(soon)}(10)A100`, quantity: 1 }).expect(200);
    expect(third.body).toMatchObject({ itemId: item.id, lotNumber: 'A100', expiresOn: soon, counted: 3, found: false });
    expect(third.body.count).toMatchObject({ lotNumber: 'A100', quantity: 1, counted: 3 });
    // B200 by its scan too; a lot the item does not have yet (C300), with the scan's expiry
    await count(st.id, { code: gs1(item.gtin, 'B200', later), quantity: 3 }).expect(200);
    const fresh = await count(st.id, { code: gs1(item.gtin, 'C300', day(700)), quantity: 2 }).expect(200);
    expect(fresh.body).toMatchObject({ lotNumber: 'C300', expiresOn: day(700), expected: 0, counted: 2, found: false });

    expect(await linesOf(st.id)).toEqual([
      { lotNumber: 'A100', expiresOn: soon, expected: 5, counted: 3 },
      { lotNumber: 'B200', expiresOn: later, expected: 3, counted: 3 },
      { lotNumber: 'C300', expiresOn: day(700), expected: 0, counted: 2 },
    ]);
    const read = (await as.manager.get(`/api/stocktakes/${st.id}`).expect(200)).body;
    expect(read.totals).toMatchObject({ linesTotal: 3, linesCounted: 3, itemsWithVariance: 2 });
    // a scan whose expiry is not its lot's is refused
    const wrong = await count(st.id, { code: gs1(item.gtin, 'A100', day(90)), quantity: 1 }).expect(409);
    expect(wrong.body.message).toBe(`Lot A100 of ${item.sku} expires on ${soon}, not ${day(90)}`);
  });

  it('a SKU or a plain barcode of a tracked item is 400 without lotNumber, and counts the lot named', async () => {
    const item = await trackedItem([{ lotNumber: 'L1', quantity: 4, expiresOn: day(100) }]);
    const st = await create([item.id]);
    for (const code of [item.sku, item.gtin]) {
      const res = await count(st.id, { code, quantity: 1 }).expect(400);
      expect(res.body).toEqual({ message: `Lot number is required for ${item.sku}` });
    }
    const byId = await count(st.id, { itemId: item.id, quantity: 1 }).expect(400);
    expect(byId.body).toEqual({ message: `Lot number is required for ${item.sku}` });
    expect(await t.db('stocktake_counts').where({ stocktake_id: st.id })).toEqual([]);

    await count(st.id, { code: item.sku, lotNumber: 'L1', quantity: 2 }).expect(200);
    const typed = await count(st.id, { code: item.gtin, lotNumber: 'L1', quantity: 1 }).expect(200);
    expect(typed.body).toMatchObject({ lotNumber: 'L1', expected: 4, counted: 3 });
    // an item not tracked by lot takes no lot
    const plain = await as.manager
      .post('/api/items')
      .send({ name: 'Beaker', sku: `BKR-${Date.now()}`, categoryId, price: '1.00', currentStock: 2 })
      .expect(201);
    const refused = await count(st.id, { itemId: plain.body.id, lotNumber: 'L1', quantity: 1 }).expect(400);
    expect(refused.body.message).toBe(`${plain.body.sku} is not tracked by lot`);
  });

  it('undoing the last scan of the only lot counted gives the item its line back, uncounted', async () => {
    const item = await trackedItem([{ lotNumber: 'U1', quantity: 2, expiresOn: null }]);
    const st = await create([item.id]);
    const scan = await count(st.id, { code: item.sku, lotNumber: 'U1', quantity: 2 }).expect(200);
    const undone = await as.user.delete(`/api/stocktakes/${st.id}/counts/${scan.body.count.id}`).expect(200);
    expect(undone.body.line).toMatchObject({ lotNumber: null, counted: null });
    expect(await linesOf(st.id)).toEqual([{ lotNumber: null, expiresOn: null, expected: null, counted: null }]);
  });
});

describe('posting a per-lot stocktake', () => {
  it('adjusts each lot by its own variance, creates a lot counted that the item did not have, and zeroes none it was not told to', async () => {
    const item = await trackedItem([
      { lotNumber: 'P1', quantity: 6, expiresOn: day(50) },
      { lotNumber: 'P2', quantity: 4, expiresOn: day(300) },
      { lotNumber: 'P3', quantity: 2, expiresOn: null },
    ]);
    const st = await create([item.id]);
    await count(st.id, { code: gs1(item.gtin, 'P1', day(50)), quantity: 5 }).expect(200);
    await count(st.id, { code: gs1(item.gtin, 'P2', day(300)), quantity: 6 }).expect(200);
    await count(st.id, { code: gs1(item.gtin, 'NEW9', day(500)), quantity: 1 }).expect(200);

    const posted = await as.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(200);
    expect(posted.body).toMatchObject({ itemsCounted: 3, itemsAdjusted: 3, movements: 3 });
    // P1 -1, P2 +2, NEW9 created with 1 and the scan's expiry; P3 not counted, left alone
    expect(await lotQuantities(item.id)).toEqual({ P1: 5, P2: 6, P3: 2, NEW9: 1 });
    const lots = (await as.user.get(`/api/items/${item.id}/lots`).expect(200)).body as Line[];
    expect(lots.find((l) => l.lotNumber === 'NEW9')).toMatchObject({ expiresOn: day(500) });
    expect(await stockOf(t.db, item.id)).toBe('14.00');

    // one adjustment movement per lot, each recording its lot's share
    expect(await lotMovements(item.id, `Stocktake ${st.reference}`)).toEqual([
      { type: 'adjustment', quantity: '-1.00', lot_number: 'P1', lot_quantity: '-1.00' },
      { type: 'adjustment', quantity: '2.00', lot_number: 'P2', lot_quantity: '2.00' },
      { type: 'adjustment', quantity: '1.00', lot_number: 'NEW9', lot_quantity: '1.00' },
    ]);
    expect(await ledgerMismatches(t.db)).toEqual({ count: 0, skus: null });
  });

  it('keeps a sale made between count and post: FEFO took it from a counted lot, which ends at counted - sold', async () => {
    const item = await trackedItem([
      { lotNumber: 'S-EARLY', quantity: 5, expiresOn: day(40) },
      { lotNumber: 'S-LATE', quantity: 5, expiresOn: day(400) },
    ]);
    const st = await create([item.id]);
    // on the shelf: 4 of the early lot (one missing), 5 of the late one
    await count(st.id, { code: gs1(item.gtin, 'S-EARLY', day(40)), quantity: 4 }).expect(200);
    await count(st.id, { code: gs1(item.gtin, 'S-LATE', day(400)), quantity: 5 }).expect(200);
    // the counter sells 3 before the posting: first expiry first, all from S-EARLY
    await sell(item.id, 3);
    expect(await lotMovements(item.id, 'sale')).toEqual([
      { type: 'out', quantity: '-3.00', lot_number: 'S-EARLY', lot_quantity: '-3.00' },
    ]);
    expect(await lotQuantities(item.id)).toEqual({ 'S-EARLY': 2, 'S-LATE': 5 });

    await as.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(200);
    // S-EARLY: counted 4 less the 3 sold since; S-LATE as counted
    expect(await lotQuantities(item.id)).toEqual({ 'S-EARLY': 1, 'S-LATE': 5 });
    expect(await stockOf(t.db, item.id)).toBe('6.00');
    expect(await ledgerMismatches(t.db)).toEqual({ count: 0, skus: null });
  });

  it('refuses the post when more of a lot was sold since its count than counted, naming the lot', async () => {
    const item = await trackedItem([
      { lotNumber: 'R1', quantity: 3, expiresOn: day(30) },
      { lotNumber: 'R2', quantity: 5, expiresOn: day(300) },
    ]);
    const st = await create([item.id]);
    await count(st.id, { code: gs1(item.gtin, 'R1', day(30)), quantity: 1 }).expect(200);
    await sell(item.id, 2);
    const refused = await as.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(409);
    expect(refused.body.message).toBe(
      `Stocktake line ${item.sku} lot R1 would leave stock below zero: counted 1, expected 3, stock now 1; recount it`,
    );
    expect(await lotQuantities(item.id)).toEqual({ R1: 1, R2: 5 });
    expect((await t.db('stocktakes').where({ id: st.id }).first()).status).toBe('open');
  });

  it('uncounted: zero empties the lots holding stock that nobody counted, and an item nobody counted', async () => {
    const counted = await trackedItem([
      { lotNumber: 'Z1', quantity: 2, expiresOn: day(30) },
      { lotNumber: 'Z2', quantity: 3, expiresOn: day(300) },
    ]);
    const untouched = await trackedItem([
      { lotNumber: 'Y1', quantity: 1, expiresOn: day(30) },
      { lotNumber: 'Y2', quantity: 4, expiresOn: null },
    ]);
    const st = await create([counted.id, untouched.id]);
    await count(st.id, { code: gs1(counted.gtin, 'Z2', day(300)), quantity: 3 }).expect(200);
    await as.manager.post(`/api/stocktakes/${st.id}/post`).send({ uncounted: 'zero' }).expect(200);
    expect(await lotQuantities(counted.id)).toEqual({ Z1: 0, Z2: 3 });
    expect(await lotQuantities(untouched.id)).toEqual({ Y1: 0, Y2: 0 });
    expect(await stockOf(t.db, untouched.id)).toBe('0.00');
    const lines = (await as.manager.get(`/api/stocktakes/${st.id}`).expect(200)).body.lines as Line[];
    expect(lines.map((l) => [l.lotNumber, l.expected, l.counted])).toEqual(
      expect.arrayContaining([
        ['Z1', 2, 0],
        ['Z2', 3, 3],
        ['Y1', 1, 0],
        ['Y2', 4, 0],
      ]),
    );
    expect(lines).toHaveLength(4);
    expect(await ledgerMismatches(t.db)).toEqual({ count: 0, skus: null });
  });
});
