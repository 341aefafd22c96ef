import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gs1CheckDigit } from '../src/lib/gs1';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { agentsByRole, stockOf, type Agents } from './helpers/inventory-factories';
import { buildChargeCode, sessionId } from './helpers/sales-factories';
import { createItem, day, stockInLot } from './helpers/lots-factories';

/*
 * Issue 42: a quote line may name its lot (a GS1 scan at the counter, or `lotNumber` through the
 * quote API). The lot is checked as a sale line naming its lot is, with the same messages, and
 * processing the quote sells from exactly that lot.
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

async function item(tracking: 'lot' | 'none' = 'lot'): Promise<{ id: number; sku: string; name: string }> {
  const { id, sku, name } = await createItem(as.manager, {
    categoryId,
    prefix: 'LQ',
    name: (sku) => `Ethanol ${sku}`,
    price: '4.00',
    tracking,
    body: { currentStock: tracking === 'none' ? 10 : 0 },
  });
  return { id, sku, name };
}

const stockIn = (id: number, lotNumber: string, quantity: number, expiresOn: string | null) =>
  stockInLot(as.manager, id, lotNumber, quantity, expiresOn).expect(200);

const lotQuantities = async (id: number) =>
  Object.fromEntries(
    (
      (await as.user.get(`/api/items/${id}/lots?includeEmpty=true`).expect(200)).body as {
        lotNumber: string;
        quantity: number;
      }[]
    ).map((lot) => [lot.lotNumber, lot.quantity]),
  );

type Line = { itemId: number; quantity: number; lotNumber?: string };
const saveDraft = (items: Line[], sid = sessionId()) =>
  as.user.post('/api/sales/quotes').send({ chargeCode: code, sessionId: sid, items, vatApplied: false });

const quoteCount = async () => Number((await t.db('quotes').count({ n: '*' }))[0].n);

describe('POST /api/sales/quotes: a line naming its lot', () => {
  it('200 keeps the lot on the line (null on a line without one); processing sells from exactly that lot', async () => {
    const ethanol = await item();
    await stockIn(ethanol.id, 'SOON', 4, day(20));
    await stockIn(ethanol.id, 'LATE', 6, day(300));

    const saved = await saveDraft([
      { itemId: ethanol.id, quantity: 2, lotNumber: 'LATE' },
      { itemId: ethanol.id, quantity: 1 },
    ]).expect(200);
    expect(saved.body.quote.items).toEqual([
      expect.objectContaining({ itemId: ethanol.id, quantity: '2.00', lotNumber: 'LATE' }),
      expect.objectContaining({ itemId: ethanol.id, quantity: '1.00', lotNumber: null }),
    ]);
    const quoteId = saved.body.quote.id as number;
    const read = await as.user.get(`/api/sales/quotes/${quoteId}`).expect(200);
    expect(read.body.items.map((l: { lotNumber: string | null }) => l.lotNumber)).toEqual(['LATE', null]);

    const processed = await as.user.post(`/api/sales/quotes/${quoteId}/process`).expect(200);
    const sale = (await as.user.get(`/api/sales/${processed.body.sale.id}`).expect(200)).body;
    // the named line took LATE although SOON expires first; the other line took SOON, first expiry first
    expect(sale.items.map((l: { lots: unknown }) => l.lots)).toEqual([
      [{ lotNumber: 'LATE', expiresOn: day(300), quantity: 2 }],
      [{ lotNumber: 'SOON', expiresOn: day(20), quantity: 1 }],
    ]);
    const movements = (
      await as.user.get(`/api/stock-movements?referenceType=sale&referenceId=${sale.saleId}`).expect(200)
    ).body.movements as { quantity: number; lots: unknown }[];
    // one movement a line (the list is newest first): in quantity order here
    expect(movements.map((m) => [m.quantity, m.lots]).sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual([
      [-2, [{ lotNumber: 'LATE', expiresOn: day(300), quantity: -2 }]],
      [-1, [{ lotNumber: 'SOON', expiresOn: day(20), quantity: -1 }]],
    ]);
    expect(await lotQuantities(ethanol.id)).toEqual({ SOON: 3, LATE: 4 });
    expect(await stockOf(t.db, ethanol.id)).toBe('7.00');
  });

  it("409 for an expired or a quarantined lot and 404 for an unknown one, with the sales API's messages; nothing saved", async () => {
    const ethanol = await item();
    await stockIn(ethanol.id, 'GOOD', 5, day(90));
    await stockIn(ethanol.id, 'OLD', 4, day(-1));
    await stockIn(ethanol.id, 'HELD', 3, day(120));
    await t
      .db('stock_lots')
      .where({ item_id: ethanol.id, lot_number: 'HELD' })
      .update({ quarantined_at: t.db.fn.now() });
    const before = await quoteCount();

    const expired = await saveDraft([
      { itemId: ethanol.id, quantity: 1, lotNumber: 'GOOD' },
      { itemId: ethanol.id, quantity: 1, lotNumber: 'OLD' },
    ]).expect(409);
    expect(expired.body.message).toBe(`Lot OLD of ${ethanol.sku} is expired`);
    const quarantined = await saveDraft([{ itemId: ethanol.id, quantity: 1, lotNumber: 'HELD' }]).expect(409);
    expect(quarantined.body.message).toBe(`Lot HELD of ${ethanol.sku} is quarantined`);
    const unknown = await saveDraft([{ itemId: ethanol.id, quantity: 1, lotNumber: 'NOPE' }]).expect(404);
    expect(unknown.body.message).toBe(`Lot NOPE of ${ethanol.sku} not found`);

    // the sales API answers the same for the same lines
    const sold = await as.user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: ethanol.id, quantity: 1, lotNumber: 'OLD' }] })
      .expect(409);
    expect(sold.body.message).toBe(expired.body.message);
    expect(await quoteCount()).toBe(before);
    expect(await lotQuantities(ethanol.id)).toEqual({ GOOD: 5, OLD: 4, HELD: 3 });
  });

  it('400 when the item is not tracked by lot; a blank lot number is a field error', async () => {
    const plain = await item('none');
    const before = await quoteCount();
    const refused = await saveDraft([{ itemId: plain.id, quantity: 1, lotNumber: 'L1' }]).expect(400);
    expect(refused.body.message).toBe(`${plain.sku} is not tracked by lot`);
    const blank = await saveDraft([{ itemId: plain.id, quantity: 1, lotNumber: ' ' }]).expect(400);
    expect(blank.body.errors).toEqual([{ field: 'items.0.lotNumber', message: 'is required' }]);
    expect(await quoteCount()).toBe(before);
    expect(await stockOf(t.db, plain.id)).toBe('10.00');
  });

  it('a lot that expires after it was put on the quote: processing is refused 409 and sells nothing', async () => {
    const ethanol = await item();
    await stockIn(ethanol.id, 'TURNS', 3, day(30));
    const saved = await saveDraft([{ itemId: ethanol.id, quantity: 1, lotNumber: 'TURNS' }]).expect(200);
    await t
      .db('stock_lots')
      .where({ item_id: ethanol.id, lot_number: 'TURNS' })
      .update({ expires_on: day(-1) });

    const refused = await as.user.post(`/api/sales/quotes/${saved.body.quote.id}/process`).expect(409);
    expect(refused.body.message).toBe(`Lot TURNS of ${ethanol.sku} is expired`);
    expect(await lotQuantities(ethanol.id)).toEqual({ TURNS: 3 });
    await as.user.get(`/api/sales/quotes/${saved.body.quote.id}`).expect(200);
  });
});

describe('PUT /api/sales/quotes/{id}: lines naming their lot', () => {
  it('200 replaces the lines with their lots; an expired lot is 409 and the quote keeps its lines', async () => {
    const ethanol = await item();
    await stockIn(ethanol.id, 'A1', 5, day(60));
    await stockIn(ethanol.id, 'B2', 5, day(200));
    await stockIn(ethanol.id, 'GONE', 2, day(-3));
    const saved = await saveDraft([{ itemId: ethanol.id, quantity: 1 }]).expect(200);
    const id = saved.body.quote.id as number;

    const updated = await as.user
      .put(`/api/sales/quotes/${id}`)
      .send({
        items: [
          { itemId: ethanol.id, quantity: 1, lotNumber: 'A1' },
          { itemId: ethanol.id, quantity: 2, lotNumber: 'B2' },
        ],
      })
      .expect(200);
    expect(updated.body.quote.items.map((l: { lotNumber: string }) => l.lotNumber)).toEqual(['A1', 'B2']);

    const refused = await as.user
      .put(`/api/sales/quotes/${id}`)
      .send({ items: [{ itemId: ethanol.id, quantity: 1, lotNumber: 'GONE' }] })
      .expect(409);
    expect(refused.body.message).toBe(`Lot GONE of ${ethanol.sku} is expired`);

    // a change that leaves the lines keeps their lots
    const notes = await as.user.put(`/api/sales/quotes/${id}`).send({ customerNotes: 'lab 4' }).expect(200);
    expect(
      notes.body.quote.items.map((l: { lotNumber: string; quantity: string }) => [l.lotNumber, l.quantity]),
    ).toEqual([
      ['A1', '1.00'],
      ['B2', '2.00'],
    ]);
    await as.user.post(`/api/sales/quotes/${id}/process`).expect(200);
    expect(await lotQuantities(ethanol.id)).toEqual({ A1: 4, B2: 3, GONE: 2 });
  });
});

/*
 * The counter's early warning ("Only N in stock", issue 42 leftover): what a line of an item tracked
 * by lot is compared with is what processing would sell, its sellable lots (neither expired nor
 * quarantined), or for a line naming its lot that lot's sellable quantity.
 */
describe('the counter: the stock warning of a line tracked by lot', () => {
  /** A person's own counter (its basket is their session's), and a scan as the counter's form posts it. */
  async function counter(): Promise<{ scan: (code: string) => Promise<void>; warnings: () => Promise<string[]> }> {
    const agent: supertest.Agent = await t.loginAs(await buildUser(t.db));
    const page = async () => (await agent.get('/counter').expect(200)).text;
    return {
      async scan(code) {
        const csrf = /name="_csrf" value="([^"]+)"/.exec(await page())![1];
        const res = await agent.post('/counter/add').type('form').send({ _csrf: csrf, sku: code });
        expect(res.status).toBeLessThan(400);
      },
      warnings: async () =>
        [...(await page()).matchAll(/<span class="badge danger">(Only [^<]+)<\/span>/g)].map((m) => m[1]),
    };
  }

  it('compares a line with the sellable lots, not the stock in an expired lot', async () => {
    const acetone = await item();
    await stockIn(acetone.id, 'PAST', 5, day(-1));
    await stockIn(acetone.id, 'GOOD', 1, day(200));
    const { scan, warnings } = await counter();
    await scan(acetone.sku);
    expect(await warnings()).toEqual([]);
    await scan(acetone.sku);
    // 6 in stock, 1 of it for sale: a line of 2 is warned as processing would refuse it
    expect(await warnings()).toEqual(['Only 1 in stock']);
  });

  it('compares a line naming its lot with that lot', async () => {
    const ethanol = await item();
    const body = `97${String(Date.now()).slice(-11)}`;
    const gtin = body + gs1CheckDigit(body);
    await as.manager.post(`/api/items/${ethanol.id}/barcodes`).send({ code: gtin }).expect(201);
    await stockIn(ethanol.id, 'ONE', 1, day(200));
    await stockIn(ethanol.id, 'MANY', 5, day(300));
    const { scan, warnings } = await counter();
    const bottle = `01${gtin}10ONE\x1d17${day(200).slice(2).replaceAll('-', '')}`;
    await scan(bottle);
    expect(await warnings()).toEqual([]);
    await scan(bottle);
    // the item has 6 for sale, but the line takes lot ONE only, which holds 1
    expect(await warnings()).toEqual(['Only 1 in stock']);
  });
});
