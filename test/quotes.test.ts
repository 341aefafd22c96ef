import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { buildChargeCode, sessionId } from './helpers/sales-factories';

let t: TestApp;
let user: supertest.Agent;
let other: supertest.Agent;
let manager: supertest.Agent;
let code: string;
beforeAll(async () => {
  t = await testApp();
  user = await t.loginAs(await buildUser(t.db));
  other = await t.loginAs(await buildUser(t.db));
  manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  code = (await buildChargeCode(t.db)).code;
});
afterAll(() => t.close());

describe('POST /api/sales/quotes', () => {
  it('200 saves a draft with lines copied from the items and amounts rounded half-up per line', async () => {
    const a = await buildItem(t.db, { name: 'Beaker', sku: 'BK-1', price: '3.33', currentStock: 10 });
    const b = await buildItem(t.db, { name: 'Tip', sku: 'TP-1', price: '0.05', vatRate: '0.0500', currentStock: 10 });
    const sid = sessionId();
    const res = await user
      .post('/api/sales/quotes')
      .send({
        chargeCode: code,
        sessionId: sid,
        customerNotes: 'for lab 3',
        items: [
          { itemId: a.id, quantity: 1.5 },
          { itemId: b.id, quantity: '0.5' },
        ],
      })
      .expect(200);
    expect(res.body.message).toBe('Draft quote saved');
    expect(res.body.quote).toMatchObject({
      id: expect.any(Number),
      quoteId: expect.stringMatching(/^Q\d{8}-\d+$/),
      chargeCode: code,
      status: 'draft',
      vatApplied: true,
      customerNotes: 'for lab 3',
      // 1.5 x 3.33 = 4.995 -> 5.00, VAT 1.00; 0.5 x 0.05 = 0.025 -> 0.03, VAT 0.0015 -> 0.00
      subtotalAmount: '5.03',
      vatAmount: '1.00',
      totalAmount: '6.03',
    });
    expect(res.body.quote.items).toEqual([
      expect.objectContaining({
        itemId: a.id,
        itemName: 'Beaker',
        itemSku: 'BK-1',
        quantity: '1.50',
        unitPrice: '3.33',
        vatRate: '0.2000',
        subtotal: '5.00',
        vatAmount: '1.00',
        totalWithVat: '6.00',
      }),
      expect.objectContaining({
        itemId: b.id,
        itemName: 'Tip',
        itemSku: 'TP-1',
        quantity: '0.50',
        unitPrice: '0.05',
        vatRate: '0.0500',
        subtotal: '0.03',
        vatAmount: '0.00',
        totalWithVat: '0.03',
      }),
    ]);
  });

  it('200 a repeated save replaces the same draft (same id and quoteId)', async () => {
    const item = await buildItem(t.db, { price: '2.00' });
    const sid = sessionId();
    const first = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sid, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(200);
    const second = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sid, vatApplied: false, items: [{ itemId: item.id, quantity: 3 }] })
      .expect(200);
    expect(second.body.quote.id).toBe(first.body.quote.id);
    expect(second.body.quote.quoteId).toBe(first.body.quote.quoteId);
    expect(second.body.quote).toMatchObject({
      subtotalAmount: '6.00',
      vatAmount: '0.00',
      totalAmount: '6.00',
      vatApplied: false,
    });
    expect(await t.db('quote_items').where({ quote_id: first.body.quote.id })).toHaveLength(1);
  });

  it('concurrent saves of one session leave one draft with one set of lines', async () => {
    const item = await buildItem(t.db);
    const sid = sessionId();
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((q) =>
        user.post('/api/sales/quotes').send({
          chargeCode: code,
          sessionId: sid,
          items: [
            { itemId: item.id, quantity: q },
            { itemId: item.id, quantity: 1 },
          ],
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const drafts = await t.db('quotes').where({ session_id: sid });
    expect(drafts).toHaveLength(1);
    expect(new Set(results.map((r) => r.body.quote.quoteId))).toEqual(new Set([drafts[0].quote_id]));
    expect(await t.db('quote_items').where({ quote_id: drafts[0].id })).toHaveLength(2);
  });

  it("another user's same sessionId never reaches the first user's draft", async () => {
    const item = await buildItem(t.db);
    const sid = sessionId();
    const mine = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sid, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(200);
    const theirs = await other
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sid, items: [{ itemId: item.id, quantity: 2 }] })
      .expect(200);
    expect(theirs.body.quote.id).not.toBe(mine.body.quote.id);
    const again = await user.get('/api/sales/quotes/current-draft').query({ sessionId: sid }).expect(200);
    expect(again.body.items[0].quantity).toBe('1.00');
  });

  it('400 field errors for missing fields, empty items and quantity <= 0', async () => {
    const missing = await user.post('/api/sales/quotes').send({}).expect(400);
    expect(missing.body.errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(['chargeCode', 'items', 'sessionId']),
    );
    const empty = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: 's', items: [] })
      .expect(400);
    expect(empty.body.errors).toContainEqual(expect.objectContaining({ field: 'items' }));
    const zero = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: 's', items: [{ itemId: 1, quantity: 0 }] })
      .expect(400);
    expect(zero.body.errors).toContainEqual(expect.objectContaining({ field: 'items.0.quantity' }));
    const negative = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: 's', items: [{ itemId: 1, quantity: -2 }] })
      .expect(400);
    expect(negative.body.errors).toContainEqual(expect.objectContaining({ field: 'items.0.quantity' }));
    const places = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: 's', items: [{ itemId: 1, quantity: '1.234' }] })
      .expect(400);
    expect(places.body.errors).toContainEqual(expect.objectContaining({ field: 'items.0.quantity' }));
  });

  it('400 field errors for an unknown or inactive item; nothing saved', async () => {
    const inactive = await buildItem(t.db, { name: 'Old stock', isActive: false });
    const sid = sessionId();
    const res = await user
      .post('/api/sales/quotes')
      .send({
        chargeCode: code,
        sessionId: sid,
        items: [
          { itemId: 999999, quantity: 1 },
          { itemId: inactive.id, quantity: 1 },
        ],
      })
      .expect(400);
    expect(res.body).toEqual({
      message: 'Validation failed',
      errors: [
        { field: 'items.0.itemId', message: 'Item 999999 does not exist' },
        { field: 'items.1.itemId', message: "Item 'Old stock' is inactive" },
      ],
    });
    expect(await t.db('quotes').where({ session_id: sid }).first()).toBeUndefined();
  });

  it('400 charge code checks with the spec messages (no list of codes on save)', async () => {
    const category = await buildCategory(t.db);
    const item = await buildItem(t.db, { categoryId: category.id });
    const expired = await buildChargeCode(t.db, {
      code: 'EXPIRED-1',
      validFrom: new Date('2025-01-01T00:00:00Z'),
      validUntil: new Date('2025-03-04T12:00:00Z'),
    });
    const future = await buildChargeCode(t.db, {
      code: 'FUTURE-1',
      validFrom: new Date('2099-07-08T00:00:00Z'),
      validUntil: new Date('2099-12-31T00:00:00Z'),
    });
    const held = await buildChargeCode(t.db, { code: 'HELD-1', onHold: true, holdReason: 'Budget frozen' });
    const excluding = await buildChargeCode(t.db, { code: 'EXCL-1', excludedCategoryIds: [category.id] });
    const save = (chargeCode: string) =>
      user
        .post('/api/sales/quotes')
        .send({ chargeCode, sessionId: sessionId(), items: [{ itemId: item.id, quantity: 1 }] })
        .expect(400);
    expect((await save('NO-SUCH')).body).toEqual({ message: "Invalid charge code: 'NO-SUCH' does not exist" });
    expect((await save(expired.code)).body.message).toBe("Charge code 'EXPIRED-1' has expired on 03/04/2025.");
    expect((await save(future.code)).body.message).toBe("Charge code 'FUTURE-1' is not yet valid until 07/08/2099.");
    expect((await save(held.code)).body.message).toBe("Charge code 'HELD-1' is on hold: Budget frozen");
    expect((await save(excluding.code)).body.message).toBe(
      "Charge code 'EXCL-1' cannot be used for some items in this quote due to category restrictions.",
    );
  });

  it('401 without a session', () => t.request.post('/api/sales/quotes').send({}).expect(401));
});

describe('GET /api/sales/quotes/current-draft', () => {
  it('200 the draft with lines; 404 for a session without one; 400 without sessionId', async () => {
    const item = await buildItem(t.db);
    const sid = sessionId();
    await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sid, items: [{ itemId: item.id, quantity: 2 }] })
      .expect(200);
    const res = await user.get('/api/sales/quotes/current-draft').query({ sessionId: sid }).expect(200);
    expect(res.body).toMatchObject({
      chargeCode: code,
      status: 'draft',
      sessionId: sid,
      items: [expect.objectContaining({ itemId: item.id, quantity: '2.00' })],
    });
    const none = await user.get('/api/sales/quotes/current-draft').query({ sessionId: 'nothing-here' }).expect(404);
    expect(none.body).toEqual({ message: 'No draft quote found for this session' });
    await other.get('/api/sales/quotes/current-draft').query({ sessionId: sid }).expect(404);
    await user.get('/api/sales/quotes/current-draft').expect(400);
    await t.request.get('/api/sales/quotes/current-draft').query({ sessionId: sid }).expect(401);
  });
});

describe('PATCH /api/sales/quotes/current-draft/charge-code', () => {
  it('200 changes only the charge code; 400 invalid code; 404 without a draft', async () => {
    const item = await buildItem(t.db);
    const sid = sessionId();
    const saved = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sid, items: [{ itemId: item.id, quantity: 2 }] })
      .expect(200);
    const next = await buildChargeCode(t.db, { code: 'NEXT-1' });
    const res = await user
      .patch('/api/sales/quotes/current-draft/charge-code')
      .send({ chargeCode: next.code, sessionId: sid })
      .expect(200);
    expect(res.body).toEqual({ message: 'Charge code updated', chargeCode: 'NEXT-1' });
    const row = await t.db('quotes').where({ id: saved.body.quote.id }).first();
    expect(row).toMatchObject({ charge_code: 'NEXT-1', total_amount: saved.body.quote.totalAmount });

    const bad = await user
      .patch('/api/sales/quotes/current-draft/charge-code')
      .send({ chargeCode: 'NOPE', sessionId: sid })
      .expect(400);
    expect(bad.body.message).toBe("Invalid charge code: 'NOPE' does not exist");
    const expired = await buildChargeCode(t.db, {
      code: 'OLD-1',
      validFrom: new Date('2025-12-01T00:00:00Z'),
      validUntil: new Date('2026-01-02T10:00:00Z'),
    });
    const old = await user
      .patch('/api/sales/quotes/current-draft/charge-code')
      .send({ chargeCode: expired.code, sessionId: sid })
      .expect(400);
    expect(old.body.message).toBe("Charge code 'OLD-1' has expired on 01/02/2026.");
    expect((await t.db('quotes').where({ id: saved.body.quote.id }).first()).charge_code).toBe('NEXT-1');

    const none = await user
      .patch('/api/sales/quotes/current-draft/charge-code')
      .send({ chargeCode: code, sessionId: 'none' })
      .expect(404);
    expect(none.body.message).toBe('No draft quote found for this session');
  });

  it("400 for a code on hold, not yet valid, or excluding a category of the draft's lines; the draft keeps its code", async () => {
    const category = await buildCategory(t.db);
    const item = await buildItem(t.db, { categoryId: category.id });
    const sid = sessionId();
    const saved = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sid, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(200);
    const change = (chargeCode: string) =>
      user.patch('/api/sales/quotes/current-draft/charge-code').send({ chargeCode, sessionId: sid }).expect(400);

    await buildChargeCode(t.db, { code: 'HELD-2', onHold: true, holdReason: 'Audit' });
    expect((await change('HELD-2')).body.message).toBe("Charge code 'HELD-2' is on hold: Audit");
    await buildChargeCode(t.db, {
      code: 'LATER-2',
      validFrom: new Date('2099-05-06T00:00:00Z'),
      validUntil: new Date('2099-12-31T00:00:00Z'),
    });
    expect((await change('LATER-2')).body.message).toBe("Charge code 'LATER-2' is not yet valid until 05/06/2099.");
    await buildChargeCode(t.db, { code: 'NOCAT-2', excludedCategoryIds: [category.id] });
    expect((await change('NOCAT-2')).body.message).toBe(
      "Charge code 'NOCAT-2' cannot be used for some items in this quote due to category restrictions.",
    );
    expect((await t.db('quotes').where({ id: saved.body.quote.id }).first()).charge_code).toBe(code);
  });
});

describe('DELETE /api/sales/quotes/current-draft', () => {
  it('200 removes the draft and its lines; 404 after', async () => {
    const item = await buildItem(t.db);
    const sid = sessionId();
    const saved = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sid, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(200);
    const res = await user.delete('/api/sales/quotes/current-draft').query({ sessionId: sid }).expect(200);
    expect(res.body).toEqual({ message: 'Draft quote deleted' });
    expect(await t.db('quote_items').where({ quote_id: saved.body.quote.id })).toHaveLength(0);
    const again = await user.delete('/api/sales/quotes/current-draft').query({ sessionId: sid }).expect(404);
    expect(again.body.message).toBe('No draft quote found for this session');
  });
});

describe('/api/sales/quotes and /api/sales/quotes/:id', () => {
  it('lists own quotes (managers see all), reads, updates and deletes', async () => {
    const item = await buildItem(t.db, { price: '1.00' });
    const owner = await buildUser(t.db);
    const agent = await t.loginAs(owner);
    const saved = await agent
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sessionId(), items: [{ itemId: item.id, quantity: 1 }] })
      .expect(200);
    const id = saved.body.quote.id;

    const own = await agent.get('/api/sales/quotes').expect(200);
    expect(own.body.quotes.map((q: { id: number }) => q.id)).toEqual([id]);
    const all = await manager.get('/api/sales/quotes').expect(200);
    expect(all.body.quotes.map((q: { id: number }) => q.id)).toContain(id);

    await agent.get(`/api/sales/quotes/${id}`).expect(200);
    const hidden = await other.get(`/api/sales/quotes/${id}`).expect(404);
    expect(hidden.body.message).toBe('Quote not found');
    await manager.get(`/api/sales/quotes/${id}`).expect(200);
    await agent.get('/api/sales/quotes/abc').expect(400);

    const updated = await agent
      .put(`/api/sales/quotes/${id}`)
      .send({ items: [{ itemId: item.id, quantity: 4 }], customerNotes: 'x' })
      .expect(200);
    expect(updated.body).toMatchObject({
      message: 'Quote updated',
      quote: { id, subtotalAmount: '4.00', vatAmount: '0.80', totalAmount: '4.80', customerNotes: 'x' },
    });
    const noVat = await agent.put(`/api/sales/quotes/${id}`).send({ vatApplied: false }).expect(200);
    expect(noVat.body.quote).toMatchObject({ totalAmount: '4.00', vatAmount: '0.00' });
    const badCode = await agent.put(`/api/sales/quotes/${id}`).send({ chargeCode: 'NOPE' }).expect(400);
    expect(badCode.body.message).toBe("Invalid charge code: 'NOPE' does not exist");
    await other.put(`/api/sales/quotes/${id}`).send({ vatApplied: true }).expect(404);

    await other.delete(`/api/sales/quotes/${id}`).expect(404);
    expect((await agent.delete(`/api/sales/quotes/${id}`).expect(200)).body).toEqual({ message: 'Quote deleted' });
    await agent.get(`/api/sales/quotes/${id}`).expect(404);
    await agent.delete(`/api/sales/quotes/${id}`).expect(404);
  });

  it("PUT 400 when the quote's lines fall in a category the code excludes, whether the lines or the code change", async () => {
    const [allowed, barred] = [await buildCategory(t.db), await buildCategory(t.db)];
    const [ok, no] = [
      await buildItem(t.db, { categoryId: allowed.id }),
      await buildItem(t.db, { categoryId: barred.id }),
    ];
    await buildChargeCode(t.db, { code: 'PUTX-1', excludedCategoryIds: [barred.id] });
    const saved = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: 'PUTX-1', sessionId: sessionId(), items: [{ itemId: ok.id, quantity: 1 }] })
      .expect(200);
    const id = saved.body.quote.id;
    const message = "Charge code 'PUTX-1' cannot be used for some items in this quote due to category restrictions.";
    expect(
      (
        await user
          .put(`/api/sales/quotes/${id}`)
          .send({ items: [{ itemId: no.id, quantity: 1 }] })
          .expect(400)
      ).body.message,
    ).toBe(message);

    const other = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sessionId(), items: [{ itemId: no.id, quantity: 1 }] })
      .expect(200);
    expect(
      (await user.put(`/api/sales/quotes/${other.body.quote.id}`).send({ chargeCode: 'PUTX-1' }).expect(400)).body
        .message,
    ).toBe(message);
    expect(await t.db('quote_items').where({ quote_id: id }).pluck('item_id')).toEqual([ok.id]);
    expect((await t.db('quotes').where({ id: other.body.quote.id }).first()).charge_code).toBe(code);
  });
});

describe('POST /api/sales/quotes when the database fails', () => {
  it("500 'Failed to create draft quote', and no draft is left", async () => {
    const broken = await testApp();
    try {
      const agent = await broken.loginAs(await buildUser(broken.db));
      const item = await buildItem(broken.db);
      const { code: brokenCode } = await buildChargeCode(broken.db);
      await broken.db.raw('ALTER TABLE quote_items RENAME TO quote_items_gone');
      const res = await agent
        .post('/api/sales/quotes')
        .send({ chargeCode: brokenCode, sessionId: sessionId(), items: [{ itemId: item.id, quantity: 1 }] })
        .expect(500);
      expect(res.body).toMatchObject({ message: 'Failed to create draft quote' });
      expect(await broken.db('quotes')).toHaveLength(0);
    } finally {
      await broken.close();
    }
  });
});
