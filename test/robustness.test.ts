import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildMcpKey } from './helpers/mcp-factories';
import { refusedForOldClient } from './backup-helpers';

// Every documented route, called by an admin with ids that are malformed, out of range or
// unknown, and with bodies that are empty or of the wrong shape: the answer is a 4xx with a
// message, never a 500 and never a stack trace.
let t: TestApp;
let token: string;
let mcpKey: string;
beforeAll(async () => {
  t = await testApp({ WEBHOOK_SECRET: 'robustness-webhook-secret' });
  const admin = await buildUser(t.db, { role: 'admin' });
  const agent = await t.loginAs(admin);
  // A bearer token, so that routes ending the session (logout) do not end the sweep.
  token = (await agent.post('/api/auth/tokens').send({ name: 'sweep' }).expect(201)).body.token;
  mcpKey = (await buildMcpKey(t.db, { scopes: ['read', 'write'], createdBy: admin.id })).key;
});
afterAll(() => t.close());

const PARAM_VALUES = [
  'abc',
  '-1',
  '1.5',
  '99999999999',
  '999999',
  '00000000-0000-4000-8000-000000000000',
  "x'; DROP TABLE items;--",
  'nul\u0000char',
];
const BODIES: unknown[] = [
  {},
  { items: 'nope', itemIds: [0], quantity: -1, chargeCode: 7, id: null },
  [],
  {
    name: 'nul\u0000',
    text: 'nul\u0000',
    code: 'nul\u0000',
    email: 'a\u0000@example.ac.uk',
    items: [{ name: '\u0000' }],
  },
];

type Operation = { security?: Record<string, unknown>[] };

/** The MCP client routes open to an MCP key only; every other route is swept with the admin's bearer token. */
const credentialFor = (op: Operation) =>
  op.security?.some((scheme) => 'mcpKey' in scheme) && !op.security.some((scheme) => 'bearer' in scheme)
    ? mcpKey
    : token;

/** The API's {message} or the MCP surface's {error: {message}}. */
const messageOf = (body: { message?: unknown; error?: { message?: unknown } }) => body.message ?? body.error?.message;

describe('every documented route', () => {
  it('answers bad ids and bad bodies with a 4xx message, never a 500', async () => {
    const { body: docs } = await t.request.get('/api/docs').expect(200);
    const failures: string[] = [];
    let calls = 0;
    const paths = Object.entries(docs.paths as Record<string, Record<string, Operation>>).filter(([path]) =>
      path.startsWith('/api/'),
    );
    for (const [path, methods] of paths) {
      for (const [method, op] of Object.entries(methods)) {
        const values = path.includes('{') ? PARAM_VALUES : [''];
        for (const value of values) {
          const url = path.replace(/\{\w+\}/g, encodeURIComponent(value));
          for (const body of method === 'get' || method === 'delete' ? [undefined] : BODIES) {
            let request = (t.request as unknown as Record<string, (u: string) => supertest.Test>)
              [method](url)
              .set('Authorization', `Bearer ${credentialFor(op)}`);
            if (body !== undefined) request = request.send(body as object);
            const res = await request;
            calls += 1;
            const text = res.text ?? '';
            // past the body's check, a backup on a server newer than pg_dump (.ci/pg17) is refused 503 by design
            if ((res.status >= 500 && !refusedForOldClient(res)) || /at .+\.(ts|js):\d+/.test(text)) {
              failures.push(
                `${method.toUpperCase()} ${url} ${JSON.stringify(body) ?? ''} -> ${res.status} ${text.slice(0, 160)}`,
              );
            } else if (
              res.status >= 400 &&
              res.type === 'application/json' &&
              typeof messageOf(res.body) !== 'string'
            ) {
              failures.push(`${method.toUpperCase()} ${url} -> ${res.status} without a message`);
            }
          }
        }
      }
    }
    expect(paths.length).toBeGreaterThanOrEqual(100);
    expect(calls).toBeGreaterThan(900);
    expect(failures).toEqual([]);
  }, 120_000);

  it('answers a NUL character in a query parameter of any GET route with a 400 naming the field', async () => {
    const { body: docs } = await t.request.get('/api/docs').expect(200);
    const failures: string[] = [];
    for (const [path, methods] of Object.entries(docs.paths as Record<string, Record<string, Operation>>)) {
      // /api/health reads nothing from the request
      if (!path.startsWith('/api/') || !methods.get || path === '/api/health') continue;
      const url = path.replace(/\{\w+\}/g, '1');
      const res = await t.request
        .get(url)
        .query({ search: 'nul\u0000' })
        .set('Authorization', `Bearer ${credentialFor(methods.get)}`);
      const namesSearch =
        res.body.errors?.[0]?.field === 'search' || /^Validation failed: search /.test(res.body.error?.message ?? '');
      if (res.status !== 400 || !namesSearch) failures.push(`GET ${url} -> ${res.status} ${res.text.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
  });
});
