import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser, TEST_PASSWORD } from './helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const DAY_MS = 86_400_000;
const tokensOf = (userId: string) => t.db('api_tokens').where({ user_id: userId }).pluck('id');
const asBearer = (token: string) => t.request.get('/api/auth/user').set('Authorization', `Bearer ${token}`);

describe('POST /api/auth/tokens: lifetime', () => {
  it('201 expires after 90 days by default, after expiresInDays up to 365; 400 beyond or for null', async () => {
    const agent = await t.loginAs(await buildUser(t.db));
    const byDefault = await agent.post('/api/auth/tokens').send({ name: 'default' }).expect(201);
    const ninety = new Date(byDefault.body.expiresAt).getTime() - new Date(byDefault.body.createdAt).getTime();
    expect(Math.abs(ninety - 90 * DAY_MS)).toBeLessThan(60_000);
    const row = await t.db('api_tokens').where({ id: byDefault.body.id }).first();
    expect(row.expires_at).toBeInstanceOf(Date);

    const year = await agent.post('/api/auth/tokens').send({ name: 'year', expiresInDays: 365 }).expect(201);
    const span = new Date(year.body.expiresAt).getTime() - new Date(year.body.createdAt).getTime();
    expect(Math.abs(span - 365 * DAY_MS)).toBeLessThan(60_000);

    const tooLong = await agent.post('/api/auth/tokens').send({ name: 'forever', expiresInDays: 366 }).expect(400);
    expect(tooLong.body.errors).toContainEqual({ field: 'expiresInDays', message: 'must be at most 365' });
    const never = await agent.post('/api/auth/tokens').send({ name: 'forever', expiresInDays: null }).expect(400);
    expect(never.body.errors[0].field).toBe('expiresInDays');
    expect(await t.db('api_tokens').where({ name: 'forever' }).count<{ count: number }[]>('* as count')).toEqual([
      { count: 0 },
    ]);
    expect(await t.db('api_tokens').whereNull('expires_at').count<{ count: number }[]>('* as count')).toEqual([
      { count: 0 },
    ]);
  });
});

describe('POST /api/auth/tokens with a bearer token', () => {
  it('403: a token cannot create tokens; a session can', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const { body: first } = await agent.post('/api/auth/tokens').send({ name: 'cli' }).expect(201);
    const res = await t.request
      .post('/api/auth/tokens')
      .set('Authorization', `Bearer ${first.token}`)
      .send({ name: 'child' })
      .expect(403);
    expect(res.body).toEqual({
      message: 'An API token cannot create API tokens; sign in and create it from your session',
    });
    expect(await tokensOf(user.id)).toEqual([first.id]);
    // the token still works for everything else
    await asBearer(first.token).expect(200);
  });
});

describe('a password change ends the API tokens', () => {
  it('POST /api/users/reset-password revokes every token of the user (this session stays)', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const { body: a } = await agent.post('/api/auth/tokens').send({ name: 'a' }).expect(201);
    const { body: b } = await agent.post('/api/auth/tokens').send({ name: 'b' }).expect(201);
    const other = await buildUser(t.db);
    const { body: theirs } = await (
      await t.loginAs(other)
    )
      .post('/api/auth/tokens')
      .send({ name: 'theirs' })
      .expect(201);

    await agent
      .post('/api/users/reset-password')
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'a fresh passphrase' })
      .expect(200);
    expect(await tokensOf(user.id)).toEqual([]);
    await asBearer(a.token).expect(401);
    await asBearer(b.token).expect(401);
    await agent.get('/api/auth/user').expect(200);
    // another user's token is untouched
    expect(await tokensOf(other.id)).toEqual([theirs.id]);
    await asBearer(theirs.token).expect(200);
  });

  it('POST /api/users/reset-password through a bearer token revokes that token too', async () => {
    const user = await buildUser(t.db);
    const { body: token } = await (await t.loginAs(user)).post('/api/auth/tokens').send({ name: 'cli' }).expect(201);
    await t.request
      .post('/api/users/reset-password')
      .set('Authorization', `Bearer ${token.token}`)
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'a fresh passphrase' })
      .expect(200);
    expect(await tokensOf(user.id)).toEqual([]);
    await asBearer(token.token).expect(401);
  });

  it("PATCH /api/users/{id}/reset-password (admin) revokes the user's tokens", async () => {
    const user = await buildUser(t.db);
    const { body: token } = await (await t.loginAs(user)).post('/api/auth/tokens').send({ name: 'cli' }).expect(201);
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin.patch(`/api/users/${user.id}/reset-password`).send({ password: 'set by the admin' }).expect(200);
    expect(await tokensOf(user.id)).toEqual([]);
    await asBearer(token.token).expect(401);
  });
});
