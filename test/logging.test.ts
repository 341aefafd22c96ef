import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser, TEST_PASSWORD } from './helpers/factories';
import { buildMcpKey, withKey } from './helpers/mcp-factories';

type LogLine = {
  msg: string;
  requestId?: string;
  req?: { url: string; headers: Record<string, string> };
  res?: { statusCode: number; headers?: Record<string, string> };
};

let t: TestApp;
const lines: string[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  t = await testApp({ LOG_LEVEL: 'info' }, { logDestination: sink });
});
afterAll(() => t.close());

const logged = (): LogLine[] =>
  lines
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogLine);
const requestLogOf = (id: string) => logged().find((l) => l.requestId === id && l.req);

describe('request ids', () => {
  it("keeps the caller's X-Request-Id, answers it, and logs the request under it", async () => {
    const res = await t.request.get('/api/health').set('X-Request-Id', 'lb-7f3a.42').expect(200);
    expect(res.headers['x-request-id']).toBe('lb-7f3a.42');
    await expect
      .poll(() => requestLogOf('lb-7f3a.42'))
      .toMatchObject({ msg: 'request completed', req: { url: '/api/health' }, res: { statusCode: 200 } });
  });

  it('generates an id when none (or an unusable one) is given, and each request gets its own', async () => {
    const first = await t.request.get('/api/items').expect(401);
    const second = await t.request.get('/api/items').set('X-Request-Id', 'two words\tand a tab').expect(401);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(first.headers['x-request-id']).toMatch(uuid);
    expect(second.headers['x-request-id']).toMatch(uuid);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    await expect.poll(() => requestLogOf(second.headers['x-request-id'])).toMatchObject({ res: { statusCode: 401 } });
  });
});

describe('secrets in the logs', () => {
  it('no cookie, password, API token, MCP key or SSO code reaches the log, while the requests carrying them are logged', async () => {
    const user = await buildUser(t.db, { role: 'admin' });
    const login = await t.request
      .post('/api/auth/login')
      .send({ email: user.email, password: TEST_PASSWORD })
      .expect(200);
    const sessionCookie = String(login.headers['set-cookie']).split(';')[0];
    const created = await t.request
      .post('/api/auth/tokens')
      .set('Cookie', sessionCookie)
      .send({ name: 'script' })
      .expect(201);
    const token: string = created.body.token;
    await t.request.get('/api/items').set('Authorization', `Bearer ${token}`).expect(200);
    const { key } = await buildMcpKey(t.db);
    await t.request.get('/api/mcp/status').set(withKey(key)).expect(200);
    await t.request.get('/api/callback?code=sso-authorization-code-1234&state=sso-state-5678');
    await t.request.post('/api/auth/login').send({ email: user.email, password: 'a wrong password guess' }).expect(401);

    await expect.poll(() => logged().filter((l) => l.req).length).toBeGreaterThanOrEqual(7);
    const text = lines.join('');
    for (const secret of [
      sessionCookie.split('=')[1],
      TEST_PASSWORD,
      'a wrong password guess',
      token,
      key,
      'sso-authorization-code-1234',
      'sso-state-5678',
    ]) {
      expect(text, `logged: ${secret}`).not.toContain(secret);
    }
    expect(logged().find((l) => l.req?.url.startsWith('/api/callback'))?.req?.url).toBe(
      '/api/callback?code=%5Bredacted%5D&state=%5Bredacted%5D',
    );
    expect(logged().find((l) => l.req?.url === '/api/mcp/status')?.req?.headers.authorization).toBe('[redacted]');
  });
});
