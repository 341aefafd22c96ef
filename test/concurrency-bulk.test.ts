import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildStockedItem, movementsOf, stockOf } from './helpers/inventory-factories';

let t: TestApp;
let manager: supertest.Agent;
let cashiers: supertest.Agent[];
let code: string;
let categories: number[];
beforeAll(async () => {
  t = await testApp();
  manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  cashiers = await Promise.all([1, 2, 3].map(async () => t.loginAs(await buildUser(t.db, { role: 'user' }))));
  code = (await buildChargeCode(t.db)).code;
  categories = [(await buildCategory(t.db)).id, (await buildCategory(t.db)).id];
});
afterAll(() => t.close());

describe('bulk updates and sales on the same items at once', () => {
  it('20 rounds of bulk updates racing sales: every request succeeds (no 500, no 503), stock and movements reconcile', async () => {
    const items = await Promise.all(
      Array.from({ length: 6 }, () => buildStockedItem(t.db, 1000, { categoryId: categories[0], price: '1.00' })),
    );
    const ids = items.map((i) => i.id);
    const descending = [...ids].reverse();
    const sold = new Map<number, number>(ids.map((id) => [id, 0]));
    const sale = (agent: supertest.Agent, lines: number[]) => {
      for (const id of lines) sold.set(id, sold.get(id)! + 1);
      return agent
        .post('/api/sales')
        .send({ chargeCode: code, items: lines.map((itemId) => ({ itemId, quantity: 1 })), vatApplied: false });
    };
    const statuses: number[] = [];
    for (let round = 0; round < 20; round += 1) {
      const results = await Promise.all([
        manager
          .post('/api/items/bulk/change-vat-rate')
          .send({ itemIds: descending, vatRate: round % 2 ? '0.2000' : '0.0500' }),
        sale(cashiers[0], ids),
        manager
          .post('/api/items/bulk/change-category')
          .send({ itemIds: descending, categoryId: categories[round % 2] }),
        sale(cashiers[1], descending),
        manager.post('/api/items/bulk/set-active').send({ itemIds: [ids[3], ids[0], ids[5], ids[1]] }),
        sale(cashiers[2], [ids[4], ids[2], ids[0]]),
      ]);
      for (const r of results) {
        if (r.status >= 500) throw new Error(`round ${round}: ${r.status} ${JSON.stringify(r.body)}`);
        statuses.push(r.status);
      }
    }
    expect(statuses.filter((s) => s !== 200 && s !== 201)).toEqual([]);
    expect(await t.db('sales').count<{ count: number }[]>('* as count')).toEqual([{ count: 60 }]);
    for (const id of ids) {
      const movements = await movementsOf(t.db, id);
      expect(movements).toHaveLength(1 + sold.get(id)!);
      expect(await stockOf(t.db, id)).toBe(`${1000 - sold.get(id)!}.00`);
      // each movement chains from the one before, and they sum to the stock
      movements.forEach((m, i) => {
        if (i > 0) expect(m.previous_stock).toBe(movements[i - 1].new_stock);
      });
      expect(movements.reduce((sum, m) => sum + Number(m.quantity), 0)).toBe(1000 - sold.get(id)!);
    }
    const lastCategory = categories[19 % 2];
    expect(await t.db('items').whereIn('id', ids).pluck('category_id')).toEqual(ids.map(() => lastCategory));
  });
});
