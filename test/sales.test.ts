import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { buildChargeCode, grantPermission, sessionId, untilSomeoneWaitsOnALock } from './helpers/sales-factories';
import { stockOf } from './helpers/inventory-factories';
import type { UserRow } from '../src/modules/users/users.service';

let t: TestApp;
let clerk: UserRow;
let user: supertest.Agent;
let manager: supertest.Agent;
let admin: supertest.Agent;
let code: string;
beforeAll(async () => {
  t = await testApp();
  clerk = await buildUser(t.db, { firstName: 'Sam', lastName: 'Clerk' });
  user = await t.loginAs(clerk);
  manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
  code = (await buildChargeCode(t.db, { code: 'MAIN-1' })).code;
});
afterAll(() => t.close());

async function draft(
  agent: supertest.Agent,
  items: { itemId: number; quantity: number | string }[],
  chargeCode = code,
  extra = {},
) {
  const res = await agent
    .post('/api/sales/quotes')
    .send({ chargeCode, sessionId: sessionId(), items, ...extra })
    .expect(200);
  return res.body.quote as { id: number; quoteId: string; totalAmount: string };
}

const movementsFor = (saleId: string) =>
  t.db('stock_movements').where({ reference_type: 'sale', reference_id: saleId }).orderBy('id');

describe('POST /api/sales/quotes/:id/process', () => {
  it('200 creates the sale and lines, reduces stock through the ledger and removes the draft', async () => {
    const a = await buildItem(t.db, { name: 'Flask', sku: 'FL-1', price: '12.50', currentStock: 10 });
    const b = await buildItem(t.db, { name: 'Gloves', sku: 'GL-1', price: '0.99', currentStock: '3.5' });
    const quote = await draft(user, [
      { itemId: a.id, quantity: 2 },
      { itemId: b.id, quantity: '1.25' },
    ]);
    const res = await user.post(`/api/sales/quotes/${quote.id}/process`).expect(200);
    expect(res.body.message).toBe('Sale processed successfully');
    const sale = res.body.sale;
    expect(sale).toMatchObject({
      id: expect.any(Number),
      saleId: expect.stringMatching(/^SALE-\d{8}-\d+$/),
      chargeCode: code,
      quoteId: quote.quoteId,
      // 25.00 + VAT 5.00; 1.2375 -> 1.24 + VAT 0.248 -> 0.25
      subtotalAmount: '26.24',
      vatAmount: '5.25',
      totalAmount: '31.49',
      status: 'completed',
      isPaid: false,
      processedBy: { id: clerk.id, email: clerk.email, firstName: 'Sam', lastName: 'Clerk' },
    });
    expect(sale.items).toHaveLength(2);
    expect(Date.parse(sale.createdAt)).not.toBeNaN();

    expect(await stockOf(t.db, a.id)).toBe('8.00');
    expect(await stockOf(t.db, b.id)).toBe('2.25');
    const movements = await movementsFor(sale.saleId);
    expect(movements.map((m) => [m.item_id, m.type, m.quantity, m.reason])).toEqual([
      [a.id, 'out', '-2.00', `Sale ${sale.saleId}`],
      [b.id, 'out', '-1.25', `Sale ${sale.saleId}`],
    ]);
    expect(await t.db('quotes').where({ id: quote.id }).first()).toBeUndefined();
    expect(await t.db('quote_items').where({ quote_id: quote.id })).toHaveLength(0);

    const again = await user.post(`/api/sales/quotes/${quote.id}/process`).expect(404);
    expect(again.body).toEqual({ message: 'Quote not found' });
    expect(await t.db('sales').where({ quote_id: quote.quoteId })).toHaveLength(1);
  });

  it('400 when one line lacks stock: nothing changes (all or nothing)', async () => {
    const plenty = await buildItem(t.db, { currentStock: 100 });
    const scarce = await buildItem(t.db, { name: 'Rare reagent', currentStock: 1 });
    const quote = await draft(user, [
      { itemId: plenty.id, quantity: 5 },
      { itemId: scarce.id, quantity: 2 },
    ]);
    const res = await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400);
    expect(res.body).toEqual({ message: "Insufficient stock for item 'Rare reagent'. Current stock: 1, Required: 2" });
    expect(await stockOf(t.db, plenty.id)).toBe('100.00');
    expect(await stockOf(t.db, scarce.id)).toBe('1.00');
    expect(await t.db('stock_movements').whereIn('item_id', [plenty.id, scarce.id])).toHaveLength(0);
    expect(await t.db('quotes').where({ id: quote.id }).first()).toBeDefined();
    expect(await t.db('sales').where({ quote_id: quote.quoteId })).toHaveLength(0);
  });

  it('400 when two lines on one item exceed its stock together', async () => {
    const item = await buildItem(t.db, { name: 'Pipette', currentStock: 3 });
    const quote = await draft(user, [
      { itemId: item.id, quantity: 2 },
      { itemId: item.id, quantity: 2 },
    ]);
    const res = await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400);
    expect(res.body.message).toBe("Insufficient stock for item 'Pipette'. Current stock: 3, Required: 4");
    expect(await stockOf(t.db, item.id)).toBe('3.00');
  });

  it('200 two lines on one item within stock give one movement per line', async () => {
    const item = await buildItem(t.db, { currentStock: 4 });
    const quote = await draft(user, [
      { itemId: item.id, quantity: 1 },
      { itemId: item.id, quantity: 3 },
    ]);
    const res = await user.post(`/api/sales/quotes/${quote.id}/process`).expect(200);
    expect(await stockOf(t.db, item.id)).toBe('0.00');
    expect((await movementsFor(res.body.sale.saleId)).map((m) => [m.previous_stock, m.new_stock])).toEqual([
      ['4.00', '3.00'],
      ['3.00', '0.00'],
    ]);
  });

  it('400 charge code checks repeated on processing; the unknown-code message lists the available codes', async () => {
    const category = await buildCategory(t.db);
    const item = await buildItem(t.db, { categoryId: category.id, currentStock: 10 });
    const temp = await buildChargeCode(t.db, { code: 'TEMP-1' });
    const quote = await draft(user, [{ itemId: item.id, quantity: 1 }], temp.code);

    await t.db('charge_codes').where({ code: 'TEMP-1' }).update({ on_hold: true, hold_reason: 'Overspent' });
    expect((await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400)).body.message).toBe(
      "Charge code 'TEMP-1' is on hold: Overspent",
    );

    await t.db('charge_codes').where({ code: 'TEMP-1' }).update({ on_hold: false });
    await t.db('charge_code_exclusions').insert({ charge_code_id: temp.id, category_id: category.id });
    expect((await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400)).body.message).toBe(
      "Charge code 'TEMP-1' cannot be used for some items in this quote due to category restrictions.",
    );

    await t.db('charge_code_exclusions').where({ charge_code_id: temp.id }).delete();
    await t
      .db('charge_codes')
      .where({ code: 'TEMP-1' })
      .update({ valid_from: new Date('2026-01-01T00:00:00Z'), valid_until: new Date('2026-02-03T00:00:00Z') });
    expect((await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400)).body.message).toBe(
      "Charge code 'TEMP-1' has expired on 02/03/2026.",
    );
    await t
      .db('charge_codes')
      .where({ code: 'TEMP-1' })
      .update({ valid_from: new Date('2099-03-04T00:00:00Z'), valid_until: new Date('2099-12-31T00:00:00Z') });
    expect((await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400)).body.message).toBe(
      "Charge code 'TEMP-1' is not yet valid until 03/04/2099.",
    );

    await t.db('charge_codes').where({ code: 'TEMP-1' }).delete();
    const available = (
      await t
        .db('charge_codes')
        .where('on_hold', false)
        .where('valid_from', '<=', new Date())
        .where('valid_until', '>=', new Date())
        .orderBy('code')
        .pluck('code')
    ).join(', ');
    expect((await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400)).body.message).toBe(
      `Invalid charge code: 'TEMP-1' does not exist. Available codes: ${available}`,
    );
    expect(available).toContain('MAIN-1');
    expect(await stockOf(t.db, item.id)).toBe('10.00');
    expect(await t.db('quotes').where({ id: quote.id }).first()).toBeDefined();
  });

  it('400 when the quote has no charge code, or an item went away since the draft', async () => {
    const item = await buildItem(t.db, { name: 'Gone soon', currentStock: 5 });
    const quote = await draft(user, [{ itemId: item.id, quantity: 1 }]);
    await t.db('quotes').where({ id: quote.id }).update({ charge_code: null });
    expect((await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400)).body.message).toBe(
      'This quote is missing a charge code. Please edit the quote and add a charge code before processing.',
    );
    await t.db('quotes').where({ id: quote.id }).update({ charge_code: code });
    await t.db('items').where({ id: item.id }).update({ is_active: false });
    expect((await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400)).body.message).toBe(
      "Item 'Gone soon' is no longer available",
    );
    await t.db('items').where({ id: item.id }).delete();
    expect((await user.post(`/api/sales/quotes/${quote.id}/process`).expect(400)).body.message).toBe(
      "Item 'Gone soon' is no longer available",
    );
    expect(await t.db('quote_items').where({ quote_id: quote.id }).first()).toMatchObject({
      item_id: null,
      item_name: 'Gone soon',
    });
  });

  it('a hold committed while the sale waits on the charge code wins', async () => {
    const item = await buildItem(t.db, { currentStock: 5 });
    await buildChargeCode(t.db, { code: 'RACE-1' });
    const quote = await draft(user, [{ itemId: item.id, quantity: 1 }], 'RACE-1');
    const trx = await t.db.transaction();
    await trx('charge_codes').where({ code: 'RACE-1' }).update({ on_hold: true, hold_reason: 'Frozen just now' });
    const pending = user.post(`/api/sales/quotes/${quote.id}/process`).then((r) => r);
    await untilSomeoneWaitsOnALock(t.db);
    await trx.commit();
    const res = await pending;
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("Charge code 'RACE-1' is on hold: Frozen just now");
    expect(await stockOf(t.db, item.id)).toBe('5.00');
    expect(await t.db('quotes').where({ id: quote.id }).first()).toBeDefined();
  });

  it('an exclusion committed while the sale waits for its items wins', async () => {
    const category = await buildCategory(t.db);
    const item = await buildItem(t.db, { categoryId: category.id, currentStock: 5 });
    const { id: codeId } = await buildChargeCode(t.db, { code: 'RACE-2' });
    const quote = await draft(user, [{ itemId: item.id, quantity: 1 }], 'RACE-2');
    const trx = await t.db.transaction();
    await trx('items').where({ id: item.id }).update({ updated_at: trx.fn.now() });
    const pending = user.post(`/api/sales/quotes/${quote.id}/process`).then((r) => r);
    await untilSomeoneWaitsOnALock(t.db);
    await t.db('charge_code_exclusions').insert({ charge_code_id: codeId, category_id: category.id });
    await trx.commit();
    const res = await pending;
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      "Charge code 'RACE-2' cannot be used for some items in this quote due to category restrictions.",
    );
    expect(await stockOf(t.db, item.id)).toBe('5.00');
    expect(await t.db('quotes').where({ id: quote.id }).first()).toBeDefined();
    expect(await t.db('sales').where({ quote_id: quote.quoteId })).toHaveLength(0);
  });

  it('a save of the draft committed while processing waits on the quote is what gets sold, not the basket before it', async () => {
    const [oldItem, newItem] = [
      await buildItem(t.db, { name: 'Old basket', currentStock: 5 }),
      await buildItem(t.db, { name: 'New basket', currentStock: 5 }),
    ];
    const quote = await draft(user, [{ itemId: oldItem.id, quantity: 1 }]);
    // What a re-save of the draft does, held open: the quote row updated, its lines replaced.
    const trx = await t.db.transaction();
    await trx('quotes').where({ id: quote.id }).update({ updated_at: trx.fn.now(), customer_notes: 'changed my mind' });
    const [line] = await trx('quote_items').where({ quote_id: quote.id });
    await trx('quote_items').where({ quote_id: quote.id }).delete();
    await trx('quote_items').insert({
      ...line,
      id: undefined,
      item_id: newItem.id,
      item_name: 'New basket',
      quantity: '2.00',
    });
    const pending = user.post(`/api/sales/quotes/${quote.id}/process`).then((r) => r);
    await untilSomeoneWaitsOnALock(t.db);
    await trx.commit();
    const res = await pending;
    expect(res.status).toBe(200);
    const sale = (await admin.get(`/api/sales/${res.body.sale.id}`).expect(200)).body;
    expect(sale).toMatchObject({
      customerNotes: 'changed my mind',
      items: [expect.objectContaining({ itemId: newItem.id, quantity: '2.00' })],
    });
    expect(sale.items).toHaveLength(1);
    expect([await stockOf(t.db, oldItem.id), await stockOf(t.db, newItem.id)]).toEqual(['5.00', '3.00']);
    expect(await t.db('quotes').where({ id: quote.id }).first()).toBeUndefined();
  });

  it("404 for an unknown id or another user's quote; 401 anonymous", async () => {
    const item = await buildItem(t.db, { currentStock: 5 });
    const quote = await draft(user, [{ itemId: item.id, quantity: 1 }]);
    const stranger = await t.loginAs(await buildUser(t.db));
    expect((await stranger.post(`/api/sales/quotes/${quote.id}/process`).expect(404)).body.message).toBe(
      'Quote not found',
    );
    await user.post('/api/sales/quotes/999999/process').expect(404);
    await t.request.post(`/api/sales/quotes/${quote.id}/process`).expect(401);
    expect(await stockOf(t.db, item.id)).toBe('5.00');
  });

  it('never oversells: 20 parallel processes at stock 5 make exactly 5 sales', async () => {
    const item = await buildItem(t.db, { currentStock: 5 });
    const agents = await Promise.all(Array.from({ length: 4 }, async () => t.loginAs(await buildUser(t.db))));
    const quotes = [];
    for (let i = 0; i < 20; i += 1)
      quotes.push({ agent: agents[i % 4], quote: await draft(agents[i % 4], [{ itemId: item.id, quantity: 1 }]) });
    const results = await Promise.all(
      quotes.map(({ agent, quote }) => agent.post(`/api/sales/quotes/${quote.id}/process`)),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(5);
    expect(
      results.filter((r) => r.status === 400).every((r) => r.body.message.startsWith("Insufficient stock for item '")),
    ).toBe(true);
    expect(results.filter((r) => r.status !== 200 && r.status !== 400)).toHaveLength(0);
    expect(await stockOf(t.db, item.id)).toBe('0.00');
    const movements = await t.db('stock_movements').where({ item_id: item.id });
    expect(movements).toHaveLength(5);
    const lines = await t.db('sale_items').where({ item_id: item.id });
    expect(lines).toHaveLength(5);
    for (const r of ok) expect(movements.filter((m) => m.reference_id === r.body.sale.saleId)).toHaveLength(1);
    expect(new Set(ok.map((r) => r.body.sale.saleId)).size).toBe(5);
  });

  it('processing does not wait for a draft line insert in flight on the same item (no FK lock conflict)', async () => {
    const [a, b] = [await buildItem(t.db, { currentStock: 10 }), await buildItem(t.db, { currentStock: 10 })];
    const other = await draft(user, [{ itemId: a.id, quantity: 1 }]);
    const quote = await draft(user, [
      { itemId: a.id, quantity: 1 },
      { itemId: b.id, quantity: 1 },
    ]);
    // An uncommitted line insert holds a KEY SHARE lock on item b (its foreign-key check).
    const trx = await t.db.transaction();
    try {
      await trx('quote_items').insert({
        quote_id: other.id,
        item_id: b.id,
        item_name: 'x',
        item_sku: 'x',
        quantity: 1,
        unit_price: 1,
        vat_rate: 0,
        vat_amount: 0,
        subtotal: 1,
        total_with_vat: 1,
      });
      // With FOR UPDATE item locks this request would wait for trx (and deadlock with a second insert).
      const res = await user.post(`/api/sales/quotes/${quote.id}/process`);
      expect(res.status).toBe(200);
    } finally {
      await trx.rollback();
    }
    expect(await stockOf(t.db, b.id)).toBe('9.00');
  });

  it('a double submission of one quote makes one sale', async () => {
    const item = await buildItem(t.db, { currentStock: 10 });
    const quote = await draft(user, [{ itemId: item.id, quantity: 1 }]);
    const results = await Promise.all([1, 2, 3].map(() => user.post(`/api/sales/quotes/${quote.id}/process`)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404]);
    expect(await stockOf(t.db, item.id)).toBe('9.00');
  });
});

describe('POST /api/sales', () => {
  it('201 records a sale from lines with the processing checks', async () => {
    const item = await buildItem(t.db, { price: '4.00', currentStock: 2 });
    const res = await user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 2 }], vatApplied: false })
      .expect(201);
    expect(res.body).toMatchObject({
      message: 'Sale created successfully',
      sale: { totalAmount: '8.00', vatAmount: '0.00', quoteId: null, status: 'completed' },
    });
    expect(await stockOf(t.db, item.id)).toBe('0.00');
    const short = await user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(400);
    expect(short.body.message).toMatch(/^Insufficient stock for item/);
    const unknown = await user
      .post('/api/sales')
      .send({ chargeCode: 'NOPE', items: [{ itemId: item.id, quantity: 1 }] })
      .expect(400);
    expect(unknown.body.message).toMatch(/^Invalid charge code: 'NOPE' does not exist\. Available codes: /);
    await user.post('/api/sales').send({ chargeCode: code, items: [] }).expect(400);
    await t.request.post('/api/sales').send({}).expect(401);
  });

  it('never oversells: 12 parallel sales of two items, in either order, at stock 3 make exactly 3', async () => {
    const [a, b] = [await buildItem(t.db, { currentStock: 3 }), await buildItem(t.db, { currentStock: 3 })];
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const lines = [
          { itemId: a.id, quantity: 1 },
          { itemId: b.id, quantity: 1 },
        ];
        return user
          .post('/api/sales')
          .send({ chargeCode: code, items: i % 2 ? lines.reverse() : lines })
          .then((r) => r);
      }),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(3).fill(201), ...Array(9).fill(400)]);
    for (const refused of results.filter((r) => r.status === 400))
      expect(refused.body.message).toMatch(/^Insufficient stock for item/);
    expect([await stockOf(t.db, a.id), await stockOf(t.db, b.id)]).toEqual(['0.00', '0.00']);
    const sold = await t.db('sale_items').whereIn('item_id', [a.id, b.id]);
    expect(sold).toHaveLength(6);
    expect(await t.db('stock_movements').whereIn('item_id', [a.id, b.id]).where({ type: 'out' })).toHaveLength(6);
  });
});

describe('GET /api/sales and /api/sales/:id', () => {
  it('200 pages and filters; reads one sale with lines; 404 unknown', async () => {
    const listCode = (await buildChargeCode(t.db, { code: 'LISTONLY-77' })).code;
    const item = await buildItem(t.db, { currentStock: 10 });
    const created = [];
    for (let i = 0; i < 3; i += 1) {
      created.push(
        (
          await user
            .post('/api/sales')
            .send({ chargeCode: listCode, items: [{ itemId: item.id, quantity: 1 }] })
            .expect(201)
        ).body.sale,
      );
    }
    const page = await user.get('/api/sales').query({ chargeCode: 'listonly', limit: 2, page: 1 }).expect(200);
    expect(page.body.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect(page.body.sales.map((s: { id: number }) => s.id)).toEqual([created[2].id, created[1].id]);
    const today = new Date().toISOString().slice(0, 10);
    const dated = await user
      .get('/api/sales')
      .query({ chargeCode: 'LISTONLY', startDate: today, endDate: today })
      .expect(200);
    expect(dated.body.pagination.total).toBe(3);
    const none = await user.get('/api/sales').query({ chargeCode: 'LISTONLY', endDate: '2020-01-01' }).expect(200);
    expect(none.body.pagination.total).toBe(0);
    await user.get('/api/sales').query({ limit: 101 }).expect(400);
    await user.get('/api/sales').query({ startDate: 'yesterday' }).expect(400);

    const one = await user.get(`/api/sales/${created[0].id}`).expect(200);
    expect(one.body).toMatchObject({
      id: created[0].id,
      saleId: created[0].saleId,
      items: [expect.objectContaining({ itemId: item.id, quantity: '1.00', refundedQuantity: '0.00' })],
    });
    expect((await user.get('/api/sales/999999').expect(404)).body.message).toBe('Sale not found');
    await user.get('/api/sales/abc').expect(400);
  });
});

describe('PATCH /api/sales/:id/paid, /unpaid, /recipient', () => {
  it('paid by a manager, unpaid by an admin only, recipient by anyone signed in', async () => {
    const item = await buildItem(t.db, { currentStock: 10 });
    const sale = (
      await user
        .post('/api/sales')
        .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }] })
        .expect(201)
    ).body.sale;

    await user.patch(`/api/sales/${sale.id}/paid`).expect(403);
    const paid = await manager.patch(`/api/sales/${sale.id}/paid`).expect(200);
    expect(paid.body).toMatchObject({
      message: 'Sale marked as paid',
      id: sale.id,
      saleId: sale.saleId,
      isPaid: true,
      status: 'paid',
      sale: { id: sale.id, isPaid: true, status: 'paid' },
    });
    expect(Date.parse(paid.body.updatedAt)).not.toBeNaN();

    await manager.patch(`/api/sales/${sale.id}/unpaid`).expect(403);
    const unpaid = await admin.patch(`/api/sales/${sale.id}/unpaid`).expect(200);
    expect(unpaid.body).toMatchObject({
      message: 'Sale marked as unpaid',
      sale: { id: sale.id, saleId: sale.saleId, isPaid: false, status: 'completed' },
    });
    await manager.patch('/api/sales/999999/paid').expect(404);
    await admin.patch('/api/sales/999999/unpaid').expect(404);
    await t.request.patch(`/api/sales/${sale.id}/paid`).expect(401);

    const missing = await user.patch(`/api/sales/${sale.id}/recipient`).send({}).expect(400);
    expect(missing.body.errors).toContainEqual(expect.objectContaining({ field: 'deliveredTo' }));
    const rec = await user
      .patch(`/api/sales/${sale.id}/recipient`)
      .send({ deliveredTo: 'Dr Who', deliveredToEmail: 'who@example.ac.uk' })
      .expect(200);
    expect(rec.body).toMatchObject({
      message: 'Recipient recorded',
      sale: { id: sale.id, saleId: sale.saleId, deliveredTo: 'Dr Who', deliveredToEmail: 'who@example.ac.uk' },
    });
    expect(Date.parse(rec.body.sale.deliveredAt)).not.toBeNaN();
    await user.patch('/api/sales/999999/recipient').send({ deliveredTo: 'x' }).expect(404);
  });
});

describe('PATCH /api/sales/:id/refund', () => {
  it('partial then full refund: stock back through the ledger, notes, status and refunded totals', async () => {
    const refunder = await buildUser(t.db);
    await grantPermission(t.db, refunder.id, 'sales.refund');
    const agent = await t.loginAs(refunder);
    const a = await buildItem(t.db, { name: 'Tube', price: '3.33', currentStock: 10 });
    const b = await buildItem(t.db, { name: 'Rack', price: '10.00', currentStock: 10 });
    const sale = (
      await user
        .post('/api/sales')
        .send({
          chargeCode: code,
          items: [
            { itemId: a.id, quantity: 3 },
            { itemId: b.id, quantity: 1 },
          ],
        })
        .expect(201)
    ).body.sale;
    // Tube: 9.99 + 2.00 = 11.99; Rack: 10.00 + 2.00 = 12.00
    expect(sale.totalAmount).toBe('23.99');

    const first = await agent
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: a.id, refundQty: 1 }], note: 'Cracked' })
      .expect(200);
    expect(first.body).toEqual({
      message: 'Sale partially refunded',
      sale: {
        id: sale.id,
        saleId: sale.saleId,
        totalAmount: '23.99',
        refundedAmount: '4.00',
        status: 'partially_refunded',
      },
      refundedItems: [{ itemId: a.id, itemName: 'Tube', refundedQty: 1, stockRestored: true }],
    });
    expect(await stockOf(t.db, a.id)).toBe('8.00');
    const back = await t.db('stock_movements').where({ item_id: a.id, type: 'in' });
    expect(back.map((m) => [m.quantity, m.reason, m.reference_id])).toEqual([
      ['1.00', `Refund of sale ${sale.saleId}`, sale.saleId],
    ]);
    const notes = await t.db('notes').where({ reference_type: 'sale', reference_id: String(sale.id) });
    expect(notes).toHaveLength(1);
    expect(notes[0].text).toContain('1 x Tube');
    expect(notes[0].text).toContain('Cracked');
    expect(notes[0].created_by).toBe(refunder.id);

    const over = await agent
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: a.id, refundQty: 3 }] })
      .expect(400);
    expect(over.body.message).toBe("Cannot refund 3 of 'Tube': only 2 left to refund");
    const unknown = await agent
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: 999999, refundQty: 1 }] })
      .expect(400);
    expect(unknown.body.message).toBe(`Item 999999 is not part of sale ${sale.saleId}`);
    await agent
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: a.id, refundQty: 0 }] })
      .expect(400);
    await agent.patch(`/api/sales/${sale.id}/refund`).send({ items: [] }).expect(400);
    expect(await stockOf(t.db, a.id)).toBe('8.00');

    const rest = await agent
      .patch(`/api/sales/${sale.id}/refund`)
      .send({
        items: [
          { itemId: a.id, refundQty: 2 },
          { itemId: b.id, refundQty: 1 },
        ],
      })
      .expect(200);
    expect(rest.body.sale).toMatchObject({ status: 'refunded', refundedAmount: '23.99' });
    expect(await stockOf(t.db, a.id)).toBe('10.00');
    expect(await stockOf(t.db, b.id)).toBe('10.00');
    const read = await user.get(`/api/sales/${sale.id}`).expect(200);
    expect(read.body.items.map((l: { refundedQuantity: string }) => l.refundedQuantity)).toEqual(['3.00', '1.00']);
    const done = await agent
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: a.id, refundQty: 1 }] })
      .expect(400);
    expect(done.body.message).toBe('Sale has already been fully refunded');
    expect(await t.db('notes').where({ reference_type: 'sale', reference_id: String(sale.id) })).toHaveLength(2);
  });

  it('403 without the permission, 404 unknown sale, 401 anonymous; admins hold the permission', async () => {
    const item = await buildItem(t.db, { currentStock: 5 });
    const sale = (
      await user
        .post('/api/sales')
        .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }] })
        .expect(201)
    ).body.sale;
    await manager
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: 1 }] })
      .expect(403);
    await t.request
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: 1 }] })
      .expect(401);
    await admin
      .patch('/api/sales/999999/refund')
      .send({ items: [{ itemId: item.id, refundQty: 1 }] })
      .expect(404);
    await admin
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: '0.5' }] })
      .expect(200);
    expect(await stockOf(t.db, item.id)).toBe('4.50');
  });
});
