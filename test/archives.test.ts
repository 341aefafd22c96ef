import fs from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { agentsByRole, buildStockedItem, type Agents } from './helpers/inventory-factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildOrder, buildSupplier } from './helpers/purchasing-factories';
import { changeStock } from '../src/modules/stock-movements/stock-movements.ledger';
import { itemStock } from '../src/modules/items/items.queries';
import { notesService } from '../src/modules/notes/notes.service';
import { binaryBody } from './helpers/binary-body';

// Validation and access tests share one app; a test that counts what an archive holds gets a
// database of its own, so no other test's old records end up in its archive.
let shared: TestApp;
let as: Agents;
beforeAll(async () => {
  shared = await testApp();
  as = await agentsByRole(shared);
});
afterAll(() => shared.close());

type Scenario = { t: TestApp; admin: supertest.Agent; code: string };

async function freshScenario(): Promise<Scenario> {
  const t = await testApp();
  onTestFinished(() => t.close());
  const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
  const { code } = await buildChargeCode(t.db);
  return { t, admin, code };
}

const OLD = 100;

/** Moves every sale, order and movement recorded so far OLD days into the past. */
async function ageEverythingSoFar(t: TestApp) {
  for (const table of ['sales', 'orders', 'stock_movements']) {
    await t.db.raw(`UPDATE ${table} SET created_at = created_at - make_interval(days => ?)`, [OLD]);
  }
}

async function sell(s: Scenario, items: { itemId: number; quantity: number }[]) {
  const res = await s.admin.post('/api/sales').send({ chargeCode: s.code, items }).expect(201);
  return res.body.sale as { id: number; saleId: string };
}

const markPaid = (s: Scenario, saleId: number) => s.admin.patch(`/api/sales/${saleId}/paid`).expect(200);

const noteOn = (t: TestApp, referenceType: 'sale' | 'order', id: number, text: string) =>
  notesService(t.db).add({ text, referenceType, referenceId: String(id), createdBy: null });

async function download(agent: supertest.Agent, id: number) {
  const res = await agent
    .get(`/api/archives/${id}/download`)
    .buffer(true)
    .parse(binaryBody as never)
    .expect(200);
  return { res, body: res.body as Buffer };
}

type Line = { type: string; record: Record<string, unknown> & { id: number } } & Record<string, unknown>;

const linesOf = (gz: Buffer): Line[] =>
  gunzipSync(gz)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);

const idsOf = (lines: Line[], type: string) => lines.filter((l) => l.type === type).map((l) => l.record.id);

const count = async (t: TestApp, table: string) => Number((await t.db(table).count({ n: '*' }).first())!.n);

const tableCounts = async (t: TestApp) => ({
  sales: await count(t, 'sales'),
  sale_items: await count(t, 'sale_items'),
  orders: await count(t, 'orders'),
  order_items: await count(t, 'order_items'),
  stock_movements: await count(t, 'stock_movements'),
  notes: await count(t, 'notes'),
});

const ALL_TYPES = ['sales', 'orders', 'stock_movements'];

async function createArchive(agent: supertest.Agent, ageThresholdDays = 30, includeRecordTypes = ALL_TYPES) {
  return (await agent.post('/api/archives/create').send({ ageThresholdDays, includeRecordTypes }).expect(201)).body as {
    id: number;
    archiveName: string;
    archivePath: string;
    archiveSizeBytes: number;
    recordsArchived: Record<string, number>;
  };
}

describe('GET /api/archives/preview', () => {
  it('200 counts the sales, orders and movements older than the threshold and estimates the file size', async () => {
    const s = await freshScenario();
    const item = await buildStockedItem(s.t.db, 20);
    await sell(s, [{ itemId: item.id, quantity: 1 }]);
    await sell(s, [{ itemId: item.id, quantity: 2 }]);
    const supplier = await buildSupplier(s.t.db);
    await buildOrder(s.t.db, supplier.id, [{ name: 'Flask', quantity: '2', unitCost: '3.00' }], { status: 'received' });
    await ageEverythingSoFar(s.t);
    await sell(s, [{ itemId: item.id, quantity: 1 }]);
    await buildOrder(s.t.db, supplier.id, [{ name: 'Beaker', quantity: '1', unitCost: '4.00' }]);

    const res = await s.admin.get('/api/archives/preview').query({ ageThresholdDays: 30 }).expect(200);
    // movements: the opening stock and the two old sales'
    expect(res.body).toEqual({
      recordsToArchive: { sales: 2, orders: 1, stock_movements: 3 },
      estimatedSize: expect.stringMatching(/^\d+(\.\d)? (B|KB)$/),
    });
    const everything = await s.admin.get('/api/archives/preview').query({ ageThresholdDays: 0 }).expect(200);
    expect(everything.body.recordsToArchive).toEqual({ sales: 3, orders: 2, stock_movements: 4 });
    const none = await s.admin
      .get('/api/archives/preview')
      .query({ ageThresholdDays: OLD + 1 })
      .expect(200);
    expect(none.body).toEqual({ recordsToArchive: { sales: 0, orders: 0, stock_movements: 0 }, estimatedSize: '0 B' });
  });

  it('400 for a missing, non-integer or negative ageThresholdDays', async () => {
    for (const query of [
      {},
      { ageThresholdDays: '' },
      { ageThresholdDays: 'abc' },
      { ageThresholdDays: '1.5' },
      { ageThresholdDays: '-1' },
      { ageThresholdDays: '1e2' },
    ]) {
      const res = await as.admin.get('/api/archives/preview').query(query).expect(400);
      expect(res.body).toEqual({
        message: 'Validation failed',
        errors: [expect.objectContaining({ field: 'ageThresholdDays' })],
      });
    }
  });

  it('403 for a manager, 401 without a session', async () => {
    await as.manager.get('/api/archives/preview?ageThresholdDays=1').expect(403);
    await shared.request.get('/api/archives/preview?ageThresholdDays=1').expect(401);
  });
});

describe('POST /api/archives/create', () => {
  it('201 writes one gzip file of JSON lines: the manifest, then exactly the old records with their lines and notes; deletes nothing', async () => {
    const s = await freshScenario();
    const [a, b] = [await buildStockedItem(s.t.db, 10), await buildStockedItem(s.t.db, 10)];
    const oldSale = await sell(s, [
      { itemId: a.id, quantity: 1 },
      { itemId: b.id, quantity: 2 },
    ]);
    await noteOn(s.t, 'sale', oldSale.id, 'Collected by the lab manager');
    const supplier = await buildSupplier(s.t.db);
    const { order: oldOrder } = await buildOrder(
      s.t.db,
      supplier.id,
      [{ itemId: a.id, name: 'Flask', quantity: '2', unitCost: '3.00', receivedQuantity: '2' }],
      { status: 'received' },
    );
    await s.t.db('order_invoices').insert({
      order_id: oldOrder.id,
      filename: 'inv-1.pdf',
      size_bytes: 4,
      sha256: 'ab'.repeat(32),
      data: Buffer.from('%PDF'),
    });
    await noteOn(s.t, 'order', oldOrder.id, 'Invoice checked');
    await ageEverythingSoFar(s.t);
    await sell(s, [{ itemId: a.id, quantity: 1 }]);
    await buildOrder(s.t.db, supplier.id, [{ name: 'Beaker', quantity: '1', unitCost: '4.00' }]);
    const oldMovements: number[] = await s.t
      .db('stock_movements')
      .where('created_at', '<', s.t.db.raw(`now() - interval '30 days'`))
      .orderBy('id')
      .pluck('id');
    expect(oldMovements).toHaveLength(4);
    const before = await tableCounts(s.t);

    // the types in any order: the file lists them sales, orders, movements
    const res = await s.admin
      .post('/api/archives/create')
      .send({ ageThresholdDays: 30, includeRecordTypes: ['stock_movements', 'orders', 'sales'] })
      .expect(201);
    const archive = res.body;
    expect(archive).toEqual({
      id: expect.any(Number),
      archiveName: expect.stringMatching(/^archive-\d+-\d{8}-\d{6}\.jsonl\.gz$/),
      archivePath: path.join(s.t.dataDir, 'archives', archive.archiveName),
      ageThresholdDays: 30,
      recordTypes: ['sales', 'orders', 'stock_movements'],
      cutoff: expect.any(String),
      recordsArchived: { sales: 1, orders: 1, stock_movements: 4 },
      archiveSizeBytes: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      status: 'completed',
      createdAt: expect.any(String),
      purgedAt: null,
    });
    expect(Date.parse(archive.createdAt) - Date.parse(archive.cutoff)).toBe(30 * 86_400_000);
    expect((await fs.stat(archive.archivePath)).size).toBe(archive.archiveSizeBytes);
    expect(await fs.readdir(path.join(s.t.dataDir, 'archives'))).toEqual([archive.archiveName]);

    const { res: file, body } = await download(s.admin, archive.id);
    expect(file.headers['content-type']).toBe('application/gzip');
    expect(file.headers['content-disposition']).toBe(`attachment; filename=${archive.archiveName}`);
    expect(body.length).toBe(archive.archiveSizeBytes);
    const lines = linesOf(body);
    expect(lines[0]).toEqual({
      type: 'manifest',
      formatVersion: 1,
      recordTypes: ['sales', 'orders', 'stock_movements'],
      counts: { sales: 1, orders: 1, stock_movements: 4 },
      ageThresholdDays: 30,
      cutoff: archive.cutoff,
      createdAt: archive.createdAt,
      serviceVersion: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    expect(lines.slice(1).map((l) => l.type)).toEqual([
      'sale',
      'order',
      'stock_movement',
      'stock_movement',
      'stock_movement',
      'stock_movement',
    ]);
    expect(idsOf(lines, 'sale')).toEqual([oldSale.id]);
    expect(idsOf(lines, 'order')).toEqual([oldOrder.id]);
    expect(idsOf(lines, 'stock_movement')).toEqual(oldMovements);

    const sale = lines[1].record;
    expect(sale).toMatchObject({ sale_id: oldSale.saleId, charge_code: s.code, status: 'completed', is_paid: false });
    expect(sale.items).toEqual([
      expect.objectContaining({ sale_id: oldSale.id, item_id: a.id, quantity: 1 }),
      expect.objectContaining({ sale_id: oldSale.id, item_id: b.id, quantity: 2 }),
    ]);
    expect(sale.attached_notes).toEqual([
      expect.objectContaining({ text: 'Collected by the lab manager', reference_type: 'sale' }),
    ]);
    const order = lines[2].record;
    expect(order).toMatchObject({ order_id: oldOrder.order_id, status: 'received' });
    expect(order.items).toEqual([expect.objectContaining({ name: 'Flask', received_quantity: 2 })]);
    expect(order.invoice).toEqual({
      filename: 'inv-1.pdf',
      size_bytes: 4,
      sha256: 'ab'.repeat(32),
      uploaded_by: null,
      uploaded_at: expect.any(String),
    });
    expect(order.attached_notes).toEqual([expect.objectContaining({ text: 'Invoice checked' })]);

    const recorded = await s.t
      .db('archive_records')
      .where({ archive_id: archive.id })
      .orderBy(['record_type', 'record_id'])
      .select('record_type', 'record_id');
    expect(recorded).toEqual([
      { record_type: 'orders', record_id: oldOrder.id },
      { record_type: 'sales', record_id: oldSale.id },
      ...oldMovements.map((id) => ({ record_type: 'stock_movements', record_id: id })),
    ]);
    expect(await tableCounts(s.t)).toEqual(before);

    const list = await s.admin.get('/api/archives').expect(200);
    expect(list.body).toEqual({ archives: [archive] });
  });

  it('500 when writing fails midway: no file, no archive row, no recorded ids are left behind', async () => {
    const s = await freshScenario();
    const item = await buildStockedItem(s.t.db, 5);
    await sell(s, [{ itemId: item.id, quantity: 1 }]);
    await ageEverythingSoFar(s.t);
    // the sales page goes into the file, then recording the first movement fails
    await s.t.db.raw(
      `CREATE FUNCTION refuse_movements() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk on fire'; END $$`,
    );
    await s.t.db.raw(
      `CREATE TRIGGER refuse_movements BEFORE INSERT ON archive_records FOR EACH ROW WHEN (NEW.record_type = 'stock_movements') EXECUTE FUNCTION refuse_movements()`,
    );

    const res = await s.admin
      .post('/api/archives/create')
      .send({ ageThresholdDays: 30, includeRecordTypes: ALL_TYPES })
      .expect(500);
    expect(res.body.message).toBe('Internal server error');
    expect(await fs.readdir(path.join(s.t.dataDir, 'archives'))).toEqual([]);
    expect(await count(s.t, 'archives')).toBe(0);
    expect(await count(s.t, 'archive_records')).toBe(0);
  });

  it('201 with only the record types asked for; an archive of nothing is the manifest alone', async () => {
    const archive = await createArchive(as.admin, 36_500, ['orders']);
    expect(archive).toMatchObject({
      recordTypes: ['orders'],
      recordsArchived: { sales: 0, orders: 0, stock_movements: 0 },
      status: 'completed',
    });
    const lines = linesOf((await download(as.admin, archive.id)).body);
    expect(lines).toEqual([
      expect.objectContaining({
        type: 'manifest',
        recordTypes: ['orders'],
        counts: { sales: 0, orders: 0, stock_movements: 0 },
      }),
    ]);
  });

  it('400 names each invalid field and writes nothing', async () => {
    const archivesBefore = await count(shared, 'archives');
    const cases: [unknown, string][] = [
      [{ includeRecordTypes: ['sales'] }, 'ageThresholdDays'],
      [{ ageThresholdDays: -1, includeRecordTypes: ['sales'] }, 'ageThresholdDays'],
      [{ ageThresholdDays: 1.5, includeRecordTypes: ['sales'] }, 'ageThresholdDays'],
      [{ ageThresholdDays: '30', includeRecordTypes: ['sales'] }, 'ageThresholdDays'],
      [{ ageThresholdDays: 30 }, 'includeRecordTypes'],
      [{ ageThresholdDays: 30, includeRecordTypes: [] }, 'includeRecordTypes'],
      [{ ageThresholdDays: 30, includeRecordTypes: 'sales' }, 'includeRecordTypes'],
      [{ ageThresholdDays: 30, includeRecordTypes: ['sales', 'sales'] }, 'includeRecordTypes'],
      [{ ageThresholdDays: 30, includeRecordTypes: ['sales', 'invoices'] }, 'includeRecordTypes.1'],
    ];
    for (const [body, field] of cases) {
      const res = await as.admin
        .post('/api/archives/create')
        .send(body as object)
        .expect(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
    }
    expect(await count(shared, 'archives')).toBe(archivesBefore);
  });

  it('403 for a manager, 401 without a session', async () => {
    const body = { ageThresholdDays: 30, includeRecordTypes: ['sales'] };
    await as.manager.post('/api/archives/create').send(body).expect(403);
    await shared.request.post('/api/archives/create').send(body).expect(401);
  });
});

describe('GET /api/archives', () => {
  it('200 newest first', async () => {
    const first = await createArchive(as.admin, 36_500);
    const second = await createArchive(as.admin, 36_500);
    const res = await as.admin.get('/api/archives').expect(200);
    expect(res.body.archives.slice(0, 2).map((a: { id: number }) => a.id)).toEqual([second.id, first.id]);
  });

  it('403 for a manager, 401 without a session', async () => {
    await as.manager.get('/api/archives').expect(403);
    await shared.request.get('/api/archives').expect(401);
  });
});

describe('GET /api/archives/:id/download', () => {
  it('404 for an unknown archive, or one whose file is gone; 400 for an id that is not one', async () => {
    expect((await as.admin.get('/api/archives/999999/download').expect(404)).body).toEqual({
      message: 'Archive not found',
    });
    const archive = await createArchive(as.admin, 36_500);
    await fs.rm(archive.archivePath);
    expect((await as.admin.get(`/api/archives/${archive.id}/download`).expect(404)).body).toEqual({
      message: `The file of archive ${archive.id} is missing`,
    });
    await as.admin.get('/api/archives/abc/download').expect(400);
  });

  it('403 for a manager, 401 without a session', async () => {
    const archive = await createArchive(as.admin, 36_500);
    await as.manager.get(`/api/archives/${archive.id}/download`).expect(403);
    await shared.request.get(`/api/archives/${archive.id}/download`).expect(401);
  });
});

describe('DELETE /api/archives/:id/purge-data', () => {
  it('200 deletes exactly the records the archive holds that nothing needs, keeps the rest and says why; the ledger still reconciles', async () => {
    const s = await freshScenario();
    const { db } = s.t;
    const [a, b, c, d] = [
      await buildStockedItem(db, 20),
      await buildStockedItem(db, 5),
      await buildStockedItem(db, 5),
      await buildStockedItem(db, 0),
    ];
    const paid = await sell(s, [{ itemId: a.id, quantity: 1 }]);
    await markPaid(s, paid.id);
    await noteOn(s.t, 'sale', paid.id, 'Delivered');
    const unpaid = await sell(s, [{ itemId: a.id, quantity: 1 }]);
    const refunded = await sell(s, [{ itemId: a.id, quantity: 2 }]);
    await markPaid(s, refunded.id);
    const changedLater = await sell(s, [{ itemId: a.id, quantity: 1 }]);
    await markPaid(s, changedLater.id);
    // c's last movement is this sale's: the movement stays, and so does the sale it names
    const lastOfItem = await sell(s, [{ itemId: c.id, quantity: 1 }]);
    await markPaid(s, lastOfItem.id);

    const supplier = await buildSupplier(db);
    const line = (name: string) => [{ name, quantity: '1', unitCost: '2.00', receivedQuantity: '1' }];
    const { order: received } = await buildOrder(db, supplier.id, line('Flask'), { status: 'received' });
    await db('order_invoices').insert({
      order_id: received.id,
      filename: 'inv.pdf',
      size_bytes: 4,
      sha256: 'cd'.repeat(32),
      data: Buffer.from('%PDF'),
    });
    await noteOn(s.t, 'order', received.id, 'Checked');
    const { order: pending } = await buildOrder(db, supplier.id, [{ name: 'Tubes', quantity: '3', unitCost: '1.00' }]);
    const { order: stocked } = await buildOrder(db, supplier.id, line('Gloves'), { status: 'received' });
    await changeStock(db, itemStock, {
      itemId: d.id,
      type: 'in',
      quantity: 1,
      reason: 'Received',
      performedBy: null,
      reference: { type: 'order', id: stocked.order_id },
    });
    await ageEverythingSoFar(s.t);

    await s.admin
      .patch(`/api/sales/${refunded.id}/refund`)
      .send({ items: [{ itemId: a.id, refundQty: 1 }] })
      .expect(200);
    const agedLater = await sell(s, [{ itemId: a.id, quantity: 1 }]);
    await markPaid(s, agedLater.id);
    await changeStock(db, itemStock, { itemId: a.id, type: 'in', quantity: 5, reason: 'Delivery', performedBy: null });

    const archive = await createArchive(s.admin);
    const twin = await createArchive(s.admin);
    expect(archive.recordsArchived).toEqual({ sales: 5, orders: 3, stock_movements: 9 });
    // after the archive: one more sale becomes old, and an archived sale gets a note
    await db('sales')
      .where({ id: agedLater.id })
      .update({ created_at: db.raw(`now() - interval '${OLD} days'`) });
    await db('stock_movements')
      .where({ reference_id: agedLater.saleId })
      .update({ created_at: db.raw(`now() - interval '${OLD} days'`) });
    await noteOn(s.t, 'sale', changedLater.id, 'Customer asked for a copy of the receipt');

    const stockBefore = await db('items').orderBy('id').pluck('current_stock');
    const movementsBefore: { id: number; item_id: number }[] = await db('stock_movements')
      .orderBy('id')
      .select('id', 'item_id');
    const archivedMovements = new Set(
      await db('archive_records').where({ archive_id: archive.id, record_type: 'stock_movements' }).pluck('record_id'),
    );
    const latestOf = (itemId: number) =>
      Math.max(...movementsBefore.filter((m) => m.item_id === itemId).map((m) => m.id));
    const keptForLedger = [b.id, c.id, d.id].map(latestOf);

    const res = await s.admin.delete(`/api/archives/${archive.id}/purge-data`).expect(200);
    expect(res.body).toEqual({
      message: `Archive ${archive.id} purged: deleted 1 sale, 1 order, 6 stock movements; kept 4 sales, 2 orders, 3 stock movements (see kept for why)`,
      archive: expect.objectContaining({
        id: archive.id,
        status: 'purged',
        purgedAt: expect.any(String),
        recordsArchived: archive.recordsArchived,
      }),
      purged: { sales: 1, orders: 1, stock_movements: 6, notes: 2 },
      kept: {
        sales: {
          count: 4,
          reasons: { partiallyRefunded: 1, unpaid: 1, referencedByStockMovement: 1, changedSinceArchived: 1 },
        },
        orders: { count: 2, reasons: { notFullyReceived: 1, referencedByStockMovement: 1, changedSinceArchived: 0 } },
        stock_movements: { count: 3, reasons: { latestOfItem: 3, changedSinceArchived: 0 } },
      },
      alreadyDeleted: { sales: 0, orders: 0, stock_movements: 0 },
    });

    const saleIds = await db('sales').orderBy('id').pluck('id');
    expect(saleIds).toEqual(
      [unpaid.id, refunded.id, changedLater.id, lastOfItem.id, agedLater.id].sort((x, y) => x - y),
    );
    expect(await db('sale_items').where({ sale_id: paid.id })).toEqual([]);
    expect(await db('notes').where({ reference_type: 'sale', reference_id: String(paid.id) })).toEqual([]);
    expect(await db('notes').where({ reference_type: 'sale', reference_id: String(refunded.id) })).toHaveLength(1);
    expect(await db('orders').orderBy('id').pluck('id')).toEqual([pending.id, stocked.id]);
    expect(await db('order_items').where({ order_id: received.id })).toEqual([]);
    expect(await db('order_invoices').where({ order_id: received.id })).toEqual([]);
    expect(await db('notes').where({ reference_type: 'order' })).toEqual([]);

    const movementsAfter = await db('stock_movements').orderBy('id').pluck('id');
    const purgedMovements = movementsBefore.map((m) => m.id).filter((id) => !movementsAfter.includes(id));
    expect(purgedMovements).toHaveLength(6);
    expect(purgedMovements.every((id) => archivedMovements.has(id))).toBe(true);
    expect(movementsAfter).toEqual(expect.arrayContaining(keptForLedger));
    expect(await db('items').orderBy('id').pluck('current_stock')).toEqual(stockBefore);
    const alerts = (await s.admin.get('/api/system/alerts').expect(200)).body.alerts as { type: string }[];
    expect(alerts.map((alert) => alert.type)).not.toContain('stock_ledger_mismatch');
    await fs.access(archive.archivePath);

    const again = await s.admin.delete(`/api/archives/${archive.id}/purge-data`).expect(400);
    expect(again.body).toEqual({ message: `Archive ${archive.id} has already been purged` });

    // a second archive of the same records finds the purged ones gone
    const second = await s.admin.delete(`/api/archives/${twin.id}/purge-data`).expect(200);
    expect(second.body.purged).toEqual({ sales: 0, orders: 0, stock_movements: 0, notes: 0 });
    expect(second.body.alreadyDeleted).toEqual({ sales: 1, orders: 1, stock_movements: 6 });
  });

  it('400 when the file is missing or altered, and nothing is deleted', async () => {
    const s = await freshScenario();
    const item = await buildStockedItem(s.t.db, 5);
    const sale = await sell(s, [{ itemId: item.id, quantity: 1 }]);
    await markPaid(s, sale.id);
    await ageEverythingSoFar(s.t);
    await changeStock(s.t.db, itemStock, {
      itemId: item.id,
      type: 'in',
      quantity: 1,
      reason: 'Delivery',
      performedBy: null,
    });
    const archive = await createArchive(s.admin);
    const before = await tableCounts(s.t);

    await fs.rm(archive.archivePath);
    const missing = await s.admin.delete(`/api/archives/${archive.id}/purge-data`).expect(400);
    expect(missing.body.message).toBe(
      `The file of archive ${archive.id} (${archive.archiveName}) is missing: nothing is purged while the archive is the records' only copy`,
    );
    await fs.writeFile(archive.archivePath, 'not the archive');
    const altered = await s.admin.delete(`/api/archives/${archive.id}/purge-data`).expect(400);
    expect(altered.body.message).toBe(
      `The file of archive ${archive.id} (${archive.archiveName}) is not the one written (its checksum differs): nothing is purged`,
    );

    expect(await tableCounts(s.t)).toEqual(before);
    expect(await s.t.db('archives').where({ id: archive.id }).first('status', 'purged_at')).toEqual({
      status: 'completed',
      purged_at: null,
    });
  });

  it('404 for an unknown archive; 400 for an id that is not one', async () => {
    expect((await as.admin.delete('/api/archives/999999/purge-data').expect(404)).body).toEqual({
      message: 'Archive not found',
    });
    await as.admin.delete('/api/archives/0/purge-data').expect(400);
  });

  it('403 for a manager, 401 without a session', async () => {
    const archive = await createArchive(as.admin, 36_500);
    await as.manager.delete(`/api/archives/${archive.id}/purge-data`).expect(403);
    await shared.request.delete(`/api/archives/${archive.id}/purge-data`).expect(401);
    expect((await shared.db('archives').where({ id: archive.id }).first()).status).toBe('completed');
  });
});
