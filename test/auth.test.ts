import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExclusively } from '../src/jobs/advisory-lock';
import { JOBS } from '../src/jobs/scheduler';
import { testApp, type TestApp } from './helpers/app';
import { buildUser, TEST_PASSWORD } from './helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('GET /health and /api/health', () => {
  it('200 healthy without authentication', async () => {
    const res = await t.request.get('/health').expect(200);
    expect(res.body).toEqual({ status: 'healthy', timestamp: expect.any(String) });
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('200 with database connected, version and integer uptime', async () => {
    const res = await t.request.get('/api/health').expect(200);
    expect(res.body).toMatchObject({ status: 'healthy', database: 'connected', version: '1.0.0' });
    expect(Number.isInteger(res.body.uptime)).toBe(true);
  });
});

describe('POST /api/auth/login', () => {
  it('200 returns the user without any password hash and sets an HttpOnly SameSite=Lax cookie', async () => {
    const user = await buildUser(t.db, { role: 'manager' });
    const res = await t.request
      .post('/api/auth/login')
      .send({ email: user.email, password: TEST_PASSWORD })
      .expect(200);
    expect(res.body).toEqual({
      id: user.id,
      email: user.email,
      firstName: 'Test',
      lastName: 'User',
      role: 'manager',
      isActive: true,
      showPickingList: false,
      createdAt: user.created_at.toISOString(),
      updatedAt: user.updated_at.toISOString(),
    });
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^connect\.sid=/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
  });

  it('401 with one message for unknown email, wrong password and inactive user', async () => {
    const active = await buildUser(t.db);
    const inactive = await buildUser(t.db, { isActive: false });
    const attempts = [
      { email: 'nobody@example.ac.uk', password: TEST_PASSWORD },
      { email: active.email, password: 'wrong password' },
      { email: inactive.email, password: TEST_PASSWORD },
    ];
    for (const body of attempts) {
      const res = await t.request.post('/api/auth/login').send(body).expect(401);
      expect(res.body).toEqual({ message: 'Invalid email or password' });
    }
  });

  it('400 lists each missing field', async () => {
    const res = await t.request.post('/api/auth/login').send({}).expect(400);
    expect(res.body.message).toBe('Validation failed');
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['email', 'password']);
  });

  it('regenerates the session id at sign-in', async () => {
    const user = await buildUser(t.db);
    const agent = supertest.agent(t.app);
    const first = await agent.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(200);
    const second = await agent.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(200);
    const sid = (res: typeof first) => String(res.headers['set-cookie']).split(';')[0];
    expect(sid(first)).not.toEqual(sid(second));
  });
});

describe('GET /api/auth/user', () => {
  it('401 without a session', async () => {
    const res = await t.request.get('/api/auth/user').expect(401);
    expect(res.body).toEqual({ message: expect.any(String) });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="stores"');
  });

  it('200 with the session, and 401 again after logout', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const me = await agent.get('/api/auth/user').expect(200);
    expect(me.body.id).toBe(user.id);
    expect(me.body).not.toHaveProperty('passwordHash');
    await agent.post('/api/auth/logout').expect(204);
    await agent.get('/api/auth/user').expect(401);
  });
});

describe('bearer tokens', () => {
  it('201 creates a token shown once; it authenticates; the list has no secret; revoked it is 401', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const created = await agent.post('/api/auth/tokens').send({ name: 'script', expiresInDays: 30 }).expect(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'script',
      token: expect.any(String),
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
    });

    const me = await t.request.get('/api/auth/user').set('Authorization', `Bearer ${created.body.token}`).expect(200);
    expect(me.body.email).toBe(user.email);

    const list = await agent.get('/api/auth/tokens').expect(200);
    expect(list.body).toEqual([
      {
        id: created.body.id,
        name: 'script',
        createdAt: created.body.createdAt,
        expiresAt: created.body.expiresAt,
        lastUsedAt: expect.any(String),
      },
    ]);
    expect(JSON.stringify(list.body)).not.toContain(created.body.token);

    await agent.delete(`/api/auth/tokens/${created.body.id}`).expect(204);
    await t.request.get('/api/auth/user').set('Authorization', `Bearer ${created.body.token}`).expect(401);
    await agent.delete(`/api/auth/tokens/${created.body.id}`).expect(404);
  });

  it('401 for an unknown or expired token', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const created = await agent.post('/api/auth/tokens').send({ name: 'short' }).expect(201);
    await t
      .db('api_tokens')
      .where({ id: created.body.id })
      .update({ expires_at: t.db.raw(`now() - interval '1 second'`) });
    await t.request.get('/api/auth/user').set('Authorization', `Bearer ${created.body.token}`).expect(401);
    const nonsense = await t.request.get('/api/auth/user').set('Authorization', 'Bearer sst_nonsense').expect(401);
    expect(nonsense.headers['www-authenticate']).toBe('Bearer realm="stores", error="invalid_token"');
  });
});

describe('request hygiene', () => {
  it('400 for malformed JSON, 413 over 1 MB, 415 for a non-JSON body, 404 JSON for an unknown path', async () => {
    const bad = await t.request
      .post('/api/auth/login')
      .set('Content-Type', 'application/json')
      .send('{"email":')
      .expect(400);
    expect(bad.body).toEqual({ message: 'Malformed JSON in request body' });
    const big = await t.request
      .post('/api/auth/login')
      .send({ email: 'x', password: 'y'.repeat(1_100_000) })
      .expect(413);
    expect(big.body.message).toMatch(/too large/);
    await t.request.post('/api/auth/login').set('Content-Type', 'text/plain').send('hello').expect(415);
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const missing = await agent.get('/api/nothing-here').expect(404);
    expect(missing.body.message).toMatch(/No route/);
    expect(JSON.stringify(missing.body)).not.toMatch(/at .*\.ts/);
  });

  it('403 for a cross-site state-changing request carried by the session cookie', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    await agent.post('/api/auth/tokens').set('Origin', 'https://evil.example').send({ name: 'x' }).expect(403);
    await agent.post('/api/auth/tokens').set('Sec-Fetch-Site', 'cross-site').send({ name: 'x' }).expect(403);
    await agent.post('/api/auth/tokens').set('Sec-Fetch-Site', 'same-origin').send({ name: 'x' }).expect(201);
  });
});

describe('GET /api/logout', () => {
  it('302 to / and the session is gone', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const res = await agent.get('/api/logout').expect(302);
    expect(res.headers.location).toBe('/');
    await agent.get('/api/auth/user').expect(401);
    const left = await t.db('sessions').whereRaw(`(sess -> 'passport' ->> 'user') = ?`, [user.id]);
    expect(left).toHaveLength(0);
  });

  it('from another site (Sec-Fetch-Site: cross-site) 200 a page with a Sign out button and the session stays; the button ends it', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const res = await agent.get('/api/logout').set('Sec-Fetch-Site', 'cross-site').expect(200);
    expect(res.type).toBe('text/html');
    expect(res.text).toContain('<form method="post" action="/logout">');
    expect(res.text).toMatch(/<button type="submit">Sign out<\/button>/);
    await agent.get('/api/auth/user').expect(200);
    expect(await t.db('sessions').whereRaw(`(sess -> 'passport' ->> 'user') = ?`, [user.id])).toHaveLength(1);

    const token = /name="_csrf" value="([^"]+)"/.exec(res.text)?.[1];
    expect(token).toBeTruthy();
    await agent.post('/logout').type('form').send({ _csrf: token }).expect(303);
    await agent.get('/api/auth/user').expect(401);
  });

  it('same-site, same-origin, none (typed in) and no header at all end the session as before', async () => {
    for (const site of ['same-site', 'same-origin', 'none', undefined]) {
      const agent = await t.loginAs(await buildUser(t.db));
      const request = agent.get('/api/logout');
      const res = await (site ? request.set('Sec-Fetch-Site', site) : request).expect(302);
      expect(res.headers.location, String(site)).toBe('/');
      await agent.get('/api/auth/user').expect(401);
    }
  });
});

describe('Authorization header', () => {
  it('401 for a malformed header, never a fallback to the session', async () => {
    const agent = await t.loginAs(await buildUser(t.db));
    const res = await agent.get('/api/auth/user').set('Authorization', 'Basic dXNlcjpwYXNz').expect(401);
    expect(res.body).toEqual({ message: 'Malformed Authorization header' });
  });
});

describe('session pruning', () => {
  it('the pruner job deletes expired session rows only', async () => {
    const user = await buildUser(t.db);
    const live = await t.loginAs(user);
    await t.db('sessions').insert({
      sid: 'expired-session',
      sess: JSON.stringify({ cookie: {} }),
      expire: t.db.raw(`now() - interval '1 hour'`),
    });
    const job = JOBS.find((j) => j.name === 'prune-expired-sessions')!;
    expect(await runExclusively(t.db, job.name, job.run)).toBe(true);
    expect(await t.db('sessions').where({ sid: 'expired-session' }).first()).toBeUndefined();
    await live.get('/api/auth/user').expect(200);
  });
});

describe('session store', () => {
  it('reads the user with the session but never writes the user row into the sessions table', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    // Make the next request refresh (and so rewrite) the stored session.
    await t.db.raw(
      `UPDATE sessions SET sess = jsonb_set(sess::jsonb, '{lastSeenAt}', '0')::json WHERE sess -> 'passport' ->> 'user' = ?`,
      [user.id],
    );
    const me = await agent.get('/api/auth/user').expect(200);
    expect(me.body.id).toBe(user.id);
    const [row] = await t.db('sessions').whereRaw(`sess -> 'passport' ->> 'user' = ?`, [user.id]).select('sess');
    expect(row.sess.lastSeenAt).toBeGreaterThan(0);
    expect(JSON.stringify(row.sess)).not.toMatch(/loadedUser|password_hash|scrypt/);
  });
});
