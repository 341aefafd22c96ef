import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildStockedItem, stockOf } from './helpers/inventory-factories';
import { buildChargeCode } from './helpers/sales-factories';
import type { UserRow } from '../src/modules/users/users.service';
import * as holdPlacers from '../migrations/20261126020000_charge_code_hold_placers';

let t: TestApp;
let admin: supertest.Agent;
let manager: supertest.Agent;
let user: supertest.Agent;
beforeAll(async () => {
  t = await testApp();
  admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
  manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  user = await t.loginAs(await buildUser(t.db, { role: 'user' }));
});
afterAll(() => t.close());

const DAY = 86_400_000;
const body = (code: string, extra: Record<string, unknown> = {}) => ({
  code,
  title: 'Lab consumables',
  validFrom: '2026-01-01',
  validUntil: '2027-12-31',
  pin: '4321',
  costCentre: 'Chemistry',
  ...extra,
});

describe('POST /api/chargecodes', () => {
  it('201 creates the code with the pin hashed and never returned', async () => {
    const res = await admin.post('/api/chargecodes').send(body('NEW-001')).expect(201);
    expect(res.body).toMatchObject({
      code: 'NEW-001',
      title: 'Lab consumables',
      costCentre: 'Chemistry',
      validFrom: '2026-01-01T00:00:00.000Z',
      validUntil: '2027-12-31T23:59:59.999Z',
      onHold: false,
      hasPin: true,
      excludedCategoryIds: [],
    });
    expect(res.body).not.toHaveProperty('pin');
    expect(JSON.stringify(res.body)).not.toContain('4321');
    const row = await t.db('charge_codes').where({ code: 'NEW-001' }).first();
    expect(row.pin_hash).toMatch(/^scrypt\$/);
    expect(row.pin_hash).not.toContain('4321');
  });

  it('409 for a code that exists', async () => {
    await buildChargeCode(t.db, { code: 'DUP-001' });
    const res = await admin.post('/api/chargecodes').send(body('DUP-001')).expect(409);
    expect(res.body.message).toBe("Charge code 'DUP-001' already exists");
  });

  it('400 when validFrom is after validUntil', async () => {
    const res = await admin
      .post('/api/chargecodes')
      .send(body('BAD-001', { validFrom: '2027-01-02', validUntil: '2027-01-01' }))
      .expect(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: 'validUntil' }));
    expect(await t.db('charge_codes').where({ code: 'BAD-001' }).first()).toBeUndefined();
  });

  it('400 names missing fields', async () => {
    const res = await admin.post('/api/chargecodes').send({}).expect(400);
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['code', 'title', 'validFrom', 'validUntil']));
  });

  it('403 for a manager, 401 without a session', async () => {
    await manager.post('/api/chargecodes').send(body('MGR-001')).expect(403);
    await t.request.post('/api/chargecodes').send(body('ANON-001')).expect(401);
  });
});

describe('GET /api/chargecodes', () => {
  it('200 lists codes without pins', async () => {
    await buildChargeCode(t.db, { code: 'LIST-001', costCentre: 'Physics' });
    const res = await user.get('/api/chargecodes').expect(200);
    const entry = res.body.find((c: { code: string }) => c.code === 'LIST-001');
    expect(entry).toMatchObject({ code: 'LIST-001', title: 'Test budget', costCentre: 'Physics', authorisedBy: null });
    expect(entry).toHaveProperty('validFrom');
    expect(entry).toHaveProperty('validUntil');
    expect(res.body.every((c: object) => !('pin' in c) && !('pinHash' in c))).toBe(true);
  });

  it('401 without a session', () => t.request.get('/api/chargecodes').expect(401));
});

describe('GET /api/chargecodes/expiring/soon', () => {
  it('200 lists only codes expiring within 30 days', async () => {
    await buildChargeCode(t.db, { code: 'EXP-SOON', validUntil: new Date(Date.now() + 10 * DAY) });
    await buildChargeCode(t.db, { code: 'EXP-LATER', validUntil: new Date(Date.now() + 40 * DAY) });
    await buildChargeCode(t.db, {
      code: 'EXP-PAST',
      validFrom: new Date(Date.now() - 9 * DAY),
      validUntil: new Date(Date.now() - DAY),
    });
    const res = await user.get('/api/chargecodes/expiring/soon').expect(200);
    const codes = res.body.map((c: { code: string }) => c.code);
    expect(codes).toContain('EXP-SOON');
    expect(codes).not.toContain('EXP-LATER');
    expect(codes).not.toContain('EXP-PAST');
    expect(res.body.find((c: { code: string }) => c.code === 'EXP-SOON').daysUntilExpiry).toBe(10);
  });
});

describe('GET /api/chargecodes/:code', () => {
  it('200 with exclusions; 404 for an unknown code', async () => {
    const category = await buildCategory(t.db);
    await buildChargeCode(t.db, { code: 'READ-001', excludedCategoryIds: [category.id] });
    const res = await user.get('/api/chargecodes/READ-001').expect(200);
    expect(res.body).toMatchObject({ code: 'READ-001', hasPin: false, excludedCategoryIds: [category.id] });
    const missing = await user.get('/api/chargecodes/NOPE').expect(404);
    expect(missing.body.message).toBe('Charge code not found');
  });
});

describe('PUT /api/chargecodes/:code', () => {
  it('200 updates fields; a new pin is hashed', async () => {
    await buildChargeCode(t.db, { code: 'UPD-001' });
    const res = await admin
      .put('/api/chargecodes/UPD-001')
      .send({ title: 'Renamed', costCentre: 'Physics', pin: '9999' })
      .expect(200);
    expect(res.body).toMatchObject({ code: 'UPD-001', title: 'Renamed', costCentre: 'Physics', hasPin: true });
    expect((await t.db('charge_codes').where({ code: 'UPD-001' }).first()).pin_hash).toMatch(/^scrypt\$/);
  });

  it('400 when the new validUntil precedes the stored validFrom', async () => {
    await buildChargeCode(t.db, { code: 'UPD-002', validFrom: new Date('2026-06-01T00:00:00Z') });
    await admin.put('/api/chargecodes/UPD-002').send({ validUntil: '2026-05-01' }).expect(400);
  });

  it('404 unknown, 403 for a manager', async () => {
    await admin.put('/api/chargecodes/NOPE').send({ title: 'x' }).expect(404);
    await manager.put('/api/chargecodes/UPD-001').send({ title: 'x' }).expect(403);
  });
});

describe('DELETE /api/chargecodes/:code', () => {
  it('204 deletes an unused code', async () => {
    await buildChargeCode(t.db, { code: 'DEL-001' });
    await admin.delete('/api/chargecodes/DEL-001').expect(204);
    expect(await t.db('charge_codes').where({ code: 'DEL-001' }).first()).toBeUndefined();
  });

  it('409 while a sale uses the code', async () => {
    await buildChargeCode(t.db, { code: 'DEL-002' });
    await t
      .db('sales')
      .insert({ sale_id: 'SALE-TEST-DEL', charge_code: 'DEL-002', subtotal_amount: 1, vat_amount: 0, total_amount: 1 });
    const res = await admin.delete('/api/chargecodes/DEL-002').expect(409);
    expect(res.body.message).toBe("Charge code 'DEL-002' is used by 1 sale(s) and cannot be deleted");
    expect(await t.db('charge_codes').where({ code: 'DEL-002' }).first()).toBeDefined();
  });

  it('404 unknown, 403 for a manager', async () => {
    await admin.delete('/api/chargecodes/NOPE').expect(404);
    await manager.delete('/api/chargecodes/DEL-002').expect(403);
  });
});

describe('PATCH /api/chargecodes/:code/hold', () => {
  it('200 puts on hold with a reason and releases', async () => {
    await buildChargeCode(t.db, { code: 'HOLD-001' });
    const res = await user
      .patch('/api/chargecodes/HOLD-001/hold')
      .send({ onHold: true, holdReason: 'Audit' })
      .expect(200);
    expect(res.body).toMatchObject({ code: 'HOLD-001', onHold: true, holdReason: 'Audit' });
    const released = await user.patch('/api/chargecodes/HOLD-001/hold').send({ onHold: false }).expect(200);
    expect(released.body).toMatchObject({ onHold: false, holdReason: null });
  });

  it('400 without onHold or without a reason for a hold; 404 unknown', async () => {
    await user.patch('/api/chargecodes/HOLD-001/hold').send({}).expect(400);
    const res = await user.patch('/api/chargecodes/HOLD-001/hold').send({ onHold: true }).expect(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: 'holdReason' }));
    await user.patch('/api/chargecodes/NOPE/hold').send({ onHold: true, holdReason: 'x' }).expect(404);
  });
});

describe('PATCH /api/chargecodes/:code/hold: a hold is released only by someone at least as senior as who placed it', () => {
  let people: Record<'user' | 'manager' | 'admin', { row: UserRow; agent: supertest.Agent }>;
  beforeAll(async () => {
    const person = async (role: 'user' | 'manager' | 'admin', firstName: string) => {
      const row = await buildUser(t.db, { role, firstName, lastName: 'Holder' });
      return { row, agent: await t.loginAs(row) };
    };
    people = {
      user: await person('user', 'Uma'),
      manager: await person('manager', 'Morgan'),
      admin: await person('admin', 'Ada'),
    };
  });

  const heldBy = async (role: 'user' | 'manager' | 'admin', reason = 'Budget under review by finance') => {
    const code = await buildChargeCode(t.db);
    await people[role].agent
      .patch(`/api/chargecodes/${code.code}/hold`)
      .send({ onHold: true, holdReason: reason })
      .expect(200);
    return code;
  };
  const holdEvents = async (code: string, action: string) =>
    (
      await people.admin.agent
        .get('/api/audit')
        .query({ entityType: 'charge_code', entityId: code, action })
        .expect(200)
    ).body.events;

  it('200 placing a hold records who placed it, at what role and when, in the code and its audit row', async () => {
    const before = Date.now();
    const code = await buildChargeCode(t.db);
    const res = await people.manager.agent
      .patch(`/api/chargecodes/${code.code}/hold`)
      .send({ onHold: true, holdReason: 'Overspent' })
      .expect(200);
    const placedBy = { userId: people.manager.row.id, name: 'Morgan Holder', role: 'manager' };
    expect(res.body).toMatchObject({
      onHold: true,
      holdReason: 'Overspent',
      holdPlacedBy: placedBy,
      holdPlacedAt: expect.any(String),
    });
    expect(new Date(res.body.holdPlacedAt).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(await t.db('charge_codes').where({ id: code.id }).first()).toMatchObject({
      hold_placed_by: people.manager.row.id,
      hold_placed_by_name: 'Morgan Holder',
      hold_placed_by_role: 'manager',
      hold_placed_at: expect.any(Date),
    });
    expect((await people.user.agent.get(`/api/chargecodes/${code.code}`).expect(200)).body).toMatchObject({
      holdPlacedBy: placedBy,
      holdPlacedAt: res.body.holdPlacedAt,
    });
    const [event] = await holdEvents(code.code, 'hold');
    expect(event.actor).toMatchObject({ userId: people.manager.row.id });
    expect(event.after).toMatchObject({ onHold: true, holdReason: 'Overspent', holdPlacedBy: placedBy });
  });

  it.each([
    ['a manager', 'manager', 'This hold was placed by a manager; only a manager or an admin can release it'],
    ['an admin', 'admin', 'This hold was placed by an admin; only an admin can release it'],
  ] as const)(
    "403 a user cannot release %s's hold, even with the interface's body: the code stays on hold and a sale on it is still refused",
    async (_who, placer, message) => {
      const code = await heldBy(placer);
      const item = await buildStockedItem(t.db, 10);
      for (const body of [
        { onHold: false, holdReason: '' },
        { onHold: false },
        { onHold: false, holdReason: 'Finance said yes' },
      ]) {
        const refused = await people.user.agent.patch(`/api/chargecodes/${code.code}/hold`).send(body).expect(403);
        expect(refused.body).toEqual({ message });
      }
      expect(await t.db('charge_codes').where({ id: code.id }).first()).toMatchObject({
        on_hold: true,
        hold_reason: 'Budget under review by finance',
        hold_placed_by_role: placer,
      });
      const sale = await people.user.agent
        .post('/api/sales')
        .send({ chargeCode: code.code, items: [{ itemId: item.id, quantity: 1 }] })
        .expect(400);
      expect(sale.body.message).toBe(`Charge code '${code.code}' is on hold: Budget under review by finance`);
      expect(await stockOf(t.db, item.id)).toBe('10.00');
      expect(await holdEvents(code.code, 'release_hold')).toEqual([]);
    },
  );

  it("403 a user cannot replace a senior's hold with one of their own (which they could then release)", async () => {
    const code = await heldBy('admin');
    const refused = await people.user.agent
      .patch(`/api/chargecodes/${code.code}/hold`)
      .send({ onHold: true, holdReason: 'Mine now' })
      .expect(403);
    expect(refused.body).toEqual({ message: 'This hold was placed by an admin; only an admin can change it' });
    expect(await t.db('charge_codes').where({ id: code.id }).first()).toMatchObject({
      hold_reason: 'Budget under review by finance',
      hold_placed_by_role: 'admin',
    });
  });

  it("200 a manager releases a manager's hold (and a user's), but 403 an admin's", async () => {
    for (const placer of ['manager', 'user'] as const) {
      const code = await heldBy(placer);
      const released = await people.manager.agent
        .patch(`/api/chargecodes/${code.code}/hold`)
        .send({ onHold: false, holdReason: 'Budget approved' })
        .expect(200);
      expect(released.body).toMatchObject({ onHold: false, holdReason: null, holdPlacedBy: null, holdPlacedAt: null });
      expect(await t.db('charge_codes').where({ id: code.id }).first()).toMatchObject({
        on_hold: false,
        hold_placed_by: null,
        hold_placed_by_role: null,
        hold_placed_at: null,
      });
    }
    const adminHold = await heldBy('admin');
    const refused = await people.manager.agent
      .patch(`/api/chargecodes/${adminHold.code}/hold`)
      .send({ onHold: false, holdReason: 'Budget approved' })
      .expect(403);
    expect(refused.body).toEqual({ message: 'This hold was placed by an admin; only an admin can release it' });
  });

  it("200 an admin releases any hold; the release's audit row carries the reason and the actor, and the code sells again", async () => {
    const code = await heldBy('admin');
    const released = await people.admin.agent
      .patch(`/api/chargecodes/${code.code}/hold`)
      .send({ onHold: false, holdReason: '  Budget approved by finance ' })
      .expect(200);
    expect(released.body).toMatchObject({ onHold: false, holdReason: null });
    const [event] = await holdEvents(code.code, 'release_hold');
    expect(event.actor).toMatchObject({ kind: 'session', userId: people.admin.row.id, email: people.admin.row.email });
    expect(event.before).toMatchObject({
      onHold: true,
      holdReason: 'Budget under review by finance',
      holdPlacedBy: { userId: people.admin.row.id, name: 'Ada Holder', role: 'admin' },
    });
    expect(event.after).toMatchObject({ onHold: false, holdReason: null, releaseReason: 'Budget approved by finance' });
    const item = await buildStockedItem(t.db, 10);
    await people.user.agent
      .post('/api/sales')
      .send({ chargeCode: code.code, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(201);
  });

  it("200 the interface's release body {onHold: false, holdReason: ''} still releases a hold the caller may lift, with no reason recorded", async () => {
    const code = await heldBy('user');
    await people.user.agent
      .patch(`/api/chargecodes/${code.code}/hold`)
      .send({ onHold: false, holdReason: '' })
      .expect(200);
    const [event] = await holdEvents(code.code, 'release_hold');
    expect(event.after).toMatchObject({ onHold: false, releaseReason: null });
  });

  it('200 a hold with no recorded placer (placed before placers were recorded) is released by the chargeCodes.holdRole role, as before', async () => {
    const code = await buildChargeCode(t.db, { onHold: true, holdReason: 'Legacy hold' });
    const read = await people.user.agent.get(`/api/chargecodes/${code.code}`).expect(200);
    expect(read.body).toMatchObject({ onHold: true, holdPlacedBy: null, holdPlacedAt: null });
    await people.user.agent
      .patch(`/api/chargecodes/${code.code}/hold`)
      .send({ onHold: false, holdReason: '' })
      .expect(200);
  });
});

describe('migration 20261126020000_charge_code_hold_placers', () => {
  it("fills the placer of an existing hold from the audit trail's latest hold event (its user's role now); a hold with none, or whose placer is gone, keeps no placer", async () => {
    const placer = await buildUser(t.db, { role: 'admin', firstName: 'Fay', lastName: 'Finance' });
    const agent = await t.loginAs(placer);
    const audited = await buildChargeCode(t.db);
    await agent
      .patch(`/api/chargecodes/${audited.code}/hold`)
      .send({ onHold: true, holdReason: 'Year-end freeze' })
      .expect(200);
    const [{ occurred_at: placedAt }] = await t
      .db('audit_log')
      .where({ entity_type: 'charge_code', entity_id: audited.code, action: 'hold' });
    const unaudited = await buildChargeCode(t.db, { onHold: true, holdReason: 'Seeded' });
    const gone = await buildUser(t.db, { role: 'admin' });
    const orphan = await buildChargeCode(t.db, { onHold: true, holdReason: 'By someone since deleted' });
    await t.db('audit_log').insert({
      actor_kind: 'session',
      actor_user_id: gone.id,
      actor_email: gone.email,
      entity_type: 'charge_code',
      entity_id: orphan.code,
      action: 'hold',
    });
    await t.db('users').where({ id: gone.id }).delete();

    await holdPlacers.down(t.db);
    await holdPlacers.up(t.db);
    const placerOf = async (id: number) =>
      t
        .db('charge_codes')
        .where({ id })
        .first('hold_placed_by', 'hold_placed_by_name', 'hold_placed_by_role', 'hold_placed_at');
    expect(await placerOf(audited.id)).toEqual({
      hold_placed_by: placer.id,
      hold_placed_by_name: 'Fay Finance',
      hold_placed_by_role: 'admin',
      hold_placed_at: placedAt,
    });
    const none = { hold_placed_by: null, hold_placed_by_name: null, hold_placed_by_role: null, hold_placed_at: null };
    expect(await placerOf(unaudited.id)).toEqual(none);
    expect(await placerOf(orphan.id)).toEqual(none);
    await t
      .loginAs(await buildUser(t.db))
      .then((u) => u.patch(`/api/chargecodes/${audited.code}/hold`).send({ onHold: false }).expect(403));
  });
});

describe('/api/chargecodes/:code/exclusions', () => {
  it('adds idempotently, lists, removes', async () => {
    const category = await buildCategory(t.db, { name: 'Solvents' });
    await buildChargeCode(t.db, { code: 'EXC-001' });
    const first = await user.post('/api/chargecodes/EXC-001/exclusions').send({ categoryId: category.id }).expect(201);
    expect(first.body).toEqual([expect.objectContaining({ id: category.id, name: 'Solvents' })]);
    const again = await user.post('/api/chargecodes/EXC-001/exclusions').send({ categoryId: category.id }).expect(200);
    expect(again.body).toHaveLength(1);
    const list = await user.get('/api/chargecodes/EXC-001/exclusions').expect(200);
    expect(list.body.map((c: { id: number }) => c.id)).toEqual([category.id]);
    await user.delete(`/api/chargecodes/EXC-001/exclusions/${category.id}`).expect(204);
    expect((await user.get('/api/chargecodes/EXC-001/exclusions').expect(200)).body).toEqual([]);
    await user.delete(`/api/chargecodes/EXC-001/exclusions/${category.id}`).expect(404);
  });

  it('404 for an unknown category or code; 400 for a bad categoryId', async () => {
    await buildChargeCode(t.db, { code: 'EXC-002' });
    const res = await user.post('/api/chargecodes/EXC-002/exclusions').send({ categoryId: 999999 }).expect(404);
    expect(res.body.message).toBe('Category not found');
    await user.post('/api/chargecodes/NOPE/exclusions').send({ categoryId: 1 }).expect(404);
    await user.post('/api/chargecodes/EXC-002/exclusions').send({ categoryId: 'abc' }).expect(400);
    await user.get('/api/chargecodes/NOPE/exclusions').expect(404);
  });
});

describe('/api/chargecodes/:code/authorized-users', () => {
  it('admin adds and removes; anyone signed in lists', async () => {
    await buildChargeCode(t.db, { code: 'AU-001' });
    const added = await admin
      .post('/api/chargecodes/AU-001/authorized-users')
      .send({ userName: 'Ada Lovelace', email: 'ada@example.ac.uk', department: 'Maths' })
      .expect(201);
    expect(added.body).toEqual({
      id: expect.any(Number),
      chargeCode: 'AU-001',
      userName: 'Ada Lovelace',
      email: 'ada@example.ac.uk',
      department: 'Maths',
      notes: null,
    });
    await admin
      .post('/api/chargecodes/AU-001/authorized-users')
      .send({ userName: 'Ada', email: 'ADA@example.ac.uk' })
      .expect(409);
    const list = await user.get('/api/chargecodes/AU-001/authorized-users').expect(200);
    expect(list.body).toEqual([added.body]);
    await manager.delete(`/api/chargecodes/AU-001/authorized-users/${added.body.id}`).expect(403);
    await admin.delete(`/api/chargecodes/AU-001/authorized-users/${added.body.id}`).expect(204);
    expect((await user.get('/api/chargecodes/AU-001/authorized-users').expect(200)).body).toEqual([]);
    await admin.delete(`/api/chargecodes/AU-001/authorized-users/${added.body.id}`).expect(404);
  });

  it('400 invalid email, 403 for a user, 404 unknown code, 401 anonymous', async () => {
    await admin.post('/api/chargecodes/AU-001/authorized-users').send({ userName: 'X', email: 'nope' }).expect(400);
    await user
      .post('/api/chargecodes/AU-001/authorized-users')
      .send({ userName: 'X', email: 'x@example.ac.uk' })
      .expect(403);
    await user.get('/api/chargecodes/NOPE/authorized-users').expect(404);
    await t.request.get('/api/chargecodes/AU-001/authorized-users').expect(401);
  });
});

describe('seeds/03_chargecodes', () => {
  it('loads demo codes (one expiring soon, one on hold) and can run twice', async () => {
    const { seed } = await import('../seeds/03_chargecodes');
    await seed(t.db);
    await seed(t.db);
    const rows = await t
      .db('charge_codes')
      .whereIn('code', ['CHEM-2026-001', 'PHYS-2026-014', 'BIO-2025-077', 'ENG-2026-003']);
    expect(rows).toHaveLength(4);
    expect(rows.find((r) => r.code === 'ENG-2026-003')).toMatchObject({
      on_hold: true,
      hold_reason: 'Budget under review by finance',
      hold_placed_by_role: 'admin',
    });
    // the demo's finance hold is an admin's: a plain user cannot release it
    const refused = await user
      .patch('/api/chargecodes/ENG-2026-003/hold')
      .send({ onHold: false, holdReason: '' })
      .expect(403);
    expect(refused.body).toEqual({ message: 'This hold was placed by an admin; only an admin can release it' });
    const soon = await user.get('/api/chargecodes/expiring/soon').expect(200);
    expect(soon.body.map((c: { code: string }) => c.code)).toContain('BIO-2025-077');
  });
});
