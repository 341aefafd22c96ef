import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('setting chargeCodes.holdRole', () => {
  it('unset, any user places and lifts a hold and changes exclusions, as the spec has it', async () => {
    const code = await buildChargeCode(t.db);
    const category = await buildCategory(t.db);
    const user = await t.loginAs(await buildUser(t.db));
    await user.patch(`/api/chargecodes/${code.code}/hold`).send({ onHold: true, holdReason: 'Query from finance' }).expect(200);
    await user.post(`/api/chargecodes/${code.code}/exclusions`).send({ categoryId: category.id }).expect(201);
    expect(await t.db('charge_codes').where({ id: code.id }).first()).toMatchObject({ on_hold: true, hold_reason: 'Query from finance' });
  });

  it('set to manager: a user is refused with 403 and nothing changes; a manager and an admin pass', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin.put('/api/settings/chargeCodes.holdRole').send({ value: { role: 'manager' } }).expect(200);
    try {
      const code = await buildChargeCode(t.db);
      const category = await buildCategory(t.db);
      const user = await t.loginAs(await buildUser(t.db));
      const refused = await user.patch(`/api/chargecodes/${code.code}/hold`).send({ onHold: true, holdReason: 'No' }).expect(403);
      expect(refused.body).toEqual({ message: 'Holds and exclusions of charge codes require the manager role (setting chargeCodes.holdRole)' });
      await user.post(`/api/chargecodes/${code.code}/exclusions`).send({ categoryId: category.id }).expect(403);
      await user.delete(`/api/chargecodes/${code.code}/exclusions/${category.id}`).expect(403);
      expect(await t.db('charge_codes').where({ id: code.id }).first()).toMatchObject({ on_hold: false });
      expect(await t.db('charge_code_exclusions').where({ charge_code_id: code.id })).toEqual([]);

      const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
      await manager.patch(`/api/chargecodes/${code.code}/hold`).send({ onHold: true, holdReason: 'Overspent' }).expect(200);
      await manager.post(`/api/chargecodes/${code.code}/exclusions`).send({ categoryId: category.id }).expect(201);
      await admin.patch(`/api/chargecodes/${code.code}/hold`).send({ onHold: false }).expect(200);
      // reading stays open to every user
      await user.get(`/api/chargecodes/${code.code}/exclusions`).expect(200);
    } finally {
      await admin.put('/api/settings/chargeCodes.holdRole').send({ value: { role: 'user' } }).expect(200);
    }
  });
});

describe('PUT /api/settings/{key} for the settings the service reads', () => {
  it('400 naming the field for a value of the wrong shape; the stored value is unchanged', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    for (const [key, value, field] of [
      ['chargeCodes.holdRole', { role: 'boss' }, 'value.role'],
      ['chargeCodes.holdRole', { role: 'manager', extra: 1 }, 'value'],
    ] as const) {
      const before = await t.db('settings').where({ key }).first();
      const res = await admin.put(`/api/settings/${key}`).send({ value }).expect(400);
      expect(res.body.errors.map((e: { field: string }) => e.field), key).toEqual([field]);
      expect(await t.db('settings').where({ key }).first()).toEqual(before);
    }
    // any other key still takes any object
    await admin.put('/api/settings/stores.banner').send({ value: { text: 'Closed on Friday' } }).expect(200);
  });
});
