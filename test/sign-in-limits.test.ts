import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signInDelayMs } from '../src/auth/login-limiter';
import { JOBS } from '../src/jobs/scheduler';
import { testApp, type TestApp } from './helpers/app';
import { buildUser, TEST_PASSWORD } from './helpers/factories';

// Sign-in limits of issue 29 (OWASP ASVS 2.2.1): failures are limited per account and address
// together, an account has a daily ceiling, and consecutive failures delay the next answer.
// The test client is on loopback, a trusted proxy by default, so X-Forwarded-For is the address.

const DAILY = 6;
/** the defaults (no delay under NODE_ENV=test) */
let d: TestApp;
/** a low daily ceiling keeps its test short; a base delay of 1 ms makes the delays visible without waiting */
let t: TestApp;
beforeAll(async () => {
  d = await testApp();
  t = await testApp({ LOGIN_MAX_FAILURES_PER_DAY: String(DAILY), LOGIN_DELAY_BASE_MS: '1' });
});
afterAll(async () => {
  await d.close();
  await t.close();
});
beforeEach(async () => {
  await d.db('rate_limits').delete();
  await t.db('rate_limits').delete();
});

const signInTo = (app: TestApp, address: string, email: string, password: string, userAgent = 'test-agent/1.0') =>
  app.request
    .post('/api/auth/login')
    .set('X-Forwarded-For', address)
    .set('User-Agent', userAgent)
    .send({ email, password });
const signIn = (address: string, email: string, password: string, userAgent?: string) =>
  signInTo(t, address, email, password, userAgent);
const attempt = (address: string, email: string, password: string) => signInTo(d, address, email, password);

describe('per account and address', () => {
  it("an attacker's 10 failures from one address do not stop the right password from another", async () => {
    const user = await buildUser(d.db);
    for (let i = 0; i < 10; i++) await attempt('198.51.100.1', user.email, `wrong ${i}`).expect(401);
    const res = await attempt('198.51.100.3', user.email, TEST_PASSWORD).expect(200);
    expect(res.body.email).toBe(user.email);
  });

  it('the pair is refused after 10 failures in 15 minutes (429, Retry-After), the right password included; other pairs are not', async () => {
    const user = await buildUser(d.db);
    const other = await buildUser(d.db);
    for (let i = 0; i < 10; i++) await attempt('198.51.100.7', user.email, `wrong ${i}`).expect(401);
    const refused = await attempt('198.51.100.7', user.email, TEST_PASSWORD).expect(429);
    expect(refused.body).toEqual({ message: 'Too many failed sign-in attempts, try again later' });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    // the same address may still sign in to another account, and the account from another address
    await attempt('198.51.100.7', other.email, TEST_PASSWORD).expect(200);
    await attempt('198.51.100.8', user.email, TEST_PASSWORD).expect(200);
  });

  it('an unknown email is answered as a wrong password, then limited alike', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await attempt('198.51.100.9', 'no.such.person@example.ac.uk', 'x').expect(401);
      expect(res.body).toEqual({ message: 'Invalid email or password' });
    }
    await attempt('198.51.100.9', 'no.such.person@example.ac.uk', 'x').expect(429);
  });
});

describe('per account, a day', () => {
  it('past the daily ceiling only an address that signed in to the account before may try; others get 429 even with the right password', async () => {
    const user = await buildUser(t.db);
    await signIn('192.0.2.50', user.email, TEST_PASSWORD).expect(200);
    // spread over many addresses, so no pair reaches its own limit
    for (let i = 0; i < DAILY; i++) await signIn(`203.0.113.${i + 1}`, user.email, 'wrong').expect(401);
    const refused = await signIn('203.0.113.200', user.email, TEST_PASSWORD).expect(429);
    expect(refused.body).toEqual({ message: 'Too many failed sign-in attempts, try again later' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60 * 60);
    await signIn('203.0.113.1', user.email, TEST_PASSWORD).expect(429);
    // the address the user signed in from before still works, and a success does not lift the ceiling for others
    await signIn('192.0.2.50', user.email, TEST_PASSWORD).expect(200);
    await signIn('203.0.113.201', user.email, TEST_PASSWORD).expect(429);
  });
});

describe('the growing delay', () => {
  it('min(2^(n-3) x base, 5 s) after n consecutive failures', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8, 30].map((n) => signInDelayMs(n, 250))).toEqual([
      0, 0, 0, 250, 500, 1000, 2000, 4000, 5000, 5000,
    ]);
    expect(signInDelayMs(10, 0)).toBe(0);
  });

  it('each failure records the delay its answer waited; a success starts the count afresh', async () => {
    const user = await buildUser(t.db);
    for (let i = 0; i < 5; i++) await signIn(`198.51.100.${20 + i}`, user.email, 'wrong').expect(401);
    await signIn('198.51.100.30', user.email, TEST_PASSWORD).expect(200);
    await signIn('198.51.100.31', user.email, 'wrong').expect(401);
    const delays = await t.db('failed_sign_ins').where({ user_id: user.id }).orderBy('id').pluck('delay_ms');
    expect(delays).toEqual([0, 0, 0, 1, 2, 0]);
  });
});

describe('recent failed sign-ins', () => {
  it('are recorded with time, address, user agent and reason; the user and an admin see them, another user gets 403', async () => {
    const user = await buildUser(t.db);
    const admin = await buildUser(t.db, { role: 'admin' });
    const before = Date.now();
    await signIn('198.51.100.40', user.email, 'wrong', 'Mallory/2.0').expect(401);
    const own = await t.loginAs(user);
    const mine = (await own.get('/api/auth/me/failed-sign-ins').expect(200)).body;
    expect(mine).toEqual({
      failedSignIns: [
        { at: expect.any(String), ipAddress: '198.51.100.40', userAgent: 'Mallory/2.0', reason: 'wrong_password' },
      ],
    });
    expect(Date.parse(mine.failedSignIns[0].at)).toBeGreaterThanOrEqual(before - 1000);

    const adminAgent = await t.loginAs(admin);
    expect((await adminAgent.get(`/api/users/${user.id}/failed-sign-ins`).expect(200)).body).toEqual(mine);
    // the admin's own list is their own
    expect((await adminAgent.get('/api/auth/me/failed-sign-ins').expect(200)).body).toEqual({ failedSignIns: [] });
    const stranger = await t.loginAs(await buildUser(t.db));
    await stranger.get(`/api/users/${user.id}/failed-sign-ins`).expect(403);
    await t.request.get('/api/auth/me/failed-sign-ins').expect(401);
  });

  it('a limited attempt is recorded once a window as rate_limited; rows older than 30 days are not shown', async () => {
    const user = await buildUser(d.db);
    for (let i = 0; i < 10; i++) await attempt('198.51.100.50', user.email, 'wrong').expect(401);
    for (let i = 0; i < 3; i++) await attempt('198.51.100.50', user.email, 'wrong').expect(429);
    await d.db('failed_sign_ins').insert({
      user_id: user.id,
      ip_address: '198.51.100.51',
      reason: 'wrong_password',
      delay_ms: 0,
      occurred_at: d.db.raw("now() - interval '31 days'"),
    });
    const listed = (await (await d.loginAs(user)).get('/api/auth/me/failed-sign-ins').expect(200)).body.failedSignIns;
    expect(listed.map((f: { reason: string }) => f.reason)).toEqual([
      'rate_limited',
      ...Array(10).fill('wrong_password'),
    ]);
  });

  it('the scheduled job drops rows older than 30 days and keeps the rest', async () => {
    const user = await buildUser(d.db);
    const row = { user_id: user.id, ip_address: '198.51.100.60', reason: 'wrong_password', delay_ms: 0 };
    await d.db('failed_sign_ins').insert([
      { ...row, user_agent: 'old', occurred_at: d.db.raw("now() - interval '31 days'") },
      { ...row, user_agent: 'recent', occurred_at: d.db.raw("now() - interval '29 days'") },
    ]);
    await JOBS.find((j) => j.name === 'prune-old-failed-sign-ins')!.run(d.db);
    expect(await d.db('failed_sign_ins').where({ user_id: user.id }).pluck('user_agent')).toEqual(['recent']);
  });
});
