import { createHash } from 'node:crypto';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser, TEST_PASSWORD } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildStockedItem } from './helpers/inventory-factories';
import { SYSTEM_ACTOR } from '../src/modules/audit/audit.actor';
import { usersService, type UserRow } from '../src/modules/users/users.service';
import * as apiTokensExpire from '../migrations/20261123000800_api_tokens_expire';

let t: TestApp;
let admin: UserRow;
let adminAgent: supertest.Agent;
beforeAll(async () => {
  t = await testApp();
  admin = await buildUser(t.db, { role: 'admin', email: 'audit-users-admin@example.ac.uk' });
  adminAgent = await t.loginAs(admin);
});
afterAll(() => t.close());

type AuditEvent = {
  action: string;
  entityId: string | null;
  actor: Record<string, unknown>;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
};

const eventsOf = async (query: Record<string, string>): Promise<AuditEvent[]> =>
  (
    await adminAgent
      .get('/api/audit')
      .query({ limit: 100, ...query })
      .expect(200)
  ).body.events;
const userEvents = async (id: string, action?: string) =>
  eventsOf({ entityType: 'user', entityId: id, ...(action ? { action } : {}) });
const actions = (events: AuditEvent[]) => events.map((e) => e.action);
const sessionActor = (user: UserRow) => ({
  kind: 'session',
  userId: user.id,
  email: user.email,
  mcpKeyId: null,
  ip: expect.any(String),
});
const storedTrail = async () => JSON.stringify(await t.db('audit_log'));
const bearer = (req: supertest.Test, token: string) => req.set('Authorization', `Bearer ${token}`);

describe('audit of users', () => {
  it('create, role change, reset, preference, deactivate, reactivate and delete, each with before and after; no password in the trail', async () => {
    const created = await adminAgent
      .post('/api/users')
      .send({
        email: 'Audit.Person@example.ac.uk',
        firstName: 'Audit',
        lastName: 'Person',
        role: 'user',
        password: 'first long password',
      })
      .expect(201);
    const id: string = created.body.id;
    await adminAgent.put(`/api/users/${id}/role`).send({ role: 'manager' }).expect(200);
    await adminAgent.put(`/api/users/${id}/role`).send({ role: 'manager' }).expect(200);
    await adminAgent.patch(`/api/users/${id}/reset-password`).send({ password: 'second long password' }).expect(200);
    await adminAgent.patch(`/api/users/${id}/preferences/picking-list`).send({ showPickingList: true }).expect(200);
    await adminAgent.patch(`/api/users/${id}/preferences/picking-list`).send({ showPickingList: true }).expect(200);
    await adminAgent.delete(`/api/users/${id}`).expect(204);
    await adminAgent.delete(`/api/users/${id}`).expect(204);
    await adminAgent.patch(`/api/users/${id}/reactivate`).expect(200);
    await adminAgent.patch(`/api/users/${id}/reactivate`).expect(200);
    await adminAgent.delete(`/api/users/${id}/safe`).expect(204);

    const events = await userEvents(id);
    // newest first; each repeat that changed nothing left no row
    expect(actions(events)).toEqual([
      'delete',
      'reactivate',
      'deactivate',
      'update',
      'reset_password',
      'change_role',
      'create',
    ]);
    for (const event of events) expect(event.actor).toEqual(sessionActor(admin));
    const byAction = Object.fromEntries(events.map((e) => [e.action, e]));
    expect(byAction.create).toMatchObject({
      before: null,
      after: {
        id,
        email: 'audit.person@example.ac.uk',
        first_name: 'Audit',
        role: 'user',
        is_active: true,
        password_hash: '[redacted]',
      },
    });
    expect(byAction.change_role).toMatchObject({ before: { role: 'user' }, after: { role: 'manager' } });
    expect(byAction.reset_password).toMatchObject({
      before: { password_hash: '[redacted]' },
      after: { password_hash: '[redacted]', revokedTokens: 0 },
    });
    expect(byAction.update).toEqual(
      expect.objectContaining({ before: { show_picking_list: false }, after: { show_picking_list: true } }),
    );
    expect(byAction.deactivate).toMatchObject({
      before: { is_active: true },
      after: { is_active: false, revokedTokens: 0 },
    });
    expect(byAction.reactivate).toMatchObject({ before: { is_active: false }, after: { is_active: true } });
    expect(byAction.delete).toMatchObject({
      before: { id, email: 'audit.person@example.ac.uk', role: 'manager', password_hash: '[redacted]' },
      after: null,
    });
    expect(await storedTrail()).not.toMatch(/first long password|second long password|scrypt\$/);
  });

  it('a refused change leaves no row: a short password, the last admin, a wrong current password', async () => {
    await adminAgent
      .post('/api/users')
      .send({ email: 'too-short@example.ac.uk', firstName: 'A', lastName: 'B', role: 'user', password: 'short' })
      .expect(400);
    expect((await eventsOf({ entityType: 'user', action: 'create' })).map((e) => e.after?.email)).not.toContain(
      'too-short@example.ac.uk',
    );

    const target = await buildUser(t.db);
    await adminAgent.patch(`/api/users/${target.id}/reset-password`).send({ password: 'short' }).expect(400);
    const targetAgent = await t.loginAs(target);
    await targetAgent
      .post('/api/users/reset-password')
      .send({ currentPassword: 'not my password', newPassword: 'a long new password' })
      .expect(400);
    await targetAgent
      .post('/api/users/reset-password')
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'short' })
      .expect(400);
    expect(actions(await userEvents(target.id))).toEqual(['sign_in']);

    const otherAdmins = await t
      .db('users')
      .where({ role: 'admin', is_active: true })
      .whereNot({ id: admin.id })
      .pluck('id');
    await t.db('users').whereIn('id', otherAdmins).update({ is_active: false });
    try {
      await adminAgent.put(`/api/users/${admin.id}/role`).send({ role: 'user' }).expect(400);
      await expect(usersService(t.db).deactivate(admin.id, SYSTEM_ACTOR)).rejects.toMatchObject({
        status: 400,
        message: 'Cannot deactivate the last active admin',
      });
    } finally {
      await t.db('users').whereIn('id', otherAdmins).update({ is_active: true });
    }
    expect(actions(await userEvents(admin.id)).filter((a) => a !== 'sign_in')).toEqual([]);
  });

  it("a user's own password change is recorded by their session, with the tokens it revoked; the passwords never appear", async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    await agent.post('/api/auth/tokens').send({ name: 'laptop' }).expect(201);
    await agent.post('/api/auth/tokens').send({ name: 'desktop' }).expect(201);
    await agent
      .post('/api/users/reset-password')
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'my own new password' })
      .expect(200);
    const [change] = await userEvents(user.id, 'change_password');
    expect(change).toMatchObject({
      actor: sessionActor(user),
      before: { password_hash: '[redacted]' },
      after: { password_hash: '[redacted]', revokedTokens: 2 },
    });
    expect(await storedTrail()).not.toMatch(/my own new password|correct horse battery staple|scrypt\$/);
  });
});

describe('audit of permissions', () => {
  it('grant and revoke with the permissions before and after; a repeat records nothing', async () => {
    const user = await buildUser(t.db);
    const path = `/api/settings/users/${user.id}/permissions/sales.refund`;
    await adminAgent.put(path).send({ granted: true }).expect(200);
    await adminAgent.put(path).send({ granted: true }).expect(200);
    await adminAgent.put(path).send({ granted: false }).expect(200);
    await adminAgent.put(path).send({ granted: false }).expect(200);
    const events = await userEvents(user.id);
    expect(actions(events)).toEqual(['revoke_permission', 'grant_permission']);
    expect(events[1]).toMatchObject({
      actor: sessionActor(admin),
      before: { permissions: [] },
      after: { permissions: ['sales.refund'] },
    });
    expect(events[0]).toMatchObject({
      actor: sessionActor(admin),
      before: { permissions: ['sales.refund'] },
      after: { permissions: [] },
    });
  });
});

describe('audit of API tokens', () => {
  it('create by session and revoke by token, never with the secret; a refused revoke leaves no row', async () => {
    const user = await buildUser(t.db, { role: 'manager' });
    const agent = await t.loginAs(user);
    const first = (await agent.post('/api/auth/tokens').send({ name: 'build server', expiresInDays: 30 }).expect(201))
      .body;
    const second = (await agent.post('/api/auth/tokens').send({ name: 'laptop' }).expect(201)).body;
    await bearer(t.request.delete(`/api/auth/tokens/${first.id}`), second.token).expect(204);
    await agent.delete(`/api/auth/tokens/${first.id}`).expect(404);
    await (await t.loginAs(await buildUser(t.db))).delete(`/api/auth/tokens/${second.id}`).expect(404);

    const events = await eventsOf({ entityType: 'api_token', entityId: String(first.id) });
    expect(actions(events)).toEqual(['revoke', 'create']);
    const audited = { name: 'build server', expiresAt: first.expiresAt, userId: user.id };
    expect(events[1]).toMatchObject({ actor: sessionActor(user), before: null, after: audited });
    expect(events[0]).toMatchObject({
      actor: { kind: 'token', userId: user.id, email: user.email },
      before: audited,
      after: null,
    });
    expect(actions(await eventsOf({ entityType: 'api_token', entityId: String(second.id) }))).toEqual(['create']);

    const stored = await storedTrail();
    for (const { token } of [first, second]) {
      expect(stored).not.toContain(token);
      expect(stored).not.toContain(createHash('sha256').update(token).digest('hex'));
    }
  });
});

describe('audit of password sign-ins', () => {
  const signIn = (address: string, email: string, password: string) =>
    t.request.post('/api/auth/login').set('X-Forwarded-For', address).send({ email, password });
  const anonymous = (ip: string) => ({ kind: 'anonymous', userId: null, email: null, mcpKeyId: null, ip });
  const failuresFor = async (email: string) =>
    (await eventsOf({ action: 'sign_in_failed' })).filter((e) => e.after?.email === email);

  it("a success is the user's own session; each refusal is anonymous, with the email tried and why; the password tried never appears", async () => {
    const address = '203.0.113.10';
    const user = await buildUser(t.db, { email: 'signin.audit@example.ac.uk' });
    const inactive = await buildUser(t.db, { email: 'signin.inactive@example.ac.uk', isActive: false });
    const ssoOnly = await buildUser(t.db, { email: 'signin.sso@example.ac.uk' });
    await t.db('users').where({ id: ssoOnly.id }).update({ password_hash: null });

    await signIn(address, 'SignIn.Audit@example.ac.uk', TEST_PASSWORD).expect(200);
    await signIn(address, 'SignIn.Audit@example.ac.uk', 'not the password 1').expect(401);
    await signIn(address, 'Nobody.Here@example.ac.uk', 'not the password 2').expect(401);
    await signIn(address, inactive.email, TEST_PASSWORD).expect(401);
    await signIn(address, ssoOnly.email, 'not the password 3').expect(401);

    const [success] = await userEvents(user.id, 'sign_in');
    expect(success).toMatchObject({ actor: { ...sessionActor(user), ip: address }, after: { method: 'password' } });
    const refusal = (entityId: string | null, email: string, reason: string) => ({
      entityId,
      actor: anonymous(address),
      before: null,
      after: { email, method: 'password', reason },
    });
    expect(await failuresFor('signin.audit@example.ac.uk')).toEqual([
      expect.objectContaining(refusal(user.id, 'signin.audit@example.ac.uk', 'wrong_password')),
    ]);
    expect(await failuresFor('nobody.here@example.ac.uk')).toEqual([
      expect.objectContaining(refusal(null, 'nobody.here@example.ac.uk', 'unknown_account')),
    ]);
    expect(await failuresFor(inactive.email)).toEqual([
      expect.objectContaining(refusal(inactive.id, inactive.email, 'inactive')),
    ]);
    expect(await failuresFor(ssoOnly.email)).toEqual([
      expect.objectContaining(refusal(ssoOnly.id, ssoOnly.email, 'no_local_password')),
    ]);
    expect(await storedTrail()).not.toMatch(/not the password|correct horse battery staple/);
  });

  it('rate limited: the first refusal of a window is recorded, the rest of the flood is not', async () => {
    const address = '203.0.113.20';
    const user = await buildUser(t.db, { email: 'signin.flood@example.ac.uk' });
    for (let i = 0; i < 10; i += 1) await signIn(address, user.email, `wrong password ${i}`).expect(401);
    for (let i = 0; i < 3; i += 1) await signIn(address, user.email, `wrong password ${i}`).expect(429);
    const reasons = (await failuresFor(user.email)).map((e) => e.after?.reason);
    expect(reasons).toEqual(['rate_limited', ...Array(10).fill('wrong_password')]);
    expect((await failuresFor(user.email))[0]).toMatchObject({ entityId: user.id, actor: anonymous(address) });
  });
});

describe('a safe delete', () => {
  it("does not count a user's sale idempotency keys as records they own: they go with the user", async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const item = await buildStockedItem(t.db, 5, { categoryId: (await buildCategory(t.db)).id, price: '2.00' });
    const { code } = await buildChargeCode(t.db);
    await agent
      .post('/api/sales')
      .set('Idempotency-Key', 'audit-users-sale')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }], vatApplied: false })
      .expect(201);
    const { reasons } = (await adminAgent.get(`/api/users/${user.id}/deletion-check`).expect(200)).body;
    expect(reasons).toContainEqual(expect.stringMatching(/^sales: 1 record/));
    expect(reasons).not.toContainEqual(expect.stringMatching(/idempotency/));
  });
});

describe('API tokens made before expiry existed', () => {
  it('the migration gives them 90 days from its run and refuses a token without an expiry from then on', async () => {
    const user = await buildUser(t.db);
    await apiTokensExpire.down(t.db);
    const [{ id }] = await t
      .db('api_tokens')
      .insert({ user_id: user.id, name: 'old', token_hash: 'old-token-digest', expires_at: null })
      .returning('id');
    await apiTokensExpire.up(t.db);
    const { expires_at: expiresAt } = await t.db('api_tokens').where({ id }).first();
    const days = (expiresAt.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.99);
    expect(days).toBeLessThanOrEqual(90);
    await expect(
      t.db('api_tokens').insert({ user_id: user.id, name: 'never', token_hash: 'never-digest', expires_at: null }),
    ).rejects.toMatchObject({ code: '23502' });
  });
});
