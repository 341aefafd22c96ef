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
// Alerts count every item: each test starts from an empty inventory, whatever ran before it.
beforeEach(() => t.db.raw('TRUNCATE items CASCADE'));

const alerts = async () => (await as.user.get('/api/system/alerts').expect(200)).body;

describe('GET /api/system/alerts', () => {
  it('401 without a session', () => t.request.get('/api/system/alerts').expect(401));

  it('200 with no alerts when stock is fine and the ledger reconciles', async () => {
    await buildStockedItem(t.db, 5, { minimumStock: 1 });
    expect(await alerts()).toEqual({ alertCount: 0, alerts: [], hasSystemAlerts: false });
  });

  it('200 reports low stock (warning) and out of stock (critical) counts', async () => {
    await buildStockedItem(t.db, 1, { minimumStock: 2 });
    await buildStockedItem(t.db, 2, { minimumStock: 2 });
    await buildItem(t.db, { minimumStock: 1 });
    const body = await alerts();
    expect(body).toMatchObject({ alertCount: 2, hasSystemAlerts: true });
    expect(body.alerts).toEqual([
      { type: 'out_of_stock', level: 'critical', message: '1 item is out of stock' },
      { type: 'low_stock', level: 'warning', message: '2 items are at or below minimum stock' },
    ]);
  });

  it('200 reports items whose stock disagrees with the ledger (critical)', async () => {
    const drifted = await buildStockedItem(t.db, 5, { sku: 'DRIFT-1' });
    await t.db('items').where({ id: drifted.id }).update({ current_stock: 7 });
    await buildItem(t.db, { sku: 'NO-LEDGER-1', currentStock: 3 });
    const body = await alerts();
    expect(body.alerts).toContainEqual({
      type: 'stock_ledger_mismatch',
      level: 'critical',
      message: '2 items have stock levels that do not match the stock movement ledger (DRIFT-1, NO-LEDGER-1)',
    });
  });
});
