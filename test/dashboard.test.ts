import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { agentsByRole, buildStockedItem, type Agents } from './helpers/inventory-factories';

let t: TestApp;
let as: Agents;
let tools: { id: number; name: string };
let empty: { id: number; name: string };
let low: { id: number };
let out: { id: number };
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  await buildUser(t.db, { isActive: false });
  tools = await buildCategory(t.db, { name: 'Tools', color: 'orange' });
  empty = await buildCategory(t.db, { name: 'Empty', color: 'grey' });
  await buildStockedItem(t.db, 10, { categoryId: tools.id, price: '2.50', minimumStock: 2 }); // 25.00, fine
  low = await buildStockedItem(t.db, '1.5', { categoryId: tools.id, price: '10.00', minimumStock: 3, name: 'Low one' }); // 15.00, low
  out = await buildItem(t.db, { categoryId: tools.id, price: '99.99', minimumStock: 1, name: 'Out one' }); // 0, low
  await buildStockedItem(t.db, 100, { categoryId: tools.id, price: '1.00', isActive: false }); // ignored: inactive
});
afterAll(() => t.close());

describe('GET /api/dashboard/stats', () => {
  it('401 without a session', () => t.request.get('/api/dashboard/stats').expect(401));
  it('200 counts active items, low stock, value as a number and active users', async () => {
    const res = await as.user.get('/api/dashboard/stats').expect(200);
    expect(res.body).toEqual({ totalItems: 3, lowStockItems: 2, totalValue: 40, activeUsers: 3 });
  });
});

describe('GET /api/dashboard/low-stock', () => {
  it('200 lists active items at or below minimum, furthest below first', async () => {
    const res = await as.user.get('/api/dashboard/low-stock').expect(200);
    expect(res.body).toEqual([
      { id: low.id, name: 'Low one', sku: expect.any(String), currentStock: 1.5, minimumStock: 3, price: '10.00', category: { id: tools.id, name: 'Tools', color: 'orange' } },
      { id: out.id, name: 'Out one', sku: expect.any(String), currentStock: 0, minimumStock: 1, price: '99.99', category: { id: tools.id, name: 'Tools', color: 'orange' } },
    ]);
  });
  it('401 without a session', () => t.request.get('/api/dashboard/low-stock').expect(401));
});

describe('GET /api/dashboard/category-stats', () => {
  it('200 per category: active item count and value, including empty categories', async () => {
    const res = await as.user.get('/api/dashboard/category-stats').expect(200);
    expect(res.body).toEqual([
      { category: { id: empty.id, name: 'Empty', color: 'grey' }, itemCount: 0, totalValue: 0 },
      { category: { id: tools.id, name: 'Tools', color: 'orange' }, itemCount: 3, totalValue: 40 },
    ]);
  });
  it('401 without a session', () => t.request.get('/api/dashboard/category-stats').expect(401));
});
