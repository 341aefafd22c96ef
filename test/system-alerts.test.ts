import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JOBS, LEDGER_CHECK_JOB } from '../src/jobs/scheduler';
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
// Alerts count every item: each test starts from an empty inventory, whatever ran before it, and
// with no ledger check stored (the first read then runs one, as on a database never checked).
beforeEach(() => t.db.raw('TRUNCATE items, ledger_checks CASCADE'));

/** The scheduled job itself, as the scheduler runs it (under its advisory lock). */
const runLedgerCheckJob = () => JOBS.find((job) => job.name === LEDGER_CHECK_JOB)!.run(t.db);

const alerts = async () => (await as.user.get('/api/system/alerts').expect(200)).body;

describe('GET /api/system/alerts', () => {
  it('401 without a session', () => t.request.get('/api/system/alerts').expect(401));

  it('200 with no alerts when stock is fine and the ledger reconciles', async () => {
    await buildStockedItem(t.db, 5, { minimumStock: 1 });
    expect(await alerts()).toEqual({
      alertCount: 0,
      alerts: [],
      hasSystemAlerts: false,
      ledgerCheckedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
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

  it('200 reads the last full check: a manual SQL update of an item is found by the next scheduled check', async () => {
    const item = await buildStockedItem(t.db, 5, { sku: 'BEHIND-1' });
    const first = await alerts();
    expect(first.alerts.map((a: { type: string }) => a.type)).not.toContain('stock_ledger_mismatch');

    // behind the service's back: no movement, so the ledger's rule no longer holds for this item
    await t.db.raw('UPDATE items SET current_stock = 9 WHERE id = ?', [item.id]);
    const beforeCheck = await alerts();
    expect(beforeCheck.ledgerCheckedAt).toBe(first.ledgerCheckedAt);
    expect(beforeCheck.alerts.map((a: { type: string }) => a.type)).not.toContain('stock_ledger_mismatch');

    await runLedgerCheckJob();
    const afterCheck = await alerts();
    expect(Date.parse(afterCheck.ledgerCheckedAt)).toBeGreaterThanOrEqual(Date.parse(first.ledgerCheckedAt));
    expect(afterCheck.alerts).toContainEqual({
      type: 'stock_ledger_mismatch',
      level: 'critical',
      message: '1 item has a stock level that do not match the stock movement ledger (BEHIND-1)',
    });
    const [{ checked_at: storedAt }] = (await t.db.raw('SELECT checked_at FROM ledger_checks')).rows;
    expect(afterCheck.ledgerCheckedAt).toBe(new Date(storedAt).toISOString());
  });

  it('200 an item put right through the ledger leaves the alert at once, before the next full check', async () => {
    const fixed = await buildStockedItem(t.db, 5, { sku: 'FIXED-1' });
    const left = await buildStockedItem(t.db, 5, { sku: 'LEFT-1' });
    await t.db('items').whereIn('id', [fixed.id, left.id]).update({ current_stock: 8 });
    await runLedgerCheckJob();
    expect((await alerts()).alerts).toContainEqual(
      expect.objectContaining({
        type: 'stock_ledger_mismatch',
        message: expect.stringMatching(/^2 items .*\(FIXED-1, LEFT-1\)$/),
      }),
    );

    // a stock count entered as an adjustment: the movement records the level, which the item keeps
    await as.manager
      .post(`/api/items/${fixed.id}/stock`)
      .send({ type: 'adjustment', quantity: 8, reason: 'Count' })
      .expect(200);
    const body = await alerts();
    expect(body.alerts).toContainEqual({
      type: 'stock_ledger_mismatch',
      level: 'critical',
      message: '1 item has a stock level that do not match the stock movement ledger (LEFT-1)',
    });
  });
});

describe('POST /api/system/alerts/ledger-check', () => {
  it('401 without a session', () => t.request.post('/api/system/alerts/ledger-check').expect(401));

  it('403 for a manager: only an admin runs the full check', () =>
    as.manager.post('/api/system/alerts/ledger-check').expect(403));

  it('200 runs the full check now: a manual SQL update is reported at once, with the time of this check', async () => {
    const item = await buildStockedItem(t.db, 5, { sku: 'CHECK-NOW-1' });
    const before = await alerts();
    await t.db.raw('UPDATE items SET current_stock = 2 WHERE id = ?', [item.id]);

    const res = await as.admin.post('/api/system/alerts/ledger-check').expect(200);
    expect(res.body).toEqual({
      alertCount: 1,
      alerts: [
        {
          type: 'stock_ledger_mismatch',
          level: 'critical',
          message: '1 item has a stock level that do not match the stock movement ledger (CHECK-NOW-1)',
        },
      ],
      hasSystemAlerts: true,
      ledgerCheckedAt: expect.any(String),
    });
    expect(Date.parse(res.body.ledgerCheckedAt)).toBeGreaterThanOrEqual(Date.parse(before.ledgerCheckedAt));
    expect(await alerts()).toEqual(res.body);
  });
});
