import { randomUUID } from 'node:crypto';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredRoutesOf } from '../src/app';
import type { Access, DeclaredRoute } from '../src/http/api-router';
import { PERMISSIONS } from '../src/auth/permissions';
import { isProfileAccess } from '../src/auth/access-profile';
import type { AccessProfile } from '../src/modules/settings/settings.schemas';
import type { Role } from '../src/auth/roles';
import { refusedForOldClient } from './backup-helpers';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildMcpKey } from './helpers/mcp-factories';
import { pageRoutesOf, type PageRoute } from './helpers/page-routes';

/**
 * Every route of the route table (what the ApiRouters declared, so a new route is in the matrix
 * without a new test) and every page route, called by every kind of caller:
 *   anonymous, a session and a bearer token of each role, a user holding each permission, an MCP key.
 * A caller the route does not admit is refused (401 without a principal it accepts, 403 below its
 * role or without its permission) before its input is read and before anything is written: the
 * refused requests carry a body no route accepts, and no table's rows change while they run.
 * A caller it admits is not refused: its answer may be a 400 or a 404 (the ids are made up), never a 401 or 403.
 */

const RANK: Record<Role, number> = { requester: 0, user: 1, manager: 2, admin: 3 };

type Caller =
  | { name: 'anonymous'; kind: 'anonymous' }
  | { name: string; kind: 'session' | 'bearer'; role: Role; permissions: string[]; header: Record<string, string> }
  | {
      name: string;
      kind: 'mcp-key';
      /** the creator's state now: an admin, an admin since demoted to requester (issue 40), or deactivated */
      creator: 'admin' | 'demoted' | 'deactivated';
      header: Record<string, string>;
    };

type Verdict = 'allowed' | 401 | 403;

/** Documented departures from the rule the route's access gives, each with its reason. */
const EXCEPTIONS: {
  route: string;
  caller: (c: Caller) => boolean;
  verdict: Verdict;
  reason: string;
  inHandler?: true;
}[] = [
  {
    route: 'POST /api/auth/tokens',
    caller: (c) => c.kind === 'bearer',
    verdict: 403,
    reason: 'a token is made from a session, never from another token, so a leaked token cannot mint its successors',
    inHandler: true,
  },
  {
    route: 'PATCH /api/users/:id/preferences/picking-list',
    caller: (c) => (c.kind === 'session' || c.kind === 'bearer') && c.role !== 'admin',
    verdict: 403,
    reason: "a user changes only their own preference; the matrix's made-up id is someone else's",
    inHandler: true,
  },
  {
    route: 'GET /health',
    caller: (c) => c.kind === 'mcp-key',
    verdict: 'allowed',
    reason: 'liveness answers before any authentication is read: a key there is not looked at',
  },
  {
    route: 'GET /api/health',
    caller: (c) => c.kind === 'mcp-key',
    verdict: 'allowed',
    reason: 'readiness answers before any authentication is read: a key there is not looked at',
  },
];

/** Webhooks authenticate the sender by their own shared secret, which none of these callers has (test/webhooks.test.ts covers it). */
const OWN_SECRET = /^\/api\/webhook\//;

/** Routes that end the caller's session: each session caller calls them with a session of its own, made for the call. */
const ENDS_SESSION = new Set(['POST /api/auth/logout', 'GET /api/logout']);

/** Tables whose rows a refused request may change: session rows, limiter counters, the last-use time of a token or key. */
const BOOKKEEPING = new Set([
  'sessions',
  'rate_limits',
  'api_tokens',
  'mcp_api_keys',
  'knex_migrations',
  'knex_migrations_lock',
]);

/** A body no route accepts: a refused request answers 403 with it, not 400. */
const INVALID_BODY = [{ matrix: '\u0001not a valid body' }];

let t: TestApp;
let callers: Caller[];
const sessionOf = new Map<string, { email: string }>();
let tables: string[];

beforeAll(async () => {
  t = await testApp({ WEBHOOK_SECRET: 'matrix-webhook-secret' });
  const holders: { name: string; role: Role; permissions: string[] }[] = [
    { name: 'requester', role: 'requester', permissions: [] },
    { name: 'user', role: 'user', permissions: [] },
    { name: 'manager', role: 'manager', permissions: [] },
    { name: 'admin', role: 'admin', permissions: [] },
    // each grantable permission, held by a plain user (admins hold them all)
    ...PERMISSIONS.map((p) => ({ name: `user with ${p.key}`, role: 'user' as Role, permissions: [p.key as string] })),
    // a permission granted before the person became a requester opens nothing
    { name: 'requester with sales.refund', role: 'requester', permissions: ['sales.refund'] },
  ];
  callers = [{ name: 'anonymous', kind: 'anonymous' }];
  const mcpCreator = await buildUser(t.db, { role: 'admin' });
  for (const holder of holders) {
    const user = await buildUser(t.db, { role: holder.role });
    for (const permission of holder.permissions)
      await t.db('user_permissions').insert({ user_id: user.id, permission, granted_by: mcpCreator.id });
    const cookie = await signIn(user.email);
    sessionOf.set(`session ${holder.name}`, { email: user.email });
    const token = (await t.request.post('/api/auth/tokens').set('Cookie', cookie).send({ name: 'matrix' }).expect(201))
      .body.token as string;
    callers.push({
      name: `session ${holder.name}`,
      kind: 'session',
      role: holder.role,
      permissions: holder.permissions,
      header: { Cookie: cookie },
    });
    callers.push({
      name: `bearer ${holder.name}`,
      kind: 'bearer',
      role: holder.role,
      permissions: holder.permissions,
      header: { Authorization: `Bearer ${token}` },
    });
  }
  const { key } = await buildMcpKey(t.db, { scopes: ['read', 'write'], createdBy: mcpCreator.id });
  callers.push({ name: 'mcp key', kind: 'mcp-key', creator: 'admin', header: { Authorization: `Bearer ${key}` } });
  // keys whose creator has since been demoted to requester, or deactivated (issue 40)
  for (const creator of ['demoted', 'deactivated'] as const) {
    const former = await buildUser(t.db, { role: 'admin' });
    const { key: formerKey } = await buildMcpKey(t.db, { scopes: ['read', 'write'], createdBy: former.id });
    await t
      .db('users')
      .where({ id: former.id })
      .update(creator === 'demoted' ? { role: 'requester' } : { is_active: false });
    callers.push({
      name: `mcp key of a ${creator} creator`,
      kind: 'mcp-key',
      creator,
      header: { Authorization: `Bearer ${formerKey}` },
    });
  }
  tables = (
    await t
      .db('information_schema.tables')
      .where({ table_schema: 'public', table_type: 'BASE TABLE' })
      .select<{ table_name: string }[]>('table_name')
  )
    .map((r) => r.table_name)
    .filter((name) => !BOOKKEEPING.has(name))
    .sort();
});
afterAll(() => t.close());

async function signIn(email: string): Promise<string> {
  const res = await t.request
    .post('/api/auth/login')
    .send({ email, password: 'correct horse battery staple' })
    .expect(200);
  return String(res.headers['set-cookie']).split(';')[0];
}

/** Every row of every table but the bookkeeping ones, summed into one number per table: any insert, update or delete changes it. */
async function fingerprint(): Promise<Record<string, string>> {
  const rows = await Promise.all(
    tables.map(async (table) => {
      const { rows } = await t.db.raw<{ rows: { n: string; h: string }[] }>(
        `SELECT count(*) AS n, coalesce(sum(hashtext(x::text)::numeric), 0) AS h FROM ?? x`,
        [table],
      );
      return [table, `${rows[0].n}/${rows[0].h}`] as const;
    }),
  );
  return Object.fromEntries(rows);
}

const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/**
 * 'any-signed-in' admits every signed-in caller; 'auth' (and 'auth-or-mcp-key') the staff, `user` and up: a requester is 403.
 * An MCP key opens the MCP routes while its creator is staff (403 once a requester), none once they are deactivated (401).
 * A route declared with a profile access ({role, profile: 'strict'}) admits any member of staff unless the access.profile
 * in force is that profile. A permission is a member of staff's: a requester holds none.
 */
function verdictFor(access: Access, caller: Caller, profile: AccessProfile): Verdict {
  if (caller.kind === 'anonymous') return access === 'public' ? 'allowed' : 401;
  if (caller.kind === 'mcp-key') {
    if (caller.creator === 'deactivated' || (access !== 'mcp-key' && access !== 'auth-or-mcp-key')) return 401;
    return caller.creator === 'demoted' ? 403 : 'allowed';
  }
  if (access === 'mcp-key') return 401;
  if (access === 'public' || access === 'any-signed-in') return 'allowed';
  const staff = RANK[caller.role] >= RANK.user;
  if (access === 'auth' || access === 'auth-or-mcp-key') return staff ? 'allowed' : 403;
  if (typeof access === 'string') return RANK[caller.role] >= RANK[access] ? 'allowed' : 403;
  if (isProfileAccess(access))
    return (staff && profile !== access.profile) || RANK[caller.role] >= RANK[access.role] ? 'allowed' : 403;
  return caller.role === 'admin' || (staff && caller.permissions.includes(access.permission)) ? 'allowed' : 403;
}

function expectedFor(
  route: DeclaredRoute,
  caller: Caller,
  profile: AccessProfile,
): { verdict: Verdict; reason?: string; inHandler?: true } {
  const exception = EXCEPTIONS.find((e) => e.route === key(route.method, route.path) && e.caller(caller));
  if (exception) return { verdict: exception.verdict, reason: exception.reason, inHandler: exception.inHandler };
  if (OWN_SECRET.test(route.path)) return { verdict: 401, reason: 'webhooks authenticate by their own secret' };
  return { verdict: verdictFor(route.access, caller, profile) };
}

const setProfile = (profile: AccessProfile) =>
  t
    .db('settings')
    .insert({ key: 'access.profile', value: JSON.stringify({ profile }) })
    .onConflict('key')
    .merge();

/** A made-up value for each path parameter that its schema accepts where one of these does: an id no row has. */
function urlOf(route: DeclaredRoute): string {
  return route.path.replace(/:(\w+)/g, (_m, name: string) => {
    const schema = route.doc.params?.shape[name] as { safeParse: (v: unknown) => { success: boolean } } | undefined;
    const candidates = [randomUUID(), '2147483000', 'MATRIX-NONE', 'backup-2000-01-01T00-00-00-000Z.dump'];
    return encodeURIComponent(candidates.find((c) => schema?.safeParse(c).success) ?? candidates[1]);
  });
}

/**
 * 'invalid': a JSON body no route accepts. 'malformed': JSON cut short, and a NUL character in the
 * query, which a route refuses with a 400 only once its guard has let the caller in.
 */
type Input = 'invalid' | 'malformed';

async function call(route: DeclaredRoute, caller: Caller, input: Input): Promise<supertest.Response> {
  let header = caller.kind === 'anonymous' ? {} : caller.header;
  if (caller.kind === 'session' && ENDS_SESSION.has(key(route.method, route.path)))
    header = { Cookie: await signIn(sessionOf.get(caller.name)!.email) };
  const url = input === 'malformed' ? `${urlOf(route)}?matrix=%00` : urlOf(route);
  const request = (t.request as unknown as Record<string, (url: string) => supertest.Test>)
    [route.method](url)
    .set(header);
  if (route.method === 'get') return request;
  return input === 'malformed'
    ? request.set('Content-Type', 'application/json').send('{"matrix": ')
    : request.send(INVALID_BODY);
}

const describeAnswer = (res: supertest.Response) => `${res.status} ${(res.text ?? '').slice(0, 120)}`;

/** Under strict, only the routes whose access names the profile answer differently: the rest are called under spec only. */
const routesUnder = (profile: AccessProfile) =>
  declaredRoutesOf(t.app).filter((route) => profile === 'spec' || isProfileAccess(route.access));

describe.each(['spec', 'strict'] as const)(
  'authorization matrix: every declared API route x every caller, under access.profile %s',
  (profile) => {
    beforeAll(() => setProfile(profile));

    it('refuses each caller the route does not admit, 401 or 403, before reading its input (malformed JSON, a NUL character) or writing anything', async () => {
      const routes = routesUnder(profile);
      expect(routes.length).toBeGreaterThanOrEqual(profile === 'spec' ? 150 : 7);
      const before = await fingerprint();
      const failures: string[] = [];
      let calls = 0;
      for (const route of routes) {
        const refused = callers
          .map((caller) => ({ caller, ...expectedFor(route, caller, profile) }))
          .filter((c) => c.verdict !== 'allowed');
        await Promise.all(
          // a refusal made in the handler (inHandler) comes after the body is read: malformed JSON is a 400 there first
          refused.flatMap(({ caller, verdict, reason, inHandler }) =>
            (inHandler ? (['invalid'] as const) : (['invalid', 'malformed'] as const)).map(async (input) => {
              const res = await call(route, caller, input);
              calls += 1;
              if (res.status !== verdict)
                failures.push(
                  `${key(route.method, route.path)} as ${caller.name} with ${input} input: expected ${verdict}${reason ? ` (${reason})` : ''}, got ${describeAnswer(res)}`,
                );
            }),
          ),
        );
      }
      expect(failures).toEqual([]);
      expect(calls).toBeGreaterThan(routes.length);
      expect(await fingerprint(), 'rows changed by refused requests').toEqual(before);
    }, 120_000);

    it('admits each caller the route admits: the answer is never 401 or 403 (a 400 or 404 for the made-up input is fine)', async () => {
      const routes = routesUnder(profile);
      const failures: string[] = [];
      for (const route of routes) {
        const admitted = callers
          .map((caller) => ({ caller, ...expectedFor(route, caller, profile) }))
          .filter((c) => c.verdict === 'allowed');
        await Promise.all(
          admitted.map(async ({ caller, reason }) => {
            const res = await call(route, caller, 'invalid');
            if (res.status === 401 || res.status === 403 || (res.status >= 500 && !refusedForOldClient(res))) {
              failures.push(
                `${key(route.method, route.path)} as ${caller.name}${reason ? ` (${reason})` : ''}: got ${describeAnswer(res)}`,
              );
            }
          }),
        );
      }
      expect(failures).toEqual([]);
      // every session is still signed in: no route outside ENDS_SESSION ended one
      for (const caller of callers) {
        if (caller.kind === 'anonymous' || (caller.kind === 'mcp-key' && caller.creator !== 'admin')) continue;
        const url = caller.kind === 'mcp-key' ? '/api/mcp/charge-code-analytics' : '/api/auth/user';
        const res = await t.request.get(url).set(caller.header);
        expect(res.status, `${caller.name} still signed in`).toBe(200);
      }
    }, 120_000);
  },
);

describe('authorization matrix: the route table', () => {
  it('covers every access kind the table declares, the permission routes with and without the permission', () => {
    const routes = declaredRoutesOf(t.app);
    const kinds = new Set(
      routes.map((r) =>
        typeof r.access === 'string' ? r.access : isProfileAccess(r.access) ? 'profile' : 'permission',
      ),
    );
    expect([...kinds].sort()).toEqual([
      'admin',
      'any-signed-in',
      'auth',
      'auth-or-mcp-key',
      'manager',
      'mcp-key',
      'permission',
      'profile',
      'public',
      'user',
    ]);
    const permissions = routes.flatMap((r) =>
      typeof r.access === 'object' && 'permission' in r.access ? [r.access.permission] : [],
    );
    for (const permission of permissions) {
      expect(
        callers.some((c) => c.kind === 'session' && c.permissions.includes(permission)),
        permission,
      ).toBe(true);
      expect(
        callers.some((c) => c.kind === 'session' && c.role !== 'admin' && !c.permissions.includes(permission)),
        permission,
      ).toBe(true);
    }
  });
});

/** Public pages: signing in and out, and the API reference (public like the document it shows, /api/docs). */
const PUBLIC_PAGES = new Set(['GET /login', 'POST /login', 'POST /logout', 'GET /docs']);

describe.each(['spec', 'strict'] as const)(
  'authorization matrix: every page route x every signed-in role and anonymous, under access.profile %s',
  (profile) => {
    beforeAll(() => setProfile(profile));

    it('sends anonymous visitors to sign in, answers a role too low with the 403 page, and lets the rest through', async () => {
      // under strict, only the pages whose guard names the profile answer differently
      const pages = pageRoutesOf(t.app).filter(
        (page) => profile === 'spec' || (page.access && isProfileAccess(page.access)),
      );
      expect(pages.length).toBeGreaterThanOrEqual(profile === 'spec' ? 30 : 8);
      const unguarded = pages
        .filter((p) => !p.access && !PUBLIC_PAGES.has(key(p.method, p.path)))
        .map((p) => key(p.method, p.path));
      expect(unguarded, 'page routes without a page guard').toEqual([]);

      // a page form needs its synchroniser token; anonymous visitors get one from the sign-in page
      const anonymous = await t.request.get('/login').expect(200);
      const anonymousCookie = String(anonymous.headers['set-cookie']).split(';')[0];
      const anonymousToken = /name="_csrf" value="([^"]+)"/.exec(anonymous.text)![1];
      const people = await Promise.all(
        callers
          .flatMap((c) => (c.kind === 'session' ? [c] : []))
          .map(async (c) => {
            // the account page is every signed-in person's (the home page is not a requester's)
            const home = await t.request.get('/account').set(c.header).expect(200);
            return { caller: c, token: /name="_csrf" value="([^"]+)"/.exec(home.text)![1] };
          }),
      );
      const guarded = pages.filter((p) => !PUBLIC_PAGES.has(key(p.method, p.path)));
      const send = (page: PageRoute, cookie: string, token: string) => {
        const url = page.path.replace(/:(\w+)/g, '2147483000');
        const request = (t.request as unknown as Record<string, (url: string) => supertest.Test>)
          [page.method.toLowerCase()](url)
          .set('Cookie', cookie)
          .redirects(0);
        return page.method === 'GET' ? request : request.type('form').send({ _csrf: token, matrix: '\u0001' });
      };
      const admits = (page: PageRoute, caller: Extract<Caller, { role: Role }>) => {
        const access = page.access!;
        if (isProfileAccess(access))
          return (
            (RANK[caller.role] >= RANK.user && profile !== access.profile) || RANK[caller.role] >= RANK[access.role]
          );
        return 'role' in access
          ? RANK[caller.role] >= RANK[access.role]
          : caller.role === 'admin' ||
              (RANK[caller.role] >= RANK.user && caller.permissions.includes(access.permission));
      };
      const failures: string[] = [];

      // refused first, and nothing may change while they run
      const before = await fingerprint();
      let refusedWrites = 0;
      for (const page of guarded) {
        const anon = await send(page, anonymousCookie, anonymousToken);
        if (anon.status !== 302 || !String(anon.headers.location).startsWith('/login?next=')) {
          failures.push(
            `${key(page.method, page.path)} anonymous: expected a redirect to /login, got ${anon.status} ${anon.headers.location ?? ''}`,
          );
        }
        await Promise.all(
          people
            .filter(({ caller }) => !admits(page, caller))
            .map(async ({ caller, token }) => {
              const res = await send(page, caller.header.Cookie, token);
              if (page.method !== 'GET') refusedWrites += 1;
              if (res.status !== 403 || !/html/.test(res.type) || !/<h1[^>]*>\s*Not allowed/.test(res.text)) {
                failures.push(
                  `${key(page.method, page.path)} as ${caller.name}: expected the 403 page, got ${describeAnswer(res)}`,
                );
              }
            }),
        );
      }
      expect(failures).toEqual([]);
      expect(refusedWrites).toBeGreaterThan(0);
      expect(await fingerprint(), 'rows changed by refused page requests').toEqual(before);

      for (const page of guarded) {
        await Promise.all(
          people
            .filter(({ caller }) => admits(page, caller))
            .map(async ({ caller, token }) => {
              const res = await send(page, caller.header.Cookie, token);
              if (
                res.status === 401 ||
                res.status === 403 ||
                (res.status >= 500 && !refusedForOldClient(res)) ||
                (res.status === 302 && String(res.headers.location).startsWith('/login'))
              ) {
                failures.push(
                  `${key(page.method, page.path)} as ${caller.name}: expected to be let through, got ${describeAnswer(res)} ${res.headers.location ?? ''}`,
                );
              }
            }),
        );
      }
      expect(failures).toEqual([]);
    }, 120_000);
  },
);

// Issue 43's hazard register is a manager's, as the API and its page declare: the matrix above calls
// both with every caller (a user is 403, anonymous 401 or sent to sign in).
describe('the hazard register in the matrix (issue 43)', () => {
  it('GET /api/reports/hazards and the page /reports/hazards are declared for managers', () => {
    const route = declaredRoutesOf(t.app).find((r) => r.method === 'get' && r.path === '/api/reports/hazards');
    expect(route?.access).toBe('manager');
    const page = pageRoutesOf(t.app).find((p) => p.method === 'GET' && p.path === '/reports/hazards');
    expect(page?.access).toEqual({ role: 'manager' });
  });
});
