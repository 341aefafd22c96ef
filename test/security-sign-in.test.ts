import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';
import { testApp, type TestApp } from './helpers/app';
import { buildUser, TEST_PASSWORD } from './helpers/factories';

let t: TestApp;
// loopback is not a trusted proxy here, so the test client (on 127.0.0.1) is an ordinary client
let untrusting: TestApp;
// the per-address limit (100 by default) brought down to the per-pair one keeps the bursts short
beforeAll(async () => {
  t = await testApp({ LOGIN_MAX_FAILURES_PER_ADDRESS: '10' });
  untrusting = await testApp({ TRUST_PROXY: '10.9.9.9', LOGIN_MAX_FAILURES_PER_ADDRESS: '10' });
});
afterAll(async () => {
  await t.close();
  await untrusting.close();
});
// every request of this file comes from 127.0.0.1: each test starts with fresh counters
beforeEach(async () => {
  await t.db('rate_limits').delete();
  await untrusting.db('rate_limits').delete();
});

const LIMIT = 10;

describe('TRUST_PROXY', () => {
  it('defaults to loopback; accepts a comma list of names, addresses and CIDR ranges, or a hop count; refuses anything else', () => {
    expect(loadConfig({}).trustProxy).toEqual(['loopback']);
    expect(
      loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.5, 192.168.0.0/16, 10.1.0.0/255.255.0.0, fd00::/8' }).trustProxy,
    ).toEqual(['loopback', '10.0.0.5', '192.168.0.0/16', '10.1.0.0/255.255.0.0', 'fd00::/8']);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    for (const bad of ['true', 'everyone', '10.0.0.0/33', '300.1.1.1', 'loopback,,*']) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(ConfigError);
    }
    expect(() => loadConfig({ TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY: must be a hop count or a comma list/);
  });

  it('by default only loopback is trusted: campus private and link-local addresses are not', () => {
    const trusts = t.app.get('trust proxy fn') as (address: string, hop: number) => boolean;
    expect(trusts('127.0.0.1', 0)).toBe(true);
    expect(trusts('::1', 0)).toBe(true);
    for (const address of ['10.20.30.40', '172.16.5.5', '192.168.1.1', '169.254.1.1', 'fd12::1'])
      expect(trusts(address, 0), address).toBe(false);
  });

  it('429 by the real address: a client that is not a trusted proxy cannot rotate X-Forwarded-For past the limiter', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) {
      const res = await untrusting.request
        .post('/api/auth/login')
        .set('X-Forwarded-For', `10.0.${i}.1`)
        .send({ email: `nobody-${i}@example.ac.uk`, password: 'wrong password' });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(401), 429]);
    const keys = await untrusting.db('rate_limits').where('key', 'like', 'login_ip:%').pluck('key');
    expect(keys).toEqual(['login_ip:127.0.0.1']);
  });

  it('a trusted proxy (loopback by default) passes the client address on', async () => {
    await t.request
      .post('/api/auth/login')
      .set('X-Forwarded-For', '203.0.113.7')
      .send({ email: 'nobody@example.ac.uk', password: 'wrong password' })
      .expect(401);
    expect(await t.db('rate_limits').where('key', 'like', 'login_ip:%').pluck('key')).toEqual(['login_ip:203.0.113.7']);
  });
});

describe('POST /api/auth/login under a parallel burst', () => {
  it(`50 parallel wrong passwords for one account: at most ${LIMIT} reach the password check (401), the rest 429`, async () => {
    const user = await buildUser(t.db);
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        t.request.post('/api/auth/login').send({ email: user.email, password: 'wrong password' }),
      ),
    );
    const count = (status: number) => results.filter((r) => r.status === status).length;
    expect(count(401) + count(429)).toBe(50);
    expect(count(401)).toBeLessThanOrEqual(LIMIT);
    expect(count(401)).toBeGreaterThan(0);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body).toEqual({ message: 'Too many failed sign-in attempts, try again later' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // the right password is refused too from that address, until the window is over
    await t.request.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(429);
  });

  it('50 parallel wrong passwords for 50 accounts from one address: at most the limit reach the check', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.request.post('/api/auth/login').send({ email: `burst-${i}@example.ac.uk`, password: 'wrong password' }),
      ),
    );
    const count = (status: number) => results.filter((r) => r.status === status).length;
    expect(count(401) + count(429)).toBe(50);
    expect(count(401)).toBeLessThanOrEqual(LIMIT);
  });

  it('a success gives the points back: the account and address pair starts afresh and the address keeps its allowance', async () => {
    const user = await buildUser(t.db);
    for (let i = 0; i < LIMIT - 1; i++)
      await t.request.post('/api/auth/login').send({ email: user.email, password: 'wrong password' }).expect(401);
    await t.request.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(200);
    expect(await t.db('rate_limits').where('key', 'like', `login_pair:${user.email} %`).first()).toBeUndefined();
    const address = await t
      .db('rate_limits')
      .where({ key: 'login_ip:::ffff:127.0.0.1' })
      .orWhere({ key: 'login_ip:127.0.0.1' })
      .first();
    expect(address.points).toBe(LIMIT - 1);
    // many successful sign-ins from one address never lock it
    for (let i = 0; i < LIMIT + 2; i++)
      await t.request.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(200);
  });
});
