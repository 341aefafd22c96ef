import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeStock } from '../src/modules/stock-movements/stock-movements.ledger';
import { itemStock } from '../src/modules/items/items.queries';
import { testApp, type TestApp } from './helpers/app';
import { buildItem } from './helpers/factories';
import { agentsByRole, type Agents } from './helpers/inventory-factories';

let t: TestApp;
let as: Agents;
let item: { id: number; name: string; sku: string };
let other: { id: number };
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  item = await buildItem(t.db);
  other = await buildItem(t.db);
  await changeStock(t.db, itemStock, {
    itemId: item.id,
    type: 'in',
    quantity: 10,
    reason: 'delivery',
    performedBy: as.ids.manager,
  });
  await changeStock(t.db, itemStock, {
    itemId: item.id,
    type: 'out',
    quantity: 3,
    reason: 'sale',
    performedBy: as.ids.manager,
    reference: { type: 'sale', id: 'SALE-1' },
  });
  await changeStock(t.db, itemStock, {
    itemId: other.id,
    type: 'adjustment',
    quantity: 5,
    reason: 'count',
    performedBy: null,
  });
  // an old movement, for the date filters
  await t
    .db('stock_movements')
    .where({ item_id: other.id })
    .update({ created_at: new Date('2026-01-15T12:00:00Z') });
});
afterAll(() => t.close());

type M = { id: number; itemId: number; type: string };

describe('GET /api/stock-movements', () => {
  it('401 without a session', () => t.request.get('/api/stock-movements').expect(401));

  it('200 newest first, wrapped in movements, both item and performer forms', async () => {
    const res = await as.user.get('/api/stock-movements').expect(200);
    const ids = res.body.movements.map((m: M) => m.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    expect(res.body.movements.find((m: M) => m.type === 'out')).toMatchObject({
      itemId: item.id,
      item: { id: item.id, name: item.name, sku: item.sku },
      itemName: item.name,
      itemSku: item.sku,
      quantity: -3,
      previousStock: 10,
      newStock: 7,
      reason: 'sale',
      referenceType: 'sale',
      referenceId: 'SALE-1',
      performedBy: as.ids.manager,
      performer: { id: as.ids.manager, email: expect.any(String), firstName: 'Test', lastName: 'User' },
    });
  });

  it('200 filters by itemId, type, reference and dates', async () => {
    const byItem = await as.user.get(`/api/stock-movements?itemId=${item.id}`).expect(200);
    expect(byItem.body.movements.map((m: M) => m.type)).toEqual(['out', 'in']);
    const byType = await as.user.get(`/api/stock-movements?type=adjustment`).expect(200);
    expect(byType.body.movements.every((m: M) => m.type === 'adjustment')).toBe(true);
    const byRef = await as.user.get('/api/stock-movements?referenceType=sale&referenceId=SALE-1').expect(200);
    expect(byRef.body.movements).toHaveLength(1);
    const old = await as.user.get('/api/stock-movements?startDate=2026-01-15&endDate=2026-01-15').expect(200);
    expect(old.body.movements.map((m: M) => m.itemId)).toEqual([other.id]);
    const recent = await as.user.get('/api/stock-movements?startDate=2026-02-01T00:00:00Z').expect(200);
    expect(recent.body.movements.some((m: M) => m.itemId === other.id)).toBe(false);
  });

  it('200 honours limit (default 50, max 100)', async () => {
    const res = await as.user.get('/api/stock-movements?limit=1').expect(200);
    expect(res.body.movements).toHaveLength(1);
  });

  it('400 for a bad type, date or limit', async () => {
    await as.user.get('/api/stock-movements?type=sideways').expect(400);
    await as.user.get('/api/stock-movements?startDate=yesterday').expect(400);
    await as.user.get('/api/stock-movements?limit=101').expect(400);
    await as.user.get('/api/stock-movements?itemId=abc').expect(400);
  });

  it('the ledger is append-only: no route edits or deletes movements', async () => {
    const [m] = await t.db('stock_movements').select('id').limit(1);
    for (const method of ['put', 'patch', 'delete'] as const) {
      await as.admin[method](`/api/stock-movements/${m.id}`).send({}).expect(404);
    }
  });
});
