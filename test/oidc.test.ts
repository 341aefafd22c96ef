import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';

/**
 * Single sign-on end to end: a real OpenID provider (oidc-provider) on a loopback port,
 * the app listening on the port its PUBLIC_URL names, and a tiny "browser" that follows
 * redirects with a cookie jar. The provider's login/consent interaction is completed by
 * a small interaction handler standing in for the provider's login page.
 */

type Account = { sub: string; email: string; given_name: string; family_name: string; email_verified?: boolean };
const accounts = new Map<string, Account>();

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

let providerServer: http.Server;
let appServer: http.Server;
let issuer: string;
let appUrl: string;
let t: TestApp;

beforeAll(async () => {
  providerServer = http.createServer();
  issuer = `http://127.0.0.1:${await listen(providerServer)}`;
  appServer = http.createServer();
  appUrl = `http://127.0.0.1:${await listen(appServer)}`;

  const provider = new Provider(issuer, {
    clients: [
      { client_id: 'stores', client_secret: 'stores-client-secret', redirect_uris: [`${appUrl}/api/callback`] },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name', 'name'] },
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      // verified unless the account says otherwise; an own `email_verified: undefined` leaves the claim out
      return account ? { accountId: id, claims: () => ({ email_verified: true, ...account }) } : undefined;
    },
    // Identity claims in the ID token itself, as most university providers do.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    // Every authorization request must carry a PKCE challenge, and every code exchange its verifier.
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['test-cookie-key'] },
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
  });
  const providerHandler = provider.callback();
  providerServer.on('request', async (req, res) => {
    const match = /^\/interaction\/[^/?]+\?login=([^&]+)$/.exec(req.url ?? '');
    if (!match) return providerHandler(req, res);
    // The "login page": the test names the account in the query; sign in and consent.
    const details = await provider.interactionDetails(req, res);
    const accountId = decodeURIComponent(match[1]);
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  });

  t = await testApp({
    PUBLIC_URL: appUrl,
    OIDC_ISSUER_URL: issuer,
    OIDC_CLIENT_ID: 'stores',
    OIDC_CLIENT_SECRET: 'stores-client-secret',
    OIDC_PROVIDER_NAME: 'Test IdP',
  });
  appServer.on('request', t.app);
});

afterAll(async () => {
  await new Promise((resolve) => appServer.close(resolve));
  await new Promise((resolve) => providerServer.close(resolve));
  await t.close();
});

/** A minimal browser: manual redirects and one cookie jar (cookies ignore ports, as in browsers). */
function browser() {
  const jar = new Map<string, string>();
  const request = async (url: string) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') jar.delete(pair.slice(0, eq));
      else jar.set(pair.slice(0, eq), value);
    }
    return res;
  };
  return {
    jar,
    request,
    /** Follows redirects from url; at the provider's login page, signs in as accountId. Returns the final response and the hops. */
    async signIn(accountId: string) {
      const hops: string[] = [];
      let url = `${appUrl}/api/login`;
      for (let i = 0; i < 15; i++) {
        hops.push(url);
        const res = await request(url);
        const location = res.headers.get('location');
        if (res.status < 300 || res.status >= 400 || !location) return { res, hops };
        url = new URL(location, url).toString();
        if (url.startsWith(`${issuer}/interaction/`)) url += `?login=${encodeURIComponent(accountId)}`;
        if (url === `${appUrl}/` || url.startsWith(`${appUrl}/?`)) {
          hops.push(url);
          return { res, hops };
        }
      }
      throw new Error(`too many redirects: ${hops.join(' -> ')}`);
    },
  };
}

const connectSid = (jar: Map<string, string>) => `connect.sid=${jar.get('connect.sid')}`;

describe('GET /api/auth/sso-status', () => {
  it('200 reports SSO enabled with the provider name', async () => {
    const res = await t.request.get('/api/auth/sso-status').expect(200);
    expect(res.body).toEqual({ ssoEnabled: true, ssoProvider: 'Test IdP', localAuthEnabled: true });
  });
});

describe('GET /api/login -> provider -> GET /api/callback', () => {
  it('302 to the provider; first sign-in creates a user (role user) and a session for /api/auth/user', async () => {
    accounts.set('alice-sub', {
      sub: 'alice-sub',
      email: 'Alice@Example.ac.uk',
      given_name: 'Alice',
      family_name: 'Liddell',
    });
    const b = browser();
    const start = await b.request(`${appUrl}/api/login`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(issuer);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${appUrl}/api/callback`);
    expect(authorize.searchParams.get('scope')).toBe('openid profile email');

    const { hops } = await b.signIn('alice-sub');
    expect(hops.some((h) => h.startsWith(`${appUrl}/api/callback?code=`))).toBe(true);
    expect(hops.at(-1)).toBe(`${appUrl}/`);

    const me = await t.request.get('/api/auth/user').set('Cookie', connectSid(b.jar)).expect(200);
    expect(me.body).toMatchObject({
      email: 'alice@example.ac.uk',
      firstName: 'Alice',
      lastName: 'Liddell',
      role: 'user',
      isActive: true,
    });
    const row = await t.db('users').where({ id: me.body.id }).first();
    expect(row).toMatchObject({ oidc_subject: 'alice-sub', password_hash: null });
  });

  it('a later sign-in updates the names and regenerates the session id; no duplicate user', async () => {
    accounts.set('bob-sub', { sub: 'bob-sub', email: 'bob@example.ac.uk', given_name: 'Bob', family_name: 'Old' });
    await browser().signIn('bob-sub');
    accounts.set('bob-sub', { sub: 'bob-sub', email: 'bob@example.ac.uk', given_name: 'Robert', family_name: 'New' });
    const b = browser();
    await b.request(`${appUrl}/api/login`);
    const before = b.jar.get('connect.sid');
    await b.signIn('bob-sub');
    expect(b.jar.get('connect.sid')).not.toBe(before);
    const me = await t.request.get('/api/auth/user').set('Cookie', connectSid(b.jar)).expect(200);
    expect(me.body).toMatchObject({ firstName: 'Robert', lastName: 'New' });
    expect(await t.db('users').where({ email: 'bob@example.ac.uk' })).toHaveLength(1);
  });

  it('links an existing local account by email and keeps its role', async () => {
    const existing = await buildUser(t.db, { email: 'carol@example.ac.uk', role: 'manager' });
    accounts.set('carol-sub', {
      sub: 'carol-sub',
      email: 'carol@example.ac.uk',
      given_name: 'Carol',
      family_name: 'Local',
    });
    const b = browser();
    await b.signIn('carol-sub');
    const me = await t.request.get('/api/auth/user').set('Cookie', connectSid(b.jar)).expect(200);
    expect(me.body).toMatchObject({ id: existing.id, role: 'manager', firstName: 'Carol' });
    expect((await t.db('users').where({ id: existing.id }).first()).oidc_subject).toBe('carol-sub');
  });

  it('refuses a deactivated user: redirect with ssoError and no session', async () => {
    await buildUser(t.db, { email: 'dave@example.ac.uk', isActive: false });
    accounts.set('dave-sub', { sub: 'dave-sub', email: 'dave@example.ac.uk', given_name: 'Dave', family_name: 'Gone' });
    const b = browser();
    const { hops } = await b.signIn('dave-sub');
    expect(hops.at(-1)).toMatch(/\/\?ssoError=/);
    await t.request.get('/api/auth/user').set('Cookie', connectSid(b.jar)).expect(401);
  });

  it('links an existing account by email only when the provider says email_verified: true (absent or false refuses, creates no one)', async () => {
    for (const [name, emailVerified] of [
      ['frank', false],
      ['grace', undefined],
    ] as const) {
      const existing = await buildUser(t.db, { email: `${name}@example.ac.uk`, role: 'manager' });
      accounts.set(`${name}-sub`, {
        sub: `${name}-sub`,
        email: `${name}@example.ac.uk`,
        given_name: name,
        family_name: 'Claimed',
        email_verified: emailVerified,
      });
      const b = browser();
      const { hops } = await b.signIn(`${name}-sub`);
      expect(decodeURIComponent(hops.at(-1)!)).toMatch(
        /\/\?ssoError=.*not confirmed that this email address is verified/,
      );
      await t.request.get('/api/auth/user').set('Cookie', connectSid(b.jar)).expect(401);
      expect(await t.db('users').whereRaw('lower(email) = ?', [`${name}@example.ac.uk`])).toEqual([
        expect.objectContaining({ id: existing.id, oidc_subject: null }),
      ]);
    }
  });

  it('creates no new user whose email the provider has not verified', async () => {
    accounts.set('heidi-sub', {
      sub: 'heidi-sub',
      email: 'heidi@example.ac.uk',
      given_name: 'Heidi',
      family_name: 'New',
      email_verified: false,
    });
    const b = browser();
    const { hops } = await b.signIn('heidi-sub');
    expect(hops.at(-1)).toMatch(/\/\?ssoError=/);
    expect(await t.db('users').where({ email: 'heidi@example.ac.uk' })).toHaveLength(0);
  });

  it('uses PKCE (S256) on the authorization-code flow; the provider, requiring it, signs the user in', async () => {
    accounts.set('ivan-sub', { sub: 'ivan-sub', email: 'ivan@example.ac.uk', given_name: 'Ivan', family_name: 'Pkce' });
    const b = browser();
    const authorize = new URL((await b.request(`${appUrl}/api/login`)).headers.get('location')!);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const { hops } = await b.signIn('ivan-sub');
    expect(hops.at(-1)).toBe(`${appUrl}/`);
    await t.request.get('/api/auth/user').set('Cookie', connectSid(b.jar)).expect(200);
  });

  it('a callback with a forged state or a provider error never signs in and never 500s', async () => {
    const b = browser();
    await b.request(`${appUrl}/api/login`);
    const forged = await b.request(`${appUrl}/api/callback?code=abc&state=forged`);
    expect(forged.status).toBe(302);
    expect(forged.headers.get('location')).toMatch(/^\/\?ssoError=/);
    const denied = await b.request(`${appUrl}/api/callback?error=server_error&error_description=boom`);
    expect(denied.status).toBe(302);
    await t.request.get('/api/auth/user').set('Cookie', connectSid(b.jar)).expect(401);
  });
});

describe('SSO sign-ins in the audit trail', () => {
  const auditOf = (userId: string) => t.db('audit_log').where({ entity_type: 'user', entity_id: userId }).orderBy('id');

  it('a provisioning sign-in records create and sign_in, a later one sign_in, each acted by the user with the method sso', async () => {
    accounts.set('judy-sub', {
      sub: 'judy-sub',
      email: 'judy@example.ac.uk',
      given_name: 'Judy',
      family_name: 'Audit',
    });
    await browser().signIn('judy-sub');
    await browser().signIn('judy-sub');
    const judy = await t.db('users').where({ email: 'judy@example.ac.uk' }).first();
    const rows = await auditOf(judy.id);
    expect(rows.map((r) => r.action)).toEqual(['create', 'sign_in', 'sign_in']);
    for (const row of rows)
      expect(row).toMatchObject({
        actor_kind: 'session',
        actor_user_id: judy.id,
        actor_email: 'judy@example.ac.uk',
        actor_mcp_key_id: null,
        actor_ip: '127.0.0.1',
      });
    expect(rows[0].after).toMatchObject({ email: 'judy@example.ac.uk', role: 'user', oidc_subject: 'judy-sub' });
    expect(rows[1].after).toEqual({ method: 'sso' });
  });

  it('a refused sign-in records sign_in_failed by an anonymous actor, with the email and the reason', async () => {
    const kim = await buildUser(t.db, { email: 'kim@example.ac.uk', isActive: false });
    accounts.set('kim-sub', { sub: 'kim-sub', email: 'kim@example.ac.uk', given_name: 'Kim', family_name: 'Gone' });
    await browser().signIn('kim-sub');
    const leo = await buildUser(t.db, { email: 'leo@example.ac.uk' });
    accounts.set('leo-sub', {
      sub: 'leo-sub',
      email: 'leo@example.ac.uk',
      given_name: 'Leo',
      family_name: 'Unverified',
      email_verified: false,
    });
    await browser().signIn('leo-sub');

    const refusal = {
      action: 'sign_in_failed',
      actor_kind: 'anonymous',
      actor_user_id: null,
      actor_email: null,
      actor_ip: '127.0.0.1',
    };
    expect(await auditOf(kim.id)).toEqual([
      expect.objectContaining({ ...refusal, after: { email: 'kim@example.ac.uk', method: 'sso', reason: 'inactive' } }),
    ]);
    expect(await auditOf(leo.id)).toEqual([
      expect.objectContaining({
        ...refusal,
        after: { email: 'leo@example.ac.uk', method: 'sso', reason: 'email_unverified' },
      }),
    ]);
  });
});

describe('SSO configuration', () => {
  it('404 for /api/login when SSO is not configured; 403 for local login when LOCAL_AUTH=false', async () => {
    const plain = await testApp({ LOCAL_AUTH: 'false' });
    try {
      await plain.request.get('/api/login').expect(404);
      const status = await plain.request.get('/api/auth/sso-status').expect(200);
      expect(status.body).toEqual({ ssoEnabled: false, ssoProvider: null, localAuthEnabled: false });
      const user = await buildUser(plain.db);
      await plain.request.post('/api/auth/login').send({ email: user.email, password: 'whatever' }).expect(403);
    } finally {
      await plain.close();
    }
  });

  it('503 while the provider cannot be discovered, and retries on the next attempt', async () => {
    const down = http.createServer((_req, res) => res.writeHead(500).end());
    const port = await listen(down);
    const app = await testApp({ OIDC_ISSUER_URL: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: 'x' });
    try {
      const res = await app.request.get('/api/login').expect(503);
      expect(res.body).toEqual({ message: expect.stringMatching(/unavailable/) });
      let calls = 0;
      down.removeAllListeners('request');
      down.on('request', (_req, r) => {
        calls++;
        r.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            issuer: `http://127.0.0.1:${port}`,
            authorization_endpoint: `http://127.0.0.1:${port}/auth`,
            token_endpoint: `http://127.0.0.1:${port}/token`,
          }),
        );
      });
      const ok = await app.request.get('/api/login').expect(302);
      expect(ok.headers.location).toMatch(new RegExp(`^http://127.0.0.1:${port}/auth\\?`));
      await app.request.get('/api/login').expect(302);
      expect(calls).toBe(1);
    } finally {
      await app.close();
      await new Promise((resolve) => down.close(resolve));
    }
  });
});
