import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildItem } from './helpers/factories';
import { agentsByRole, buildStockedItem, type Agents } from './helpers/inventory-factories';

let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
});
afterAll(() => t.close());
// The list holds every low item: each test starts from an empty inventory, whatever ran before it.
beforeEach(() => t.db.raw('TRUNCATE items CASCADE'));

type N = { itemId: number; acknowledged: boolean; level: string; type: string };
const list = async () =>
  (await as.user.get('/api/notifications/low-stock').expect(200)).body as {
    notifications: N[];
    total: number;
    unacknowledged: number;
  };
const entry = async (itemId: number) => (await list()).notifications.find((n) => n.itemId === itemId);
const stock = (id: number, type: string, quantity: number) =>
  as.manager.post(`/api/items/${id}/stock`).send({ type, quantity, reason: 'test' }).expect(200);

describe('GET /api/notifications/low-stock', () => {
  it('401 without a session', () => t.request.get('/api/notifications/low-stock').expect(401));
  it('200 lists active items at or below minimum, out of stock first and critical', async () => {
    const low = await buildStockedItem(t.db, 2, { minimumStock: 5 });
    const out = await buildItem(t.db, { minimumStock: 1 });
    await buildStockedItem(t.db, 9, { minimumStock: 5 });
    await buildItem(t.db, { minimumStock: 1, isActive: false });
    const body = await list();
    expect(body.notifications.map((n) => n.itemId)).toEqual([out.id, low.id]);
    expect(body.notifications[0]).toMatchObject({
      type: 'out_of_stock',
      level: 'critical',
      acknowledged: false,
      currentStock: 0,
      minimumStock: 1,
    });
    expect(body.notifications[1]).toMatchObject({
      type: 'low_stock',
      level: 'warning',
      currentStock: 2,
      minimumStock: 5,
    });
    expect(body).toMatchObject({ total: 2, unacknowledged: 2 });
  });
});

describe('POST /api/notifications/low-stock/:itemId/acknowledge', () => {
  it('200 acknowledges; the item drops off once back above minimum; a new episode is unacknowledged', async () => {
    const item = await buildStockedItem(t.db, 1, { minimumStock: 3 });
    const res = await as.manager.post(`/api/notifications/low-stock/${item.id}/acknowledge`).expect(200);
    expect(res.body).toMatchObject({ itemId: item.id, acknowledged: true, acknowledgedBy: as.ids.manager });
    expect(await entry(item.id)).toMatchObject({ acknowledged: true });
    await stock(item.id, 'out', 1);
    expect(await entry(item.id)).toMatchObject({ acknowledged: true, type: 'out_of_stock' });
    await stock(item.id, 'in', 10);
    expect(await entry(item.id)).toBeUndefined();
    await stock(item.id, 'out', 9);
    expect(await entry(item.id)).toMatchObject({ acknowledged: false });
  });
  it('401 without a session', () => t.request.post('/api/notifications/low-stock/1/acknowledge').expect(401));

  it('400 when the item is not low; 404 unknown; 403 for a user', async () => {
    const fine = await buildStockedItem(t.db, 10, { minimumStock: 1 });
    const notLow = await as.manager.post(`/api/notifications/low-stock/${fine.id}/acknowledge`).expect(400);
    expect(notLow.body).toEqual({
      message: `Item '${fine.name}' is not low on stock; there is nothing to acknowledge`,
    });
    expect((await as.manager.post('/api/notifications/low-stock/999999/acknowledge').expect(404)).body).toEqual({
      message: 'Item not found',
    });
    expect((await as.user.post(`/api/notifications/low-stock/${fine.id}/acknowledge`).expect(403)).body).toEqual({
      message: 'This action requires the manager role',
    });
    expect(await t.db('low_stock_acknowledgements').where({ item_id: fine.id })).toHaveLength(0);
  });
});

describe('DELETE /api/notifications/low-stock', () => {
  it('200 clears acknowledged alerts and keeps unacknowledged ones', async () => {
    const acked = await buildItem(t.db, { minimumStock: 2 });
    const open = await buildItem(t.db, { minimumStock: 2 });
    await as.manager.post(`/api/notifications/low-stock/${acked.id}/acknowledge`).expect(200);
    const res = await as.manager.delete('/api/notifications/low-stock').expect(200);
    expect(res.body.cleared).toBeGreaterThanOrEqual(1);
    expect(await entry(acked.id)).toBeUndefined();
    expect(await entry(open.id)).toMatchObject({ acknowledged: false });
  });
  it('403 for a user; 401 without a session', async () => {
    const acked = await buildItem(t.db, { minimumStock: 2 });
    await as.manager.post(`/api/notifications/low-stock/${acked.id}/acknowledge`).expect(200);
    expect((await as.user.delete('/api/notifications/low-stock').expect(403)).body).toEqual({
      message: 'This action requires the manager role',
    });
    expect((await t.request.delete('/api/notifications/low-stock').expect(401)).body).toEqual({
      message: 'Authentication required',
    });
    expect(await entry(acked.id)).toMatchObject({ acknowledged: true });
  });
});
