import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser, TEST_PASSWORD } from './helpers/factories';
import { SYSTEM_ACTOR } from '../src/modules/audit/audit.actor';
import { usersService } from '../src/modules/users/users.service';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const MISSING_ID = '00000000-0000-4000-8000-000000000000';
const sessionsOf = async (userId: string) =>
  (
    await t
      .db('sessions')
      .whereRaw(`(sess -> 'passport' ->> 'user') = ?`, [userId])
      .count<{ count: number }[]>('* as count')
  )[0].count;

describe('GET /api/users', () => {
  it('401 without a session, 403 for a manager', async () => {
    await t.request.get('/api/users').expect(401);
    const agent = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    const res = await agent.get('/api/users').expect(403);
    expect(res.body).toEqual({ message: expect.any(String) });
  });

  it('200 lists users without password hashes', async () => {
    const admin = await buildUser(t.db, { role: 'admin' });
    const agent = await t.loginAs(admin);
    const res = await agent.get('/api/users').expect(200);
    expect(res.body).toContainEqual(
      expect.objectContaining({
        id: admin.id,
        email: admin.email,
        role: 'admin',
        isActive: true,
        showPickingList: false,
      }),
    );
    expect(JSON.stringify(res.body)).not.toMatch(/password|scrypt/i);
  });
});

describe('POST /api/users', () => {
  it('201 creates a user who can sign in with the password', async () => {
    const agent = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const res = await agent
      .post('/api/users')
      .send({
        email: 'New.Person@Example.ac.uk',
        firstName: 'New',
        lastName: 'Person',
        role: 'manager',
        password: 'a long password',
      })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      email: 'new.person@example.ac.uk',
      firstName: 'New',
      lastName: 'Person',
      role: 'manager',
      isActive: true,
      showPickingList: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    await t.request
      .post('/api/auth/login')
      .send({ email: 'new.person@example.ac.uk', password: 'a long password' })
      .expect(200);
  });

  it('201 without a password creates an SSO-only user (no local sign-in)', async () => {
    const agent = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const res = await agent.post('/api/users').send({ email: 'sso.only@example.ac.uk', firstName: 'Sso' }).expect(201);
    expect(res.body).toMatchObject({ role: 'user', lastName: '' });
    const row = await t.db('users').where({ id: res.body.id }).first();
    expect(row.password_hash).toBeNull();
  });

  it('409 for a duplicate email (any case)', async () => {
    const existing = await buildUser(t.db);
    const agent = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const res = await agent
      .post('/api/users')
      .send({ email: existing.email.toUpperCase(), firstName: 'Dup' })
      .expect(409);
    expect(res.body).toEqual({ message: `A user with email '${existing.email}' already exists` });
  });

  it('400 names each invalid field', async () => {
    const agent = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const res = await agent
      .post('/api/users')
      .send({ email: 'not-an-email', role: 'superuser', password: 'short' })
      .expect(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'email',
      'firstName',
      'password',
      'role',
    ]);
  });

  it('403 for a manager', async () => {
    const agent = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await agent.post('/api/users').send({ email: 'x@example.ac.uk', firstName: 'X' }).expect(403);
  });
});

describe('PUT and PATCH /api/users/:id/role', () => {
  it('200 changes the role with either method', async () => {
    const target = await buildUser(t.db);
    const agent = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const put = await agent.put(`/api/users/${target.id}/role`).send({ role: 'manager' }).expect(200);
    expect(put.body).toMatchObject({ id: target.id, role: 'manager' });
    const patch = await agent.patch(`/api/users/${target.id}/role`).send({ role: 'admin' }).expect(200);
    expect(patch.body.role).toBe('admin');
    expect((await t.db('users').where({ id: target.id }).first()).role).toBe('admin');
  });

  it('400 for an unknown role or a non-uuid id, 404 for an unknown user, 403 for a manager', async () => {
    const target = await buildUser(t.db);
    const agent = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const bad = await agent.put(`/api/users/${target.id}/role`).send({ role: 'superuser' }).expect(400);
    expect(bad.body.errors[0].field).toBe('role');
    const badId = await agent.put('/api/users/123/role').send({ role: 'user' }).expect(400);
    expect(badId.body.errors[0]).toEqual({ field: 'id', message: 'must be a user id (uuid)' });
    await agent.put(`/api/users/${MISSING_ID}/role`).send({ role: 'user' }).expect(404);
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await manager.patch(`/api/users/${target.id}/role`).send({ role: 'admin' }).expect(403);
  });

  it('400 when the last active admin would be demoted', async () => {
    const db = t.db;
    // Make this admin the only active one in the file's database for the duration of the check.
    const others = await db('users').where({ role: 'admin', is_active: true }).pluck('id');
    await db('users').whereIn('id', others).update({ is_active: false });
    try {
      const admin = await buildUser(db, { role: 'admin' });
      const agent = await t.loginAs(admin);
      const res = await agent.patch(`/api/users/${admin.id}/role`).send({ role: 'user' }).expect(400);
      expect(res.body.message).toMatch(/last admin/);
      expect((await db('users').where({ id: admin.id }).first()).role).toBe('admin');
      await db('users').where({ id: admin.id }).update({ is_active: false });
    } finally {
      await db('users').whereIn('id', others).update({ is_active: true });
    }
  });
});

describe('DELETE /api/users/:id', () => {
  it("204 deactivates; the user's session and token stop working at once and their session rows are gone", async () => {
    const target = await buildUser(t.db);
    const targetAgent = await t.loginAs(target);
    const { body: token } = await targetAgent.post('/api/auth/tokens').send({ name: 'cli' }).expect(201);
    expect(await sessionsOf(target.id)).toBe(1);

    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin.delete(`/api/users/${target.id}`).expect(204);

    expect((await t.db('users').where({ id: target.id }).first()).is_active).toBe(false);
    expect(await sessionsOf(target.id)).toBe(0);
    await targetAgent.get('/api/auth/user').expect(401);
    await t.request.get('/api/auth/user').set('Authorization', `Bearer ${token.token}`).expect(401);
    await t.request.post('/api/auth/login').send({ email: target.email, password: TEST_PASSWORD }).expect(401);
  });

  it('400 when an admin removes themself, 404 unknown, 400 non-uuid, 403 manager', async () => {
    const admin = await buildUser(t.db, { role: 'admin' });
    const agent = await t.loginAs(admin);
    const self = await agent.delete(`/api/users/${admin.id}`).expect(400);
    expect(self.body).toEqual({ message: 'You cannot remove your own account' });
    expect((await t.db('users').where({ id: admin.id }).first()).is_active).toBe(true);
    await agent.delete(`/api/users/${MISSING_ID}`).expect(404);
    await agent.delete('/api/users/abc').expect(400);
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await manager.delete(`/api/users/${admin.id}`).expect(403);
  });
  it('400 for the last active admin: two admins deactivating each other at once leave one active', async () => {
    const db = t.db;
    const others = await db('users').where({ role: 'admin', is_active: true }).pluck('id');
    await db('users').whereIn('id', others).update({ is_active: false });
    try {
      const [a, b] = [await buildUser(db, { role: 'admin' }), await buildUser(db, { role: 'admin' })];
      const [agentA, agentB] = [await t.loginAs(a), await t.loginAs(b)];
      const results = await Promise.all([agentA.delete(`/api/users/${b.id}`), agentB.delete(`/api/users/${a.id}`)]);
      const statuses = results.map((r) => r.status).sort();
      // the loser is refused by the rule (400), or has already lost its session (401)
      expect(statuses[0]).toBe(204);
      expect([400, 401]).toContain(statuses[1]);
      const refused = results.find((r) => r.status === 400);
      if (refused) expect(refused.body).toEqual({ message: 'Cannot deactivate the last active admin' });
      expect(
        await db('users')
          .whereIn('id', [a.id, b.id])
          .where({ is_active: true })
          .count<{ count: number }[]>('* as count'),
      ).toEqual([{ count: 1 }]);

      // the survivor is now the last active admin: deactivating them is refused whoever asks
      const survivor = (await db('users').whereIn('id', [a.id, b.id]).where({ is_active: true }).first())!;
      const err = await usersService(db)
        .deactivate(survivor.id, SYSTEM_ACTOR)
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 400, message: 'Cannot deactivate the last active admin' });
      expect((await db('users').where({ id: survivor.id }).first()).is_active).toBe(true);
      await db('users').whereIn('id', [a.id, b.id]).update({ is_active: false });
    } finally {
      await db('users').whereIn('id', others).update({ is_active: true });
    }
  });
});

describe('PATCH /api/users/:id/reactivate', () => {
  it('200 undoes a deactivation: the user signs in again; their old session and token stay ended', async () => {
    const target = await buildUser(t.db);
    const targetAgent = await t.loginAs(target);
    const { body: token } = await targetAgent.post('/api/auth/tokens').send({ name: 'cli' }).expect(201);
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin.delete(`/api/users/${target.id}`).expect(204);

    const res = await admin.patch(`/api/users/${target.id}/reactivate`).expect(200);
    expect(res.body).toMatchObject({
      message: 'User reactivated',
      user: { id: target.id, email: target.email, isActive: true },
    });
    expect((await t.db('users').where({ id: target.id }).first()).is_active).toBe(true);
    await t.request.post('/api/auth/login').send({ email: target.email, password: TEST_PASSWORD }).expect(200);
    await targetAgent.get('/api/auth/user').expect(401);
    await t.request.get('/api/auth/user').set('Authorization', `Bearer ${token.token}`).expect(401);

    // an active user stays as they are
    await admin.patch(`/api/users/${target.id}/reactivate`).expect(200);
  });

  it('404 unknown, 400 non-uuid, 403 manager, 401 anonymous', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    expect((await admin.patch(`/api/users/${MISSING_ID}/reactivate`).expect(404)).body).toEqual({
      message: 'User not found',
    });
    await admin.patch('/api/users/abc/reactivate').expect(400);
    const target = await buildUser(t.db, { isActive: false });
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await manager.patch(`/api/users/${target.id}/reactivate`).expect(403);
    await t.request.patch(`/api/users/${target.id}/reactivate`).expect(401);
    expect((await t.db('users').where({ id: target.id }).first()).is_active).toBe(false);
  });
});

describe('PATCH /api/users/:id/reset-password', () => {
  it("200 sets the password and ends the user's sessions", async () => {
    const target = await buildUser(t.db);
    const targetAgent = await t.loginAs(target);
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const res = await admin
      .patch(`/api/users/${target.id}/reset-password`)
      .send({ password: 'brand new secret' })
      .expect(200);
    expect(res.body).toEqual({ message: 'Password reset' });
    await targetAgent.get('/api/auth/user').expect(401);
    await t.request.post('/api/auth/login').send({ email: target.email, password: TEST_PASSWORD }).expect(401);
    await t.request.post('/api/auth/login').send({ email: target.email, password: 'brand new secret' }).expect(200);
  });

  it('400 for a short password, 404 unknown user, 403 for a user', async () => {
    const target = await buildUser(t.db);
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin.patch(`/api/users/${target.id}/reset-password`).send({ password: 'short' }).expect(400);
    await admin.patch(`/api/users/${MISSING_ID}/reset-password`).send({ password: 'long enough pw' }).expect(404);
    const user = await t.loginAs(await buildUser(t.db));
    await user.patch(`/api/users/${target.id}/reset-password`).send({ password: 'long enough pw' }).expect(403);
  });
});

describe('POST /api/users/reset-password', () => {
  it('200 changes the own password; this session stays, other sessions end', async () => {
    const user = await buildUser(t.db);
    const here = await t.loginAs(user);
    const elsewhere = await t.loginAs(user);
    const res = await here
      .post('/api/users/reset-password')
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'my new password' })
      .expect(200);
    expect(res.body).toEqual({ message: 'Password changed' });
    await here.get('/api/auth/user').expect(200);
    await elsewhere.get('/api/auth/user').expect(401);
    await t.request.post('/api/auth/login').send({ email: user.email, password: 'my new password' }).expect(200);
  });

  it('400 for a wrong current password or a short new one, 401 without a session', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const wrong = await agent
      .post('/api/users/reset-password')
      .send({ currentPassword: 'nope', newPassword: 'my new password' })
      .expect(400);
    expect(wrong.body).toEqual({ message: 'Current password is incorrect' });
    const short = await agent
      .post('/api/users/reset-password')
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'x' })
      .expect(400);
    expect(short.body.errors[0].field).toBe('newPassword');
    await t.request
      .post('/api/users/reset-password')
      .send({ currentPassword: 'a', newPassword: 'bbbbbbbbb' })
      .expect(401);
  });
});

describe('PATCH /api/users/:id/preferences/picking-list', () => {
  it('200 for the user themself, with the spec body', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const res = await agent
      .patch(`/api/users/${user.id}/preferences/picking-list`)
      .send({ showPickingList: true })
      .expect(200);
    expect(res.body).toEqual({
      message: expect.any(String),
      user: { id: user.id, email: user.email, showPickingList: true },
    });
    expect((await t.db('users').where({ id: user.id }).first()).show_picking_list).toBe(true);
    const me = await agent.get('/api/auth/user').expect(200);
    expect(me.body.showPickingList).toBe(true);
  });

  it('200 for an admin changing another user; 403 for a non-admin changing another user', async () => {
    const target = await buildUser(t.db);
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin.patch(`/api/users/${target.id}/preferences/picking-list`).send({ showPickingList: true }).expect(200);
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    const res = await manager
      .patch(`/api/users/${target.id}/preferences/picking-list`)
      .send({ showPickingList: false })
      .expect(403);
    expect(res.body).toEqual({ message: expect.any(String) });
    expect((await t.db('users').where({ id: target.id }).first()).show_picking_list).toBe(true);
  });

  it('400 when not a boolean, 401 without a session, 404 unknown user (admin)', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const res = await agent
      .patch(`/api/users/${user.id}/preferences/picking-list`)
      .send({ showPickingList: 'yes' })
      .expect(400);
    expect(res.body.errors).toEqual([{ field: 'showPickingList', message: 'must be a boolean' }]);
    await t.request.patch(`/api/users/${user.id}/preferences/picking-list`).send({ showPickingList: true }).expect(401);
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin.patch(`/api/users/${MISSING_ID}/preferences/picking-list`).send({ showPickingList: true }).expect(404);
  });

  it("403 before the body is read: a non-admin with an invalid body for another user's preference", async () => {
    const target = await buildUser(t.db);
    const agent = await t.loginAs(await buildUser(t.db));
    const res = await agent
      .patch(`/api/users/${target.id}/preferences/picking-list`)
      .send({ showPickingList: 'yes' })
      .expect(403);
    expect(res.body).toEqual({ message: 'You can only change your own picking-list preference' });
    expect((await t.db('users').where({ id: target.id }).first()).show_picking_list).toBe(false);
  });
});

describe('GET /api/users/:id/deletion-check and DELETE /api/users/:id/safe', () => {
  it('200 canDelete for a user with only tokens and permissions; 204 deletes them', async () => {
    const target = await buildUser(t.db);
    const targetAgent = await t.loginAs(target);
    await targetAgent.post('/api/auth/tokens').send({ name: 'cli' }).expect(201);
    await t.db('user_permissions').insert({ user_id: target.id, permission: 'sales.refund' });
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const check = await admin.get(`/api/users/${target.id}/deletion-check`).expect(200);
    expect(check.body).toEqual({ canDelete: true, reasons: [] });
    await admin.delete(`/api/users/${target.id}/safe`).expect(204);
    expect(await t.db('users').where({ id: target.id }).first()).toBeUndefined();
    expect(await sessionsOf(target.id)).toBe(0);
    await targetAgent.get('/api/auth/user').expect(401);
  });

  it('409 with reasons for a user who created records; the user is kept', async () => {
    const target = await buildUser(t.db, { role: 'manager' });
    await buildItem(t.db, { createdBy: target.id });
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const check = await admin.get(`/api/users/${target.id}/deletion-check`).expect(200);
    expect(check.body.canDelete).toBe(false);
    expect(check.body.reasons).toEqual([expect.stringMatching(/^items: 1 record\(s\) reference it \(created_by\)$/)]);
    const res = await admin.delete(`/api/users/${target.id}/safe`).expect(409);
    expect(res.body).toEqual({ message: expect.any(String), reasons: check.body.reasons });
    expect(await t.db('users').where({ id: target.id }).first()).toBeDefined();
  });

  it('400 self, 404 unknown, 400 non-uuid, 403 manager', async () => {
    const admin = await buildUser(t.db, { role: 'admin' });
    const agent = await t.loginAs(admin);
    await agent.delete(`/api/users/${admin.id}/safe`).expect(400);
    await agent.get(`/api/users/${MISSING_ID}/deletion-check`).expect(404);
    await agent.delete(`/api/users/${MISSING_ID}/safe`).expect(404);
    await agent.get('/api/users/1/deletion-check').expect(400);
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await manager.get(`/api/users/${admin.id}/deletion-check`).expect(403);
    await manager.delete(`/api/users/${admin.id}/safe`).expect(403);
  });
});
