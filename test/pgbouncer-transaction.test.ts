import express from 'express';
import type { Knex } from 'knex';
import { createHmac } from 'node:crypto';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';
import { createDb } from '../src/db/knex';
import { preparedRaw } from '../src/db/prepared';
import { sql } from '../src/db/sql';
import { transaction } from '../src/db/transaction';
import { errorMiddleware } from '../src/http/error-middleware';
import { createLogger } from '../src/logger';
import { SESSION_COOKIE } from '../src/auth/session';
import { appOnUnusableDatabase, testDatabase } from './helpers/app';
import { buildUser } from './helpers/factories';
import { hasPgBouncer, PGBOUNCER, startPgBouncer, type PgBouncer } from './helpers/pgbouncer';
import { Client, pause, startServer, type ServerProcess } from './helpers/server-process';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';
import { seedStore, sellThroughQuote, type Store } from './faults/fixtures';
import { until } from './helpers/poll';

// Issue 44: the service behind PgBouncer in transaction mode (DATABASE_POOL_MODE=transaction), with
// a session connection straight to PostgreSQL (DATABASE_DIRECT_URL) for what needs one.

const SKIP = hasPgBouncer ? false : `${PGBOUNCER} is missing (Debian's pgbouncer package; .ci/run installs it)`;
if (SKIP) console.warn(`[pgbouncer-transaction] skipped: ${SKIP}`);

/** A session cookie as express-session signs it (cookie-signature): the id, a dot, its HMAC. */
const signedSessionCookie = (sid: string, secret: string) =>
  `${SESSION_COOKIE}=${encodeURIComponent(`s:${sid}.${createHmac('sha256', secret).update(sid).digest('base64').replace(/=+$/, '')}`)}`;

const databaseName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));
const withApplicationName = (url: string, name: string) => {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
};
const quiet = createLogger('silent');
/** The application_name of the service's session connection, told apart in pg_stat_activity. */
const DIRECT_APP = 'stores-direct';

describe('DATABASE_POOL_MODE and DATABASE_DIRECT_URL configuration', () => {
  const base = { DATABASE_URL: 'postgres://stores@127.0.0.1:6432/stores' };
  it('session by default; transaction when asked; any other value refuses to start, naming the variable', () => {
    expect(loadConfig(base).databasePoolMode).toBe('session');
    const config = loadConfig({
      ...base,
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_DIRECT_URL: 'postgres://stores@127.0.0.1:5432/stores',
    });
    expect([config.databasePoolMode, config.databaseDirectUrl]).toEqual([
      'transaction',
      'postgres://stores@127.0.0.1:5432/stores',
    ]);
    expect(() => loadConfig({ ...base, DATABASE_POOL_MODE: 'statement' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, DATABASE_POOL_MODE: 'statement' })).toThrow(/DATABASE_POOL_MODE/);
    expect(() => loadConfig({ DATABASE_POOL_MODE: 'transaction' })).toThrow(/need DATABASE_URL/);
  });
});

describe.skipIf(SKIP)('the service behind PgBouncer 1.18 in transaction mode (default_pool_size=2)', () => {
  let bouncer: PgBouncer;
  let server: ServerProcess;
  let db: Knex;
  let drop: () => Promise<void>;
  let store: Store;
  let receiver: Receiver;
  let directUrl: string;
  let dbName: string;

  beforeAll(async () => {
    const database = await testDatabase();
    drop = database.drop;
    dbName = databaseName(database.databaseUrl);
    directUrl = withApplicationName(database.databaseUrl, DIRECT_APP);
    db = createDb(withApplicationName(database.databaseUrl, 'stores-test'), 4);
    bouncer = await startPgBouncer(database.databaseUrl);
    store = await seedStore(db, 4);
    receiver = await startReceiver(() => ({ status: 200 }));
    server = await startServer(bouncer.url(dbName), {
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_DIRECT_URL: directUrl,
      OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1',
    });
  });

  afterAll(async () => {
    await server?.kill();
    await bouncer?.close();
    await receiver?.close();
    await db?.destroy();
    await drop?.();
  });

  /** The server connections PgBouncer opened to the database (no application_name: the service's pooled ones). */
  const pooledBackends = async () =>
    (
      await db.raw<{ rows: { count: number }[] }>(
        `SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = ? AND application_name = ''`,
        [dbName],
      )
    ).rows[0].count;

  it('a password sign-in answers 200 and the session reads the user (rate limiter and session store, unnamed)', async () => {
    const client = new Client(server.baseUrl);
    const wrong = await client.post('/api/auth/login', { email: store.manager.email, password: 'not the password' });
    expect(wrong.status).toBe(401);
    await client.signIn(store.manager.email);
    const me = await client.get('/api/auth/user');
    expect([me.status, (me.body as { email: string }).email]).toEqual([200, store.manager.email]);
  });

  it('many clients at once over 2 server connections: every sign-in and request succeeds, on reused connections', async () => {
    const users = await Promise.all(Array.from({ length: 6 }, () => buildUser(db, { role: 'manager' })));
    const clients = await Promise.all(users.map((u) => new Client(server.baseUrl).signIn(u.email)));
    const answers = await Promise.all(
      clients.flatMap((c) => [
        c.get('/api/auth/user'),
        c.get(`/api/items/${store.itemIds[0]}`),
        c.get('/api/items?search=Item'),
        c.get('/api/sales'),
      ]),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(await pooledBackends()).toBeLessThanOrEqual(2);
  });

  it('a sale and a processed quote commit through the pooler', async () => {
    const client = await new Client(server.baseUrl).signIn(store.manager.email);
    const sale = await client.post('/api/sales', {
      chargeCode: store.chargeCode,
      items: [{ itemId: store.itemIds[0], quantity: 1 }],
    });
    expect(sale.status).toBe(201);
    const { saleId } = (sale.body as { sale: { saleId: string } }).sale;
    expect(saleId).toMatch(/^SALE-/);
    expect(await db('sales').where({ sale_id: saleId }).count<{ count: number }[]>('* as count')).toEqual([
      { count: 1 },
    ]);
    const quote = await sellThroughQuote(client, store, store.itemIds[1], store.itemIds[2]);
    expect([quote.step, quote.answer.status]).toEqual(['process', 200]);
  });

  it('an outbound webhook goes through the outbox once, its worker listening on the direct connection only', async () => {
    const admin = await new Client(server.baseUrl).signIn(store.admin.email);
    const created = await admin.post('/api/outbound-webhooks', { url: receiver.url('/pooled'), events: ['ping'] });
    expect(created.status).toBe(201);
    const { id } = created.body as { id: string };
    expect((await admin.post(`/api/outbound-webhooks/${id}/ping`)).status).toBe(202);
    const received = await until(
      () => receiver.received.filter((d) => d.path === '/pooled'),
      (list) => list.length >= 1,
    );
    await pause(1_500);
    expect(receiver.received.filter((d) => d.path === '/pooled')).toHaveLength(received.length);
    expect(received).toHaveLength(1);
    const listening = await db.raw<{ rows: { application_name: string }[] }>(
      `SELECT application_name FROM pg_stat_activity WHERE datname = ? AND query ILIKE 'LISTEN %'`,
      [dbName],
    );
    expect(listening.rows).toEqual([{ application_name: DIRECT_APP }]);
  });

  it('logged no prepared-statement error, no refused startup parameter and no 500', () => {
    expect(server.log()).not.toMatch(/prepared statement|unsupported startup parameter|"statusCode":500/);
    expect(bouncer.log()).not.toMatch(/unsupported startup parameter/);
  });

  it('PgBouncer stopped: 503 with Retry-After and a JSON message; started again: the same process serves again', async () => {
    const client = await new Client(server.baseUrl).signIn(store.manager.email);
    expect((await client.get(`/api/items/${store.itemIds[0]}`)).status).toBe(200);
    await bouncer.stop();
    const down = [
      await fetch(`${server.baseUrl}/api/items/${store.itemIds[0]}`, { headers: { cookie: client.cookie } }),
      await fetch(`${server.baseUrl}/api/items/${store.itemIds[0]}`, { headers: { cookie: client.cookie } }),
      await fetch(`${server.baseUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: store.manager.email, password: 'correct horse battery staple' }),
      }),
    ];
    for (const res of down) {
      expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([
        503,
        '2',
        { message: 'Service temporarily unavailable' },
      ]);
    }
    const page = await fetch(`${server.baseUrl}/`, { headers: { cookie: client.cookie, accept: 'text/html' } });
    expect([page.status, page.headers.get('retry-after'), page.headers.get('content-type')]).toEqual([
      503,
      '2',
      expect.stringContaining('text/html'),
    ]);
    expect(await page.text()).toContain('Service temporarily unavailable');
    await bouncer.start();
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await client.get(`/api/items/${store.itemIds[0]}`)).status;
      if (status !== 200) await pause(200);
    }
    expect(status).toBe(200);
    expect(server.child.exitCode).toBeNull();
    await new Client(server.baseUrl).signIn(store.admin.email);
  });
});

describe.skipIf(SKIP)('transactions through PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  let drop: () => Promise<void>;
  let url: string;

  beforeAll(async () => {
    const database = await testDatabase();
    drop = database.drop;
    bouncer = await startPgBouncer(database.databaseUrl);
    url = bouncer.url(databaseName(database.databaseUrl));
  });
  afterAll(async () => {
    await bouncer?.close();
    await drop?.();
  });

  it('each transaction sets its own timeouts (SET LOCAL), which do not stay on the pooled connection', async () => {
    const db = createDb(url, 4, quiet, { poolMode: 'transaction', statementTimeoutMs: 400 });
    try {
      const inside = await transaction(db, async (trx) => {
        const { rows } = await trx.raw<{ rows: Record<string, string>[] }>(
          `SELECT current_setting('statement_timeout') AS statement, current_setting('idle_in_transaction_session_timeout') AS idle`,
        );
        return rows[0];
      });
      expect(inside).toEqual({ statement: '400ms', idle: '1min' });
      // outside a transaction the role's default applies (none on this test role), whichever server connection it gets
      const outside = await Promise.all(
        Array.from({ length: 4 }, () =>
          db.raw<{ rows: { s: string }[] }>(`SELECT current_setting('statement_timeout') AS s`),
        ),
      );
      expect(outside.map((r) => r.rows[0].s)).toEqual(['0', '0', '0', '0']);
      // named statements from several clients over two server connections (each would collide or be missing)
      const many = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          transaction(db, (trx) => preparedRaw<{ rows: { n: number }[] }>(trx, sql`SELECT ${i}::int AS n`)),
        ),
      );
      expect(many.map((r) => r.rows[0].n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      await expect(transaction(db, (trx) => trx.raw('SELECT pg_sleep(2)'))).rejects.toMatchObject({ code: '57014' });
    } finally {
      await db.destroy();
    }
  });

  it('a statement past the timeout inside a transaction answers 503 busy with Retry-After', async () => {
    const db = createDb(url, 2, quiet, { poolMode: 'transaction', statementTimeoutMs: 300 });
    const app = express();
    app.get('/slow', async (_req, res) => {
      await transaction(db, (trx) => trx.raw('SELECT pg_sleep(2)'));
      res.json({});
    });
    app.use(errorMiddleware(createLogger('silent'), false));
    try {
      const res = await supertest(app).get('/slow').expect(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body.message).toMatch(/busy/);
    } finally {
      await db.destroy();
    }
  });
});

describe.skipIf(SKIP)('PgBouncer whose PostgreSQL cannot be reached (08P01)', () => {
  let bouncer: PgBouncer;
  beforeAll(async () => {
    const { serverUrl } = inject('testDatabase');
    // nothing listens on port 1: every server login fails
    bouncer = await startPgBouncer(serverUrl, { query_wait_timeout: 2 }, { host: '127.0.0.1', port: 1 });
  });
  afterAll(() => bouncer?.close());

  it('answers 503 with Retry-After, in JSON for the API and as the error page for a page, never 500', async () => {
    const { app, config } = appOnUnusableDatabase(bouncer.url('stores'), 'transaction');
    for (let i = 0; i < 2; i += 1) {
      const res = await supertest(app).get('/api/auth/user').set('Authorization', 'Bearer sst_whatever').expect(503);
      expect([res.headers['retry-after'], res.body]).toEqual(['2', { message: 'Service temporarily unavailable' }]);
    }
    const cookie = signedSessionCookie('some-session-id', config.sessionSecret!);
    const page = await supertest(app).get('/').set('Cookie', cookie).set('Accept', 'text/html').expect(503);
    expect(page.headers['retry-after']).toBe('2');
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('Service temporarily unavailable');
  });
});
