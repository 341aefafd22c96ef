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
      {
        id: low.id,
        name: 'Low one',
        sku: expect.any(String),
        currentStock: 1.5,
        minimumStock: 3,
        price: '10.00',
        category: { id: tools.id, name: 'Tools', color: 'orange' },
      },
      {
        id: out.id,
        name: 'Out one',
        sku: expect.any(String),
        currentStock: 0,
        minimumStock: 1,
        price: '99.99',
        category: { id: tools.id, name: 'Tools', color: 'orange' },
      },
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

describe('one low-stock rule everywhere', () => {
  // Its own database: the items here would change the figures the tests above assert.
  let own: TestApp;
  let user: Awaited<ReturnType<TestApp['loginAs']>>;
  beforeAll(async () => {
    own = await testApp();
    user = await own.loginAs(await buildUser(own.db));
  });
  afterAll(() => own.close());

  it('200 the dashboard list and count, the sales low-stock report, the notifications and the system alerts name the same items', async () => {
    const category = await buildCategory(own.db, { name: 'Rule' });
    const build = (name: string, stock: number | string, minimumStock: number | string, isActive = true) =>
      buildStockedItem(own.db, stock, { categoryId: category.id, name, sku: `RULE-${name}`, minimumStock, isActive });
    const below = await build('below', 1, 4); // shortfall 3
    const atMinimum = await build('at-minimum', 2, 2); // shortfall 0
    const empty = await build('empty', 0, 1); // out of stock, shortfall 1
    const emptyNoMinimum = await build('empty-no-minimum', 0, 0); // out of stock, shortfall 0
    await build('above', '2.01', 2);
    await build('inactive-below', 1, 5, false);

    const largestShortfallFirst = [below.id, empty.id, atMinimum.id, emptyNoMinimum.id];
    const dashboard = (await user.get('/api/dashboard/low-stock').expect(200)).body as { id: number }[];
    expect(dashboard.map((i) => i.id)).toEqual(largestShortfallFirst);
    const report = (await user.get('/api/sales/low-stock-report').expect(200)).body as {
      items: { id: number; shortfall: number }[];
      total: number;
    };
    expect(report.items.map((i) => i.id)).toEqual(largestShortfallFirst);
    expect(report.items.map((i) => i.shortfall)).toEqual([3, 1, 0, 0]);
    expect(report.total).toBe(4);

    const notifications = (await user.get('/api/notifications/low-stock').expect(200)).body as {
      notifications: { itemId: number; type: string }[];
    };
    // out of stock first, then as the lists
    expect(notifications.notifications.map((n) => [n.itemId, n.type])).toEqual([
      [empty.id, 'out_of_stock'],
      [emptyNoMinimum.id, 'out_of_stock'],
      [below.id, 'low_stock'],
      [atMinimum.id, 'low_stock'],
    ]);

    expect((await user.get('/api/dashboard/stats').expect(200)).body.lowStockItems).toBe(4);
    expect((await user.get('/api/system/alerts').expect(200)).body.alerts).toEqual([
      { type: 'out_of_stock', level: 'critical', message: '2 items are out of stock' },
      { type: 'low_stock', level: 'warning', message: '2 items are at or below minimum stock' },
    ]);
  });
});
