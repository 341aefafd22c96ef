import { parse as parseCsv } from 'csv-parse/sync';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FITTING_CLIENT } from './backup-helpers';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { buildOrder, buildSupplier } from './helpers/purchasing-factories';
import type { UserRow } from '../src/modules/users/users.service';

let t: TestApp;
let admin: UserRow;
let adminAgent: supertest.Agent;
beforeAll(async () => {
  t = await testApp();
  admin = await buildUser(t.db, { role: 'admin', email: 'audit-admin@example.ac.uk' });
  adminAgent = await t.loginAs(admin);
});
afterAll(() => t.close());

const eventsOf = async (query: Record<string, string>) =>
  (await adminAgent.get('/api/audit').query(query).expect(200)).body.events;
const sessionActor = (user: UserRow) => ({
  kind: 'session',
  userId: user.id,
  email: user.email,
  mcpKeyId: null,
  ip: expect.any(String),
});

describe('audit of charge codes', () => {
  it('records create, update, hold, exclusions, authorised users and delete with the values before and after; the PIN never appears', async () => {
    const category = await buildCategory(t.db);
    await adminAgent
      .post('/api/chargecodes')
      .send({
        code: 'AUD-001',
        title: 'Audited budget',
        validFrom: '2026-01-01',
        validUntil: '2027-12-31',
        pin: '4321',
        costCentre: 'Physics',
      })
      .expect(201);
    await adminAgent.put('/api/chargecodes/AUD-001').send({ title: 'Renamed budget', pin: '9876' }).expect(200);
    await adminAgent.patch('/api/chargecodes/AUD-001/hold').send({ onHold: true, holdReason: 'Overspent' }).expect(200);
    await adminAgent.post('/api/chargecodes/AUD-001/exclusions').send({ categoryId: category.id }).expect(201);
    await adminAgent.post('/api/chargecodes/AUD-001/exclusions').send({ categoryId: category.id }).expect(200);
    const authorised = await adminAgent
      .post('/api/chargecodes/AUD-001/authorized-users')
      .send({ userName: 'Dr Grace', email: 'grace@example.ac.uk' })
      .expect(201);
    await adminAgent.delete(`/api/chargecodes/AUD-001/authorized-users/${authorised.body.id}`).expect(204);
    await adminAgent.delete(`/api/chargecodes/AUD-001/exclusions/${category.id}`).expect(204);
    await adminAgent.delete('/api/chargecodes/AUD-001').expect(204);

    const events = await eventsOf({ entityType: 'charge_code', entityId: 'AUD-001' });
    // newest first; the repeated exclusion changed nothing and left no row
    expect(events.map((e: { action: string }) => e.action)).toEqual([
      'delete',
      'remove_exclusion',
      'remove_authorised_user',
      'add_authorised_user',
      'add_exclusion',
      'hold',
      'update',
      'create',
    ]);
    for (const event of events) expect(event.actor).toEqual(sessionActor(admin));
    const byAction = Object.fromEntries(events.map((e: { action: string }) => [e.action, e]));
    expect(byAction.create.after).toMatchObject({ code: 'AUD-001', title: 'Audited budget', pin_hash: '[redacted]' });
    expect(byAction.update.before).toMatchObject({ title: 'Audited budget', pin_hash: '[redacted]' });
    expect(byAction.update.after).toMatchObject({ title: 'Renamed budget', pin_hash: '[redacted]' });
    expect(byAction.hold).toMatchObject({
      before: { onHold: false, holdReason: null },
      after: { onHold: true, holdReason: 'Overspent' },
    });
    expect(byAction.add_exclusion).toMatchObject({
      before: { excludedCategoryIds: [] },
      after: { excludedCategoryIds: [category.id] },
    });
    expect(byAction.add_authorised_user.after).toMatchObject({ email: 'grace@example.ac.uk' });
    expect(byAction.delete.before).toMatchObject({ code: 'AUD-001', title: 'Renamed budget', on_hold: true });
    const stored = JSON.stringify(await t.db('audit_log').where({ entity_id: 'AUD-001' }));
    expect(stored).not.toMatch(/4321|9876|scrypt/);
  });

  it('a refused change leaves no audit row: the change and its row share one transaction', async () => {
    await adminAgent
      .post('/api/chargecodes')
      .send({
        code: 'AUD-002',
        title: 'Budget',
        validFrom: '2026-01-01',
        validUntil: '2027-12-31',
        costCentre: 'Physics',
      })
      .expect(201);
    await adminAgent.put('/api/chargecodes/AUD-002').send({ validFrom: '2028-01-01' }).expect(400);
    expect((await eventsOf({ entityId: 'AUD-002' })).map((e: { action: string }) => e.action)).toEqual(['create']);
  });
});

describe('audit of VAT rates, settings and MCP keys, by each kind of actor', () => {
  it('a bearer token is recorded as a token; VAT rate create, update and delete with before and after', async () => {
    const token = (await adminAgent.post('/api/auth/tokens').send({ name: 'finance script' }).expect(201)).body.token;
    const bearer = (req: supertest.Test) => req.set('Authorization', `Bearer ${token}`);
    const created = await bearer(t.request.post('/api/settings/vat-rates'))
      .send({ name: 'Reduced', rate: '0.05' })
      .expect(201);
    await bearer(t.request.put(`/api/settings/vat-rates/${created.body.id}`))
      .send({ rate: '0.075' })
      .expect(200);
    await bearer(t.request.delete(`/api/settings/vat-rates/${created.body.id}`)).expect(204);
    const events = await eventsOf({ entityType: 'vat_rate', entityId: String(created.body.id) });
    expect(events.map((e: { action: string }) => e.action)).toEqual(['delete', 'update', 'create']);
    expect(events[1]).toMatchObject({ before: { rate: '0.0500' }, after: { rate: '0.0750' } });
    for (const event of events)
      expect(event.actor).toMatchObject({ kind: 'token', userId: admin.id, email: admin.email });
  });

  it('settings and MCP keys: the key itself is never stored in the trail', async () => {
    await adminAgent
      .put('/api/settings/stores.openingHours')
      .send({ value: { weekdays: '09:00-17:00' } })
      .expect(200);
    const key = await adminAgent.post('/api/mcp/keys').send({ name: 'Assistant' }).expect(201);
    await adminAgent.delete(`/api/mcp/keys/${key.body.id}`).expect(204);
    const keyEvents = await eventsOf({ entityType: 'mcp_key', entityId: String(key.body.id) });
    expect(keyEvents.map((e: { action: string }) => e.action)).toEqual(['revoke', 'create']);
    expect(keyEvents[1].after).toMatchObject({ name: 'Assistant', scopes: ['read'] });
    expect(JSON.stringify(await t.db('audit_log'))).not.toContain(key.body.key);
  });
});

describe('audit of backups and archives', () => {
  it.skipIf(NO_FITTING_CLIENT)(
    'a manual backup and its deletion, an archive and its purge, each with its actor',
    async () => {
      const { filename } = (await adminAgent.post('/api/backups').expect(201)).body;
      await adminAgent.delete(`/api/backups/${filename}`).expect(204);
      const backupEvents = await eventsOf({ entityType: 'backup', entityId: filename });
      expect(backupEvents.map((e: { action: string }) => e.action)).toEqual(['delete', 'create']);
      expect(backupEvents[1]).toMatchObject({
        actor: sessionActor(admin),
        after: { type: 'manual', size: expect.any(Number) },
      });

      const archive = (
        await adminAgent
          .post('/api/archives/create')
          .send({ ageThresholdDays: 30, includeRecordTypes: ['sales'] })
          .expect(201)
      ).body;
      await adminAgent.delete(`/api/archives/${archive.id}/purge-data`).expect(200);
      const archiveEvents = await eventsOf({ entityType: 'archive', entityId: String(archive.id) });
      expect(archiveEvents.map((e: { action: string }) => e.action)).toEqual(['purge', 'create']);
      expect(archiveEvents[0]).toMatchObject({
        actor: sessionActor(admin),
        before: { status: 'completed' },
        after: { status: 'purged' },
      });
    },
  );
});

describe('audit of items', () => {
  it('a price and VAT change records the fields that changed, before and after; an unchanged save and a stock change record nothing here', async () => {
    const manager = await buildUser(t.db, { role: 'manager' });
    const agent = await t.loginAs(manager);
    const item = await buildItem(t.db, { name: 'Nitrile gloves', currentStock: 10 });
    await t.db('items').where({ id: item.id }).update({ price: '4.50', vat_rate: '0.2' });
    await agent.put(`/api/items/${item.id}`).send({ price: '5.25', vatRate: '0.05' }).expect(200);
    await agent.put(`/api/items/${item.id}`).send({ price: '5.25' }).expect(200);
    await agent.put(`/api/items/${item.id}`).send({ currentStock: 12, stockReason: 'Recount' }).expect(200);
    const events = await eventsOf({ entityType: 'item', entityId: String(item.id) });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'update',
      actor: sessionActor(manager),
      before: { price: '4.50' },
      after: { price: '5.25' },
    });
    expect([Number(events[0].before.vat_rate), Number(events[0].after.vat_rate)]).toEqual([0.2, 0.05]);
  });

  it('creating and deactivating an item are recorded; deactivating an inactive item records nothing', async () => {
    const manager = await buildUser(t.db, { role: 'manager' });
    const agent = await t.loginAs(manager);
    const category = await buildCategory(t.db);
    const created = await agent
      .post('/api/items')
      .send({
        name: 'Beaker 250 ml',
        sku: 'AUD-BEAKER-250',
        categoryId: category.id,
        price: '3.10',
        currentStock: 4,
        minimumStock: 1,
      })
      .expect(201);
    await agent.delete(`/api/items/${created.body.id}`).expect(204);
    await agent.delete(`/api/items/${created.body.id}`).expect(204);
    const events = await eventsOf({ entityType: 'item', entityId: String(created.body.id) });
    expect(events.map((e: { action: string }) => e.action)).toEqual(['update', 'create']);
    expect(events[1]).toMatchObject({
      actor: sessionActor(manager),
      before: null,
      after: { name: 'Beaker 250 ml', sku: 'AUD-BEAKER-250', category_id: category.id, price: '3.10' },
    });
    expect(events[0]).toMatchObject({ before: { is_active: true }, after: { is_active: false } });
  });

  it('bulk changes record one row per item they changed, with the value before and after; a refused bulk change records nothing', async () => {
    const manager = await buildUser(t.db, { role: 'manager' });
    const agent = await t.loginAs(manager);
    const [first, second, inactive] = [
      await buildItem(t.db, { name: 'Bulk audit A', vatRate: '0.2' }),
      await buildItem(t.db, { name: 'Bulk audit B', vatRate: '0.05' }),
      await buildItem(t.db, { name: 'Bulk audit C', vatRate: '0.2', isActive: false }),
    ];
    const ids = [first.id, second.id, inactive.id];
    const eventsFor = async (id: number) => eventsOf({ entityType: 'item', entityId: String(id) });

    await agent.post('/api/items/bulk/set-inactive').send({ itemIds: ids }).expect(200);
    await agent.post('/api/items/bulk/change-vat-rate').send({ itemIds: ids, vatRate: '0.05' }).expect(200);
    const category = await buildCategory(t.db);
    await agent
      .post('/api/items/bulk/change-category')
      .send({ itemIds: [first.id], categoryId: category.id })
      .expect(200);
    await agent
      .post('/api/items/bulk/set-active')
      .send({ itemIds: [first.id, 999999] })
      .expect(400);

    const firstEvents = await eventsFor(first.id);
    expect(firstEvents.map((e: { before: object; after: object }) => [e.before, e.after])).toEqual([
      [{ category_id: first.category_id }, { category_id: category.id }],
      [{ vat_rate: expect.anything() }, { vat_rate: expect.anything() }],
      [{ is_active: true }, { is_active: false }],
    ]);
    expect([Number(firstEvents[1].before.vat_rate), Number(firstEvents[1].after.vat_rate)]).toEqual([0.2, 0.05]);
    for (const event of firstEvents) expect(event).toMatchObject({ action: 'update', actor: sessionActor(manager) });
    // B was already at 5% and C already inactive: those non-changes leave no rows
    expect((await eventsFor(second.id)).map((e: { after: object }) => e.after)).toEqual([{ is_active: false }]);
    expect((await eventsFor(inactive.id)).map((e: { after: object }) => Object.keys(e.after))).toEqual([['vat_rate']]);

    await agent
      .post('/api/items/bulk/delete')
      .send({ itemIds: [second.id, inactive.id] })
      .expect(200);
    const deleted = await eventsOf({ entityType: 'item', action: 'delete' });
    expect(deleted.map((e: { entityId: string }) => e.entityId).sort()).toEqual(
      [String(second.id), String(inactive.id)].sort(),
    );
    expect(deleted.find((e: { entityId: string }) => e.entityId === String(second.id))).toMatchObject({
      actor: sessionActor(manager),
      before: { id: second.id, sku: second.sku, name: 'Bulk audit B', is_active: false },
      after: null,
    });
  });
});

describe('audit of orders', () => {
  it('receiving records the order status before and after and what arrived, by the manager who received it', async () => {
    const manager = await buildUser(t.db, { role: 'manager' });
    const supplier = await buildSupplier(t.db);
    const item = await buildItem(t.db, { name: 'Pipette tips', currentStock: 0 });
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { itemId: item.id, name: 'Pipette tips', quantity: '10', unitCost: '1.00' },
    ]);
    await (
      await t.loginAs(manager)
    )
      .post(`/api/orders/${order.order_id}/receive`)
      .send({ receivedItems: [{ orderItemId: lines[0].id, receivedQuantity: 4, addToInventory: true }] })
      .expect(200);
    const [event] = await eventsOf({ entityType: 'order', entityId: order.order_id });
    expect(event).toMatchObject({
      action: 'receive',
      actor: sessionActor(manager),
      before: { status: 'pending' },
      after: {
        status: 'partially_received',
        received: [{ orderItemId: lines[0].id, quantity: '4', addToInventory: true }],
      },
    });
  });
});

describe('GET /api/audit', () => {
  it('filters by user, action and date range, pages, and exports the same rows as CSV', async () => {
    const other = await buildUser(t.db, { role: 'admin' });
    const otherAgent = await t.loginAs(other);
    for (const code of ['FLT-001', 'FLT-002', 'FLT-003']) {
      await otherAgent
        .post('/api/chargecodes')
        .send({ code, title: 'Filtered', validFrom: '2026-01-01', validUntil: '2027-12-31', costCentre: 'Maths' })
        .expect(201);
    }
    const page1 = await adminAgent
      .get('/api/audit')
      .query({ userId: other.id, action: 'create', limit: 2 })
      .expect(200);
    expect(page1.body.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect(page1.body.events.map((e: { entityId: string }) => e.entityId)).toEqual(['FLT-003', 'FLT-002']);
    const page2 = await adminAgent
      .get('/api/audit')
      .query({ userId: other.id, action: 'create', limit: 2, page: 2 })
      .expect(200);
    expect(page2.body.events.map((e: { entityId: string }) => e.entityId)).toEqual(['FLT-001']);

    const today = new Date().toISOString().slice(0, 10);
    expect(
      (
        await adminAgent
          .get('/api/audit')
          .query({ userId: other.id, entityType: 'charge_code', from: today, to: today })
          .expect(200)
      ).body.pagination.total,
    ).toBe(3);
    expect(
      (await adminAgent.get('/api/audit').query({ userId: other.id, to: '2026-01-01' }).expect(200)).body.pagination
        .total,
    ).toBe(0);

    const csv = await adminAgent
      .get('/api/audit')
      .query({ userId: other.id, entityType: 'charge_code', format: 'csv' })
      .expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="audit-\d{4}-\d\d-\d\d\.csv"$/);
    const records = parseCsv(csv.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(records.map((r) => r['Entity ID'])).toEqual(['FLT-003', 'FLT-002', 'FLT-001']);
    expect(records[0]).toMatchObject({
      'Actor Kind': 'session',
      'Actor Email': other.email,
      'Entity Type': 'charge_code',
      Action: 'create',
    });
    expect(JSON.parse(records[0].After)).toMatchObject({ code: 'FLT-003', cost_centre: 'Maths' });

    // an address a person chose cannot become a formula in the finance office's spreadsheet
    const odd = await buildUser(t.db, { role: 'admin', email: '=cmd@example.ac.uk' });
    await (
      await t.loginAs(odd)
    )
      .put('/api/settings/stores.odd')
      .send({ value: { x: 1 } })
      .expect(200);
    const oddCsv = await adminAgent
      .get('/api/audit')
      .query({ userId: odd.id, entityType: 'setting', format: 'csv' })
      .expect(200);
    expect(
      (parseCsv(oddCsv.text, { bom: true, columns: true }) as Record<string, string>[]).map((r) => r['Actor Email']),
    ).toEqual(["'=cmd@example.ac.uk"]);
  });

  it('400 for a refused filter; 403 for managers and users; 401 without a session', async () => {
    const refused = await adminAgent.get('/api/audit').query({ userId: 'not-a-uuid', from: 'yesterday' }).expect(400);
    expect(refused.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['from', 'userId']);
    for (const role of ['manager', 'user'] as const) {
      await (await t.loginAs(await buildUser(t.db, { role }))).get('/api/audit').expect(403);
    }
    await t.request.get('/api/audit').expect(401);
  });

  it('the table refuses UPDATE, DELETE and TRUNCATE: no code path can rewrite the trail', async () => {
    await adminAgent
      .put('/api/settings/stores.motto')
      .send({ value: { text: 'Never lose a sale' } })
      .expect(200);
    const [row] = await t.db('audit_log').where({ entity_id: 'stores.motto' });
    await expect(t.db('audit_log').where({ id: row.id }).update({ action: 'forged' })).rejects.toThrow(/append-only/);
    await expect(t.db('audit_log').where({ id: row.id }).delete()).rejects.toThrow(/append-only/);
    await expect(t.db.raw('TRUNCATE audit_log')).rejects.toThrow(/append-only/);
    expect(await t.db('audit_log').where({ id: row.id }).first()).toMatchObject({
      action: 'update',
      entity_type: 'setting',
    });
  });
});
