import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const MISSING_ID = '00000000-0000-4000-8000-000000000000';

describe('GET /api/settings/permissions', () => {
  it('200 for any signed-in user, includes sales.refund', async () => {
    const agent = await t.loginAs(await buildUser(t.db));
    const res = await agent.get('/api/settings/permissions').expect(200);
    expect(res.body).toContainEqual({ key: 'sales.refund', name: expect.any(String), description: expect.any(String) });
  });

  it('401 without a session', () => t.request.get('/api/settings/permissions').expect(401));
});

describe('GET /api/settings/users', () => {
  it('200 lists users with granted and effective permissions; admins hold all', async () => {
    const user = await buildUser(t.db);
    await t.db('user_permissions').insert({ user_id: user.id, permission: 'sales.refund' });
    const admin = await buildUser(t.db, { role: 'admin' });
    const agent = await t.loginAs(admin);
    const res = await agent.get('/api/settings/users').expect(200);
    expect(res.body).toContainEqual(
      expect.objectContaining({ id: user.id, permissions: ['sales.refund'], effectivePermissions: ['sales.refund'] }),
    );
    expect(res.body).toContainEqual(
      expect.objectContaining({
        id: admin.id,
        permissions: [],
        effectivePermissions: ['sales.refund', 'finance.export'],
      }),
    );
    expect(JSON.stringify(res.body)).not.toMatch(/scrypt/);
  });

  it('403 for a manager', async () => {
    const agent = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await agent.get('/api/settings/users').expect(403);
  });
});

describe('PUT /api/settings/users/:userId/permissions/:permission', () => {
  it('200 grants and revokes, idempotently', async () => {
    const user = await buildUser(t.db, { role: 'manager' });
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const granted = await admin
      .put(`/api/settings/users/${user.id}/permissions/sales.refund`)
      .send({ granted: true })
      .expect(200);
    expect(granted.body).toMatchObject({ id: user.id, permissions: ['sales.refund'] });
    // granting twice is harmless
    await admin.put(`/api/settings/users/${user.id}/permissions/sales.refund`).send({ granted: true }).expect(200);
    expect(await t.db('user_permissions').where({ user_id: user.id })).toHaveLength(1);
    const revoked = await admin
      .put(`/api/settings/users/${user.id}/permissions/sales.refund`)
      .send({ granted: false })
      .expect(200);
    expect(revoked.body.permissions).toEqual([]);
    expect(await t.db('user_permissions').where({ user_id: user.id })).toHaveLength(0);
  });

  it('400 unknown permission, 400 non-boolean granted, 400 non-uuid, 404 unknown user, 403 manager', async () => {
    const user = await buildUser(t.db);
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const unknown = await admin
      .put(`/api/settings/users/${user.id}/permissions/launch.rockets`)
      .send({ granted: true })
      .expect(400);
    expect(unknown.body).toEqual({ message: "Unknown permission 'launch.rockets'" });
    const body = await admin
      .put(`/api/settings/users/${user.id}/permissions/sales.refund`)
      .send({ granted: 'yes' })
      .expect(400);
    expect(body.body.errors).toEqual([{ field: 'granted', message: 'must be a boolean' }]);
    await admin.put('/api/settings/users/42/permissions/sales.refund').send({ granted: true }).expect(400);
    await admin.put(`/api/settings/users/${MISSING_ID}/permissions/sales.refund`).send({ granted: true }).expect(404);
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await manager.put(`/api/settings/users/${user.id}/permissions/sales.refund`).send({ granted: true }).expect(403);
  });
});

describe('GET /api/settings and PUT /api/settings/:key', () => {
  it('200 stores a JSON object per key and lists it', async () => {
    const admin = await buildUser(t.db, { role: 'admin' });
    const agent = await t.loginAs(admin);
    const put = await agent
      .put('/api/settings/store.hours')
      .send({ value: { open: '09:00', close: '17:00' } })
      .expect(200);
    expect(put.body).toEqual({
      key: 'store.hours',
      value: { open: '09:00', close: '17:00' },
      updatedAt: expect.any(String),
      updatedBy: admin.id,
    });
    await agent
      .put('/api/settings/store.hours')
      .send({ value: { open: '08:30' } })
      .expect(200);
    const list = await agent.get('/api/settings').expect(200);
    expect(list.body).toContainEqual(expect.objectContaining({ key: 'store.hours', value: { open: '08:30' } }));
  });

  it('400 for a non-object value or a bad key, 403 for a manager', async () => {
    const agent = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await agent.put('/api/settings/store.hours').send({ value: 'x' }).expect(400);
    await agent.put('/api/settings/-bad').send({ value: {} }).expect(400);
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await manager.get('/api/settings').expect(403);
    await manager.put('/api/settings/store.hours').send({ value: {} }).expect(403);
  });
});
