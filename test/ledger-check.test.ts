// Issue 34: the ledger's rule (an item's current stock is its last movement's new stock) is kept
// where each stock change is written, so the scheduled full check finds nothing after any kind of
// change made through the service, and finds what was changed behind its back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOBS, LEDGER_CHECK_JOB } from '../src/jobs/scheduler';
import { ledgerMismatches } from '../src/modules/items/items.queries';
import { salesService } from '../src/modules/sales/sales.service';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { agentsByRole, buildStockedItem, stockOf, type Agents } from './helpers/inventory-factories';
import { buildItemSource, buildOrder, buildSupplier } from './helpers/purchasing-factories';
import { buildChargeCode, grantPermission } from './helpers/sales-factories';

let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
});
afterAll(() => t.close());

/** The scheduled job, as the scheduler runs it; then what it stored. */
async function fullCheck(): Promise<{ mismatch_count: number; mismatched_item_ids: number[]; checked_at: Date }> {
  await JOBS.find((job) => job.name === LEDGER_CHECK_JOB)!.run(t.db);
  return t.db('ledger_checks').first('mismatch_count', 'mismatched_item_ids', 'checked_at');
}

/** The stored check agrees with a straight recount of the ledger, and both find nothing out of line. */
async function expectLedgerReconciles(after: string) {
  const stored = await fullCheck();
  expect({ after, count: stored.mismatch_count, ids: stored.mismatched_item_ids }).toEqual({
    after,
    count: 0,
    ids: [],
  });
  expect(await ledgerMismatches(t.db)).toEqual({ count: 0, skus: null });
  const alerts = (await as.user.get('/api/system/alerts').expect(200)).body;
  expect(alerts.alerts.map((a: { type: string }) => a.type)).not.toContain('stock_ledger_mismatch');
  expect(alerts.ledgerCheckedAt).toBe(new Date(stored.checked_at).toISOString());
}

describe('the ledger check job', () => {
  it('finds nothing out of line after each kind of stock change made through the service', async () => {
    await expectLedgerReconciles('nothing yet');
    const tube = await buildStockedItem(t.db, 10, { name: 'Ledger tube', sku: 'LCHK-TUBE' });
    const flask = await buildStockedItem(t.db, 4, { name: 'Ledger flask', sku: 'LCHK-FLASK' });
    await expectLedgerReconciles('opening stock');

    const code = await buildChargeCode(t.db);
    const clerk = await buildUser(t.db);
    const { sale } = await salesService(t.db).create(clerk, {
      chargeCode: code.code,
      items: [{ itemId: tube.id, quantity: '3' }],
      vatApplied: true,
    });
    expect(await stockOf(t.db, tube.id)).toBe('7.00');
    await expectLedgerReconciles('a sale');

    await grantPermission(t.db, as.ids.manager, 'sales.refund');
    await as.manager
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: tube.id, refundQty: 1 }] })
      .expect(200);
    expect(await stockOf(t.db, tube.id)).toBe('8.00');
    await expectLedgerReconciles('a refund');

    const supplier = await buildSupplier(t.db);
    await buildItemSource(t.db, supplier.id, flask.id);
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { itemId: flask.id, name: 'Ledger flask', quantity: '6', unitCost: '2.00' },
    ]);
    await as.manager
      .post(`/api/orders/${order.id}/receive`)
      .send({ receivedItems: [{ orderItemId: lines[0].id, receivedQuantity: 6 }] })
      .expect(200);
    expect(await stockOf(t.db, flask.id)).toBe('10.00');
    await expectLedgerReconciles('a receipt');

    await as.manager
      .post(`/api/items/${flask.id}/stock`)
      .send({ type: 'adjustment', quantity: 9, reason: 'Counted' })
      .expect(200);
    await as.manager
      .post(`/api/items/${flask.id}/stock`)
      .send({ type: 'out', quantity: 2, reason: 'Used' })
      .expect(200);
    await expectLedgerReconciles('an adjustment and an out');

    const category = await buildCategory(t.db, { name: 'Ledger check imports' });
    await as.manager
      .post('/api/items/bulk-import')
      .send({
        items: [
          { name: 'Imported beaker', sku: 'LCHK-IMP-1', categoryName: category.name, price: '1.00', currentStock: 12 },
          { name: 'Imported funnel', sku: 'LCHK-IMP-2', categoryName: category.name, price: '1.00', currentStock: 0 },
        ],
      })
      .expect(200);
    await expectLedgerReconciles('an import');
  });

  it('finds an item whose stock was changed by SQL behind the service, and one with stock but no movement', async () => {
    const drifted = await buildStockedItem(t.db, 5, { sku: 'LCHK-DRIFT' });
    await t.db.raw('UPDATE items SET current_stock = current_stock + 1 WHERE id = ?', [drifted.id]);
    const [{ id: unrecorded }] = await t.db('items').where({ sku: 'LCHK-IMP-2' }).select('id');
    await t.db.raw('UPDATE items SET current_stock = 3 WHERE id = ?', [unrecorded]);
    const stored = await fullCheck();
    expect(stored.mismatch_count).toBe(2);
    expect([...stored.mismatched_item_ids].sort((a, b) => a - b)).toEqual(
      [drifted.id, unrecorded].sort((a, b) => a - b),
    );
    expect((await ledgerMismatches(t.db)).count).toBe(2);
    // put right through the ledger: the next check is clean again
    for (const id of [drifted.id, unrecorded])
      await as.manager
        .post(`/api/items/${id}/stock`)
        .send({ type: 'adjustment', quantity: 1, reason: 'Fix' })
        .expect(200);
    await expectLedgerReconciles('fixed by adjustments');
  });
});
