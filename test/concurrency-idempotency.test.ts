import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildStockedItem, movementsOf, stockOf } from './helpers/inventory-factories';

let t: TestApp;
let user: supertest.Agent;
let other: supertest.Agent;
let code: string;
let categoryId: number;
beforeAll(async () => {
  t = await testApp();
  [user, other] = await Promise.all([1, 2].map(async () => t.loginAs(await buildUser(t.db, { role: 'user' }))));
  code = (await buildChargeCode(t.db)).code;
  categoryId = (await buildCategory(t.db)).id;
});
afterAll(() => t.close());

const item = (stock = 10) => buildStockedItem(t.db, stock, { categoryId, price: '3.00' });
const saleBody = (itemId: number, quantity = 2) => ({
  chargeCode: code,
  items: [{ itemId, quantity }],
  vatApplied: false,
});
const salesOfItem = (itemId: number) => t.db('sale_items').where({ item_id: itemId }).pluck('sale_id');
let keys = 0;
const newKey = () => `sale-${Date.now()}-${(keys += 1)}`;

describe('POST /api/sales with Idempotency-Key', () => {
  it('201 and the same body for a retry with the same key: one sale, stock moved once', async () => {
    const { id } = await item();
    const key = newKey();
    const first = await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id)).expect(201);
    const again = await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id)).expect(201);
    expect(again.body).toEqual(first.body);
    expect(first.body).toMatchObject({ message: 'Sale created successfully', sale: { totalAmount: '6.00' } });
    expect(await salesOfItem(id)).toEqual([first.body.sale.id]);
    expect(await stockOf(t.db, id)).toBe('8.00');
    expect(await movementsOf(t.db, id)).toHaveLength(2);
    expect(await t.db('sale_idempotency_keys').where({ key })).toEqual([
      expect.objectContaining({ sale_id: first.body.sale.id }),
    ]);
  });

  it('409 for the same key with a different body; nothing more recorded', async () => {
    const { id } = await item();
    const key = newKey();
    await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id, 1)).expect(201);
    const res = await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id, 3)).expect(409);
    expect(res.body).toEqual({
      message:
        'This Idempotency-Key was already used for a different sale; nothing was recorded. Use a new key for a new sale.',
    });
    expect(await salesOfItem(id)).toHaveLength(1);
    expect(await stockOf(t.db, id)).toBe('9.00');
  });

  it('concurrent duplicates with one key record exactly one sale, and all answer it', async () => {
    const { id } = await item();
    const key = newKey();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id))),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(new Set(results.map((r) => r.body.sale.saleId)).size).toBe(1);
    expect(await salesOfItem(id)).toHaveLength(1);
    expect(await stockOf(t.db, id)).toBe('8.00');
    expect(await movementsOf(t.db, id)).toHaveLength(2);
  });

  it('a key is per user: another user with the same key records their own sale', async () => {
    const { id } = await item();
    const key = newKey();
    const a = await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id)).expect(201);
    const b = await other.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id)).expect(201);
    expect(b.body.sale.id).not.toBe(a.body.sale.id);
    expect(await stockOf(t.db, id)).toBe('6.00');
  });

  it('a key older than 24 hours is forgotten: the same request records a new sale', async () => {
    const { id } = await item();
    const key = newKey();
    const first = await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id)).expect(201);
    await t
      .db('sale_idempotency_keys')
      .where({ key })
      .update({ created_at: t.db.raw(`now() - interval '24 hours 1 minute'`) });
    const later = await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id)).expect(201);
    expect(later.body.sale.id).not.toBe(first.body.sale.id);
    expect(await salesOfItem(id)).toHaveLength(2);
    expect(await stockOf(t.db, id)).toBe('6.00');
  });

  it('a refused request keeps no key: after the stock arrives the same key records the sale', async () => {
    const { id } = await item(1);
    const key = newKey();
    const refused = await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id)).expect(400);
    expect(refused.body.message).toContain('Insufficient stock');
    expect(await t.db('sale_idempotency_keys').where({ key })).toHaveLength(0);
    await t.db('items').where({ id }).update({ current_stock: 5 });
    await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id)).expect(201);
    expect(await salesOfItem(id)).toHaveLength(1);
  });

  it('400 for a key that is empty, over 200 characters or not printable; nothing recorded', async () => {
    const { id } = await item();
    for (const key of ['', 'k'.repeat(201), 'tab\there', 'café']) {
      const res = await user.post('/api/sales').set('Idempotency-Key', key).send(saleBody(id)).expect(400);
      expect(res.body).toEqual({
        message: 'Validation failed',
        errors: [{ field: 'idempotency-key', message: 'must be 1 to 200 printable characters' }],
      });
    }
    await user.post('/api/sales').set('Idempotency-Key', 'k'.repeat(200)).send(saleBody(id)).expect(201);
    expect(await salesOfItem(id)).toHaveLength(1);
  });

  it('without the header every request records a sale, as before', async () => {
    const { id } = await item();
    await user.post('/api/sales').send(saleBody(id)).expect(201);
    await user.post('/api/sales').send(saleBody(id)).expect(201);
    expect(await salesOfItem(id)).toHaveLength(2);
  });
});
