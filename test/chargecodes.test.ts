import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';

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
    const res = await admin.post('/api/chargecodes').send(body('BAD-001', { validFrom: '2027-01-02', validUntil: '2027-01-01' })).expect(400);
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
    await buildChargeCode(t.db, { code: 'EXP-PAST', validFrom: new Date(Date.now() - 9 * DAY), validUntil: new Date(Date.now() - DAY) });
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
    const res = await admin.put('/api/chargecodes/UPD-001').send({ title: 'Renamed', costCentre: 'Physics', pin: '9999' }).expect(200);
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
    await t.db('sales').insert({ sale_id: 'SALE-TEST-DEL', charge_code: 'DEL-002', subtotal_amount: 1, vat_amount: 0, total_amount: 1 });
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
    const res = await user.patch('/api/chargecodes/HOLD-001/hold').send({ onHold: true, holdReason: 'Audit' }).expect(200);
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
    expect(added.body).toEqual({ id: expect.any(Number), chargeCode: 'AU-001', userName: 'Ada Lovelace', email: 'ada@example.ac.uk', department: 'Maths', notes: null });
    await admin.post('/api/chargecodes/AU-001/authorized-users').send({ userName: 'Ada', email: 'ADA@example.ac.uk' }).expect(409);
    const list = await user.get('/api/chargecodes/AU-001/authorized-users').expect(200);
    expect(list.body).toEqual([added.body]);
    await manager.delete(`/api/chargecodes/AU-001/authorized-users/${added.body.id}`).expect(403);
    await admin.delete(`/api/chargecodes/AU-001/authorized-users/${added.body.id}`).expect(204);
    expect((await user.get('/api/chargecodes/AU-001/authorized-users').expect(200)).body).toEqual([]);
    await admin.delete(`/api/chargecodes/AU-001/authorized-users/${added.body.id}`).expect(404);
  });

  it('400 invalid email, 403 for a user, 404 unknown code, 401 anonymous', async () => {
    await admin.post('/api/chargecodes/AU-001/authorized-users').send({ userName: 'X', email: 'nope' }).expect(400);
    await user.post('/api/chargecodes/AU-001/authorized-users').send({ userName: 'X', email: 'x@example.ac.uk' }).expect(403);
    await user.get('/api/chargecodes/NOPE/authorized-users').expect(404);
    await t.request.get('/api/chargecodes/AU-001/authorized-users').expect(401);
  });
});

describe('seeds/03_chargecodes', () => {
  it('loads demo codes (one expiring soon, one on hold) and can run twice', async () => {
    const { seed } = await import('../seeds/03_chargecodes');
    await seed(t.db);
    await seed(t.db);
    const rows = await t.db('charge_codes').whereIn('code', ['CHEM-2026-001', 'PHYS-2026-014', 'BIO-2025-077', 'ENG-2026-003']);
    expect(rows).toHaveLength(4);
    expect(rows.find((r) => r.code === 'ENG-2026-003')).toMatchObject({ on_hold: true, hold_reason: 'Budget under review by finance' });
    const soon = await user.get('/api/chargecodes/expiring/soon').expect(200);
    expect(soon.body.map((c: { code: string }) => c.code)).toContain('BIO-2025-077');
  });
});
