import { describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { buildItem, TEST_PASSWORD } from './helpers/factories';
import { sell } from './helpers/finance-factories';
import { buildSupplier } from './helpers/purchasing-factories';
import { buildChargeCode, sessionId } from './helpers/sales-factories';
import type { TestApp } from './helpers/app';
import { appWithAdmin, backupPredatingMigration, NO_FITTING_CLIENT, PREDATED_MIGRATION } from './backup-helpers';

/** The number each kind of human identifier ends with: SALE-20261126-18 -> 18, Q20261126-4 -> 4, O1003 -> 1003. */
const numberOf = (humanId: string) => Number(/(\d+)$/.exec(humanId)![1]);

/** One sale, one quote and one purchase order, each through the API; their human numbers and the sale's id. */
async function issueNumbers(app: TestApp, agent: supertest.Agent) {
  const item = await buildItem(app.db, { price: '2.00', currentStock: 100 });
  const { code } = await buildChargeCode(app.db);
  const supplier = await buildSupplier(app.db);
  const sale = await sell(agent, code, [{ itemId: item.id, quantity: 1 }]);
  const quote = (
    await agent
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: sessionId(), items: [{ itemId: item.id, quantity: 1 }] })
      .expect(200)
  ).body.quote;
  const order = (
    await agent
      .post('/api/orders')
      .send({ supplierId: supplier.id, items: [{ itemId: item.id, quantity: 1, unitCost: '1.00' }] })
      .expect(201)
  ).body;
  return {
    saleId: sale.saleId,
    saleRowId: sale.id,
    quoteId: quote.quoteId as string,
    orderId: order.orderId as string,
  };
}

describe.skipIf(NO_FITTING_CLIENT)('numbers after a restore', () => {
  it('a sale, quote or order made after a restore takes a number above every one issued before it, not one the backup would issue again', async () => {
    const { app, admin, adminEmail } = await appWithAdmin();
    const beforeBackup = await issueNumbers(app, admin);
    const { filename } = (await admin.post('/api/backups').expect(201)).body;
    const afterBackup = await issueNumbers(app, admin);

    await admin.post(`/api/backups/${filename}/restore`).expect(200);
    await admin.post('/api/auth/login').send({ email: adminEmail, password: TEST_PASSWORD }).expect(200);
    const afterRestore = await issueNumbers(app, admin);

    for (const key of ['saleId', 'quoteId', 'orderId'] as const) {
      expect(numberOf(afterRestore[key]), key).toBeGreaterThan(
        Math.max(numberOf(beforeBackup[key]), numberOf(afterBackup[key])),
      );
    }
    // the record ids too: one named before the restore (in a link, in the kept audit trail) never names another record
    expect(afterRestore.saleRowId).toBeGreaterThan(afterBackup.saleRowId);
    // the restored records are the backup's: the sale made after the backup is gone, and its number with it
    expect(await app.db('sales').where({ sale_id: afterBackup.saleId }).first()).toBeUndefined();
    expect(await app.db('sales').where({ sale_id: beforeBackup.saleId }).first()).toBeDefined();
  });

  it('a sequence that a migration the backup predates creates continues from its value before the restore', async () => {
    const { app, admin } = await appWithAdmin();
    const filename = await backupPredatingMigration(app, admin);
    const [{ id: lastBeforeRestore }] = await app
      .db('backup_runs')
      .insert([{ slot: new Date('2026-01-01T02:00:00Z') }, { slot: new Date('2026-01-02T02:00:00Z') }])
      .returning('id')
      .then((rows) => rows.slice(-1));

    expect((await admin.post(`/api/backups/${filename}/restore`).expect(200)).body.migrationsApplied).toEqual([
      PREDATED_MIGRATION,
    ]);

    const [{ id }] = await app
      .db('backup_runs')
      .insert({ slot: new Date('2026-01-03T02:00:00Z') })
      .returning('id');
    expect(id).toBeGreaterThan(lastBeforeRestore);
  });
});

describe.skipIf(NO_FITTING_CLIENT)('the audit trail across a restore', () => {
  it('keeps the rows written after the backup (its own creation included), then records the restore: who, which file, when', async () => {
    const { app, admin, adminEmail } = await appWithAdmin();
    await admin.post('/api/users').send({ email: 'before.backup@example.ac.uk', firstName: 'Before' }).expect(201);
    const { filename } = (await admin.post('/api/backups').expect(201)).body;
    const created = (
      await admin.post('/api/users').send({ email: 'after.backup@example.ac.uk', firstName: 'After' }).expect(201)
    ).body;
    const trailBefore = await app.db('audit_log').orderBy('id');
    const started = new Date();

    await admin.post(`/api/backups/${filename}/restore`).expect(200);

    const trailAfter = await app.db('audit_log').orderBy('id');
    // every row is still there, unchanged, with its id and time
    expect(trailAfter.slice(0, trailBefore.length)).toEqual(trailBefore);
    expect(trailBefore).toContainEqual(
      expect.objectContaining({
        entity_type: 'backup',
        entity_id: filename,
        action: 'create',
        actor_email: adminEmail,
      }),
    );
    expect(trailBefore).toContainEqual(
      expect.objectContaining({ entity_type: 'user', entity_id: created.id, action: 'create' }),
    );
    // then the restore itself
    expect(trailAfter.slice(trailBefore.length)).toEqual([
      expect.objectContaining({
        entity_type: 'backup',
        entity_id: filename,
        action: 'restore',
        actor_kind: 'session',
        actor_email: adminEmail,
      }),
    ]);
    expect(trailAfter.at(-1).occurred_at.getTime()).toBeGreaterThanOrEqual(started.getTime() - 1000);
    // the user made after the backup is gone; their creation stays in the trail
    expect(await app.db('users').where({ id: created.id }).first()).toBeUndefined();
    // the trail is readable through the API as before
    await admin.post('/api/auth/login').send({ email: adminEmail, password: TEST_PASSWORD }).expect(200);
    const listed = (await admin.get(`/api/audit?entityType=backup&entityId=${filename}`).expect(200)).body;
    expect(listed.events.map((e: { action: string }) => e.action)).toEqual(['restore', 'create']);
  });

  it('leaves nothing of the restore behind in the database (the next backup holds only the public schema)', async () => {
    const { app, admin } = await appWithAdmin();
    const { filename } = (await admin.post('/api/backups').expect(201)).body;
    await admin.post(`/api/backups/${filename}/restore`).expect(200);
    const { rows } = await app.db.raw(
      `SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('public', 'information_schema')`,
    );
    expect(rows).toEqual([]);
  });
});
