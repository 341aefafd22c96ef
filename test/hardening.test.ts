import { Writable } from 'node:stream';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { createDb, createPgPool } from '../src/db/knex';
import { createLogger } from '../src/logger';
import { APP_VERSION } from '../src/lib/version';
import { appOnUnusableDatabase, testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser, TEST_PASSWORD } from './helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const sidOf = (agentCookie: string) =>
  decodeURIComponent(agentCookie.split(';')[0].split('=')[1]).replace(/^s:/, '').split('.')[0];

async function loginWithCookie(app: TestApp, email: string) {
  const res = await app.request.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(200);
  const cookie = String(res.headers['set-cookie']).split(';')[0];
  return { cookie, sid: sidOf(cookie) };
}

const sessionRow = (sid: string) =>
  t.db('sessions').where({ sid }).first<{ sid: string; sess: Record<string, unknown>; expire: Date } | undefined>();
const setSessionField = (sid: string, field: string, value: number) =>
  t.db.raw(`UPDATE sessions SET sess = jsonb_set(sess::jsonb, ?, to_jsonb(?::bigint))::json WHERE sid = ?`, [
    `{${field}}`,
    value,
    sid,
  ]);

describe('POST /api/auth/login rate limiting', () => {
  it('429 after LOGIN_MAX_FAILURES_PER_ADDRESS failures in 15 minutes from one address, whatever the account; counters live in rate_limits', async () => {
    const narrow = await testApp({ LOGIN_MAX_FAILURES_PER_ADDRESS: '10' });
    try {
      const user = await buildUser(narrow.db);
      for (let i = 0; i < 10; i++) {
        await narrow.request
          .post('/api/auth/login')
          .set('X-Forwarded-For', '203.0.113.7')
          .send({ email: `nobody-${i}@example.ac.uk`, password: 'x' })
          .expect(401);
      }
      const res = await narrow.request
        .post('/api/auth/login')
        .set('X-Forwarded-For', '203.0.113.7')
        .send({ email: user.email, password: TEST_PASSWORD })
        .expect(429);
      expect(res.body).toEqual({ message: expect.any(String) });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      await narrow.request
        .post('/api/auth/login')
        .set('X-Forwarded-For', '203.0.113.8')
        .send({ email: user.email, password: TEST_PASSWORD })
        .expect(200);
      expect(await narrow.db('rate_limits').where({ key: 'login_ip:203.0.113.7' }).first()).toMatchObject({
        points: 11,
      });
    } finally {
      await narrow.close();
    }
  });
});

describe('sessions', () => {
  it('the store row is not rewritten by a second request within the minute; it is after a minute', async () => {
    const user = await buildUser(t.db);
    const { cookie, sid } = await loginWithCookie(t, user.email);
    const first = await sessionRow(sid);
    expect(first).toBeDefined();
    await t.request.get('/api/auth/user').set('Cookie', cookie).expect(200);
    await t.request.get('/api/auth/user').set('Cookie', cookie).expect(200);
    const second = await sessionRow(sid);
    expect(second!.expire.getTime()).toBe(first!.expire.getTime());
    expect(second!.sess).toEqual(first!.sess);

    const aWhileAgo = Date.now() - 2 * 60_000;
    await setSessionField(sid, 'lastSeenAt', aWhileAgo);
    await t.request.get('/api/auth/user').set('Cookie', cookie).expect(200);
    const third = await sessionRow(sid);
    expect(third!.sess.lastSeenAt as number).toBeGreaterThan(aWhileAgo + 60_000);
    expect(third!.expire.getTime()).toBeGreaterThanOrEqual(first!.expire.getTime());
  });

  it('401 once the absolute lifetime since sign-in has passed, and the row is gone', async () => {
    const user = await buildUser(t.db);
    const { cookie, sid } = await loginWithCookie(t, user.email);
    await setSessionField(sid, 'signedInAt', Date.now() - t.config.sessionMaxAgeMs - 60_000);
    await t.request.get('/api/auth/user').set('Cookie', cookie).expect(401);
    expect(await sessionRow(sid)).toBeUndefined();
  });

  it('401 once the session has been idle past its expiry', async () => {
    const user = await buildUser(t.db);
    const { cookie, sid } = await loginWithCookie(t, user.email);
    await t
      .db('sessions')
      .where({ sid })
      .update({ expire: t.db.raw(`now() - interval '1 minute'`) });
    await t.request.get('/api/auth/user').set('Cookie', cookie).expect(401);
  });

  it('GET /health does no session work even with a session cookie', async () => {
    const user = await buildUser(t.db);
    const { cookie, sid } = await loginWithCookie(t, user.email);
    await setSessionField(sid, 'lastSeenAt', Date.now() - 5 * 60_000);
    const before = await sessionRow(sid);
    const res = await t.request.get('/health').set('Cookie', cookie).expect(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect((await sessionRow(sid))!.sess).toEqual(before!.sess);
  });

  it('the cookie is Secure when PUBLIC_URL is https, behind a proxy that says so', async () => {
    const secure = await testApp({ PUBLIC_URL: 'https://stores.example.ac.uk' });
    try {
      const user = await buildUser(secure.db);
      const res = await secure.request
        .post('/api/auth/login')
        .set('X-Forwarded-Proto', 'https')
        .send({ email: user.email, password: TEST_PASSWORD })
        .expect(200);
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure/);
      expect(String(res.headers['set-cookie'])).toMatch(/HttpOnly/);
    } finally {
      await secure.close();
    }
  });
});

describe('database outages', () => {
  it.each([
    ['refuses connections', 'postgres://nobody:nothing@127.0.0.1:9/none'],
    ["host's name does not resolve", 'postgres://nobody:nothing@stores-db.invalid/none'],
  ])(
    '/api/health answers 503 disconnected, and other routes 503 without a stack, when the database %s',
    async (_, url) => {
      const { app } = appOnUnusableDatabase(url);
      const health = await supertest(app).get('/api/health').expect(503);
      expect(health.body).toMatchObject({ status: 'unhealthy', database: 'disconnected', version: APP_VERSION });
      await supertest(app).get('/health').expect(200);
      const res = await supertest(app).get('/api/auth/user').set('Authorization', 'Bearer sst_whatever').expect(503);
      expect(res.body).toEqual({ message: 'Service temporarily unavailable' });
    },
  );

  it('recovers without a restart after every connection of the app was terminated', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    await agent.get('/api/auth/user').expect(200);
    const dbName = new URL(t.databaseUrl).pathname.slice(1);
    const terminated = await t.db.raw<{ rows: unknown[] }>(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()`,
      [dbName],
    );
    expect(terminated.rows.length).toBeGreaterThan(0);
    const deadline = Date.now() + 2000;
    let health = 0;
    let me = 0;
    while (Date.now() < deadline && (health !== 200 || me !== 200)) {
      health = (await t.request.get('/api/health')).status;
      me = (await agent.get('/api/auth/user')).status;
    }
    expect({ health, me }).toEqual({ health: 200, me: 200 });
  });

  it('503 with Retry-After, not 500, for a write that reaches a read-only server (25006: a standby, or a primary demoted in a failover)', async () => {
    const own = await testApp();
    const db = createDb(own.databaseUrl, 2, createLogger('silent'));
    const sessionPool = createPgPool(own.databaseUrl, () => undefined, 1);
    try {
      const agent = await own.loginAs(await buildUser(own.db, { role: 'manager' }));
      const { token } = (await agent.post('/api/auth/tokens').send({ name: 'counter' }).expect(201)).body;
      const item = await buildItem(own.db);
      // every connection opened from now on is read-only, as on a hot standby: a real server's 25006
      const name = new URL(own.databaseUrl).pathname.slice(1);
      await own.db.raw(`ALTER DATABASE "${name}" SET default_transaction_read_only = on`);
      const app = buildApp({
        db,
        databaseUrl: own.databaseUrl,
        config: own.config,
        logger: createLogger('silent'),
        sessionPool,
        sessionSecret: own.config.sessionSecret!,
      });
      const bearer = { Authorization: `Bearer ${token}` };
      await supertest(app).get(`/api/items/${item.id}`).set(bearer).expect(200);
      const res = await supertest(app)
        .post(`/api/items/${item.id}/stock`)
        .set(bearer)
        .send({ type: 'in', quantity: 5, reason: 'delivery' });
      expect([res.status, res.headers['retry-after'], res.body]).toEqual([
        503,
        '2',
        { message: 'Service temporarily unavailable' },
      ]);
      expect(await own.db('stock_movements').where({ item_id: item.id }).count<{ count: number }[]>('* as c')).toEqual([
        { c: 0 },
      ]);
    } finally {
      await db.destroy();
      await sessionPool.end();
      await own.close();
    }
  });
});

describe('CSRF and content types', () => {
  it('403 for Origin null or a foreign Origin on a session-cookie request; same origin passes', async () => {
    const agent = await t.loginAs(await buildUser(t.db));
    await agent.post('/api/auth/tokens').set('Origin', 'null').send({ name: 'x' }).expect(403);
    await agent.delete('/api/auth/tokens/1').set('Origin', 'https://evil.example').expect(403);
    await agent.post('/api/auth/tokens').set('Origin', t.config.publicUrl).send({ name: 'x' }).expect(201);
  });

  it('bearer-token requests are exempt from the cross-site check', async () => {
    const agent = await t.loginAs(await buildUser(t.db));
    const { body } = await agent.post('/api/auth/tokens').send({ name: 'ci' }).expect(201);
    const { body: other } = await agent.post('/api/auth/tokens').send({ name: 'old' }).expect(201);
    await t.request
      .delete(`/api/auth/tokens/${other.id}`)
      .set('Authorization', `Bearer ${body.token}`)
      .set('Origin', 'https://evil.example')
      .set('Sec-Fetch-Site', 'cross-site')
      .expect(204);
    expect(await t.db('api_tokens').where({ id: other.id }).first()).toBeUndefined();
  });

  it('415 for form-encoded and text bodies on state-changing requests; an empty body is fine', async () => {
    const agent = await t.loginAs(await buildUser(t.db));
    const res = await agent.post('/api/auth/tokens').type('form').send('name=x').expect(415);
    expect(res.body).toEqual({ message: 'Content-Type must be application/json' });
    await agent
      .put('/api/users/00000000-0000-4000-8000-000000000000/role')
      .set('Content-Type', 'text/plain')
      .send('admin')
      .expect(415);
    await agent.post('/api/auth/logout').expect(204);
  });
});

describe('errors', () => {
  it('400 for a non-numeric or out-of-range int id', async () => {
    const agent = await t.loginAs(await buildUser(t.db));
    const res = await agent.delete('/api/auth/tokens/abc').expect(400);
    expect(res.body).toMatchObject({
      message: 'Validation failed',
      errors: [{ field: 'id', message: expect.any(String) }],
    });
    await agent.delete('/api/auth/tokens/99999999999').expect(400);
    await agent.delete('/api/auth/tokens/1.5').expect(400);
  });

  it('an unexpected failure is a 500 with a generic message: no stack, no detail in production', async () => {
    for (const env of ['production', 'development']) {
      const broken = await testApp({ NODE_ENV: env });
      try {
        const user = await buildUser(broken.db);
        const agent = await broken.loginAs(user);
        await broken.db.raw('ALTER TABLE api_tokens RENAME TO api_tokens_gone');
        const res = await agent.get('/api/auth/tokens').expect(500);
        expect(res.body.message).toBe('Internal server error');
        if (env === 'production') expect(res.body).toEqual({ message: 'Internal server error' });
        expect(JSON.stringify(res.body)).not.toMatch(/\n\s+at |\.ts:\d+/);
      } finally {
        await broken.close();
      }
    }
  });
});

describe('logging', () => {
  it('redacts Authorization, Cookie and passwords', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logged = await testApp({ LOG_LEVEL: 'info' }, { logDestination: sink });
    try {
      const user = await buildUser(logged.db);
      const login = await logged.request
        .post('/api/auth/login')
        .send({ email: user.email, password: TEST_PASSWORD })
        .expect(200);
      const cookie = String(login.headers['set-cookie']).split(';')[0];
      await logged.request.get('/api/auth/user').set('Cookie', cookie).expect(200);
      await logged.request.get('/api/auth/user').set('Authorization', 'Bearer sst_secret-token-value').expect(401);
      createLogger('info', sink).info({ body: { password: 'hunter2hunter2', newPassword: 'x2x2x2x2x2' } }, 'payload');
      const text = lines.join('');
      expect(text).toContain('/api/auth/user');
      expect(text).toContain('[redacted]');
      expect(text).not.toContain('sst_secret-token-value');
      expect(text).not.toContain(cookie.split('=')[1]);
      expect(text).not.toContain('hunter2hunter2');
      expect(text).not.toContain(TEST_PASSWORD);
    } finally {
      await logged.close();
    }
  });

  it('security headers are set (helmet)', async () => {
    const res = await t.request.get('/health').expect(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBeDefined();
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('HSTS and upgrade-insecure-requests only when PUBLIC_URL is https: over plain http they would lock browsers out', async () => {
    const plain = await t.request.get('/login').expect(200);
    expect(plain.headers['strict-transport-security']).toBeUndefined();
    expect(plain.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    // scripts from our origin only; WebAssembly may be compiled (the camera's barcode reader), nothing evaluated
    expect(plain.headers['content-security-policy']).toContain("script-src 'self' 'wasm-unsafe-eval';");
    expect(plain.headers['content-security-policy']).not.toMatch(/'unsafe-eval'|'unsafe-inline'[^;]*;\s*script/);

    const secure = await testApp({ PUBLIC_URL: 'https://stores.example.ac.uk' });
    try {
      const res = await secure.request.get('/login').set('X-Forwarded-Proto', 'https').expect(200);
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
      expect(res.headers['content-security-policy']).toContain('upgrade-insecure-requests');
    } finally {
      await secure.close();
    }
  });
});

describe('GET /api/docs', () => {
  it('200 OpenAPI 3 document with title, the package version and the auth, SSO, users and settings paths', async () => {
    const res = await t.request.get('/api/docs').expect(200);
    expect(res.body.openapi).toMatch(/^3\.0\./);
    expect(res.body.info).toMatchObject({ title: expect.any(String), version: APP_VERSION });
    for (const path of [
      '/health',
      '/api/health',
      '/api/auth/login',
      '/api/auth/user',
      '/api/auth/tokens/{id}',
      '/api/login',
      '/api/callback',
      '/api/users',
      '/api/users/{id}/role',
      '/api/users/{id}/preferences/picking-list',
      '/api/users/{id}/safe',
      '/api/settings/users/{userId}/permissions/{permission}',
    ]) {
      expect(res.body.paths, path).toHaveProperty([path]);
    }
    expect(Object.keys(res.body.paths['/api/users/{id}/role'])).toEqual(expect.arrayContaining(['put', 'patch']));
  });

  it('401 for every non-public documented /api route without a session or token', async () => {
    const { body } = await t.request.get('/api/docs').expect(200);
    const failures: string[] = [];
    for (const [path, methods] of Object.entries(
      body.paths as Record<string, Record<string, { security?: unknown[] }>>,
    )) {
      for (const [method, op] of Object.entries(methods)) {
        if (!op.security || op.security.length === 0 || !path.startsWith('/api/')) continue;
        const url = path.replace(/\{(\w+)\}/g, (_m, name: string) =>
          /user|^id$/i.test(name) && path.includes('/users') ? '00000000-0000-4000-8000-000000000000' : '1',
        );
        const res = await (t.request as unknown as Record<string, (u: string) => supertest.Test>)[method](url);
        if (res.status !== 401) failures.push(`${method.toUpperCase()} ${path} -> ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('NUL characters', () => {
  // PostgreSQL stores no NUL in text or jsonb: left to the database, each of these was a 500.
  it('400 naming the field for a NUL in a JSON body, nested or not; nothing is written', async () => {
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    const category = await buildCategory(t.db);
    const res = await manager
      .post('/api/items')
      .send({
        name: 'Bolt\u0000',
        sku: 'NUL-1',
        categoryId: category.id,
        price: '1.00',
        currentStock: 1,
        minimumStock: 0,
      })
      .expect(400);
    expect(res.body).toEqual({
      message: 'Validation failed',
      errors: [{ field: 'name', message: 'must not contain a NUL character' }],
    });
    const nested = await manager
      .post('/api/items/bulk-import')
      .send({ items: [{ name: 'ok', sku: 'NUL-2', categoryName: 'x\u0000' }] })
      .expect(400);
    expect(nested.body.errors).toEqual([
      { field: 'items.0.categoryName', message: 'must not contain a NUL character' },
    ]);
    expect(await t.db('items').whereIn('sku', ['NUL-1', 'NUL-2']).count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('400 for a NUL in a query parameter or in the path', async () => {
    const agent = await t.loginAs(await buildUser(t.db));
    const query = await agent.get('/api/items').query({ search: 'bolt\u0000' }).expect(400);
    expect(query.body.errors).toEqual([{ field: 'search', message: 'must not contain a NUL character' }]);
    const path = await agent.get('/api/chargecodes/AB%00CD').expect(400);
    expect(path.body.errors).toEqual([{ field: '(path)', message: 'must not contain a NUL character' }]);
  });

  it('400 with a message for a NUL in a multipart text field, which no JSON check sees', async () => {
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    const csv = 'name,sku,quantity,unitCost\nWidget,,2,1.50\n';
    const res = await manager
      .post('/api/orders/import-from-invoice')
      .field('supplier', 'Acme\u0000 Ltd')
      .attach('csv', Buffer.from(csv), { filename: 'order.csv', contentType: 'text/csv' })
      .expect(400);
    expect(res.body.message).toMatch(/NUL character/);
    expect(await t.db('orders').count({ n: '*' }).first()).toEqual({ n: 0 });
  });
});
