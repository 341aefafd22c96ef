import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createDb, createPgPool } from '../../src/db/knex';
import { createMaintenance } from '../../src/db/maintenance';
import { openDatabase, type OpenDatabase } from '../../src/db/open';
import { transaction } from '../../src/db/transaction';
import { startOutboxDelivery } from '../../src/jobs/outbox-delivery';
import { JOBS, LEDGER_CHECK_JOB, startScheduler } from '../../src/jobs/scheduler';
import { createLogger } from '../../src/logger';
import { OUTBOX_NOTIFY_CHANNEL, queueEmail } from '../../src/modules/outbox/outbox.queries';
import type { OutboxWorker } from '../../src/modules/outbox/outbox.worker';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster';
import { hasPgBouncer, PGBOUNCER, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer';
import { Client, pause, startServer, type Answer, type ServerProcess } from '../helpers/server-process';
import { TestSmtp } from '../helpers/smtp';
import { freePort } from '../helpers/free-port';
import { seedStore } from './fixtures';
import { waitFor } from '../helpers/poll';

/**
 * Issue 44, long connections: the outbox's LISTEN connection and the scheduled jobs' session
 * connection (DATABASE_DIRECT_URL, a PgBouncer session pool as in deploy/) come back by themselves
 * after the backend is terminated, PostgreSQL restarts or PgBouncer restarts. The outbox worker and
 * the scheduler run here as server.ts starts them, on the pools openDatabase opens, with the outbox's
 * poll once an hour: an email queued after the fault and delivered within seconds was woken by a
 * NOTIFY on a LISTEN that came back, and the real SMTP server counts it once.
 * Then what a request gets while the primary is gone behind PgBouncer in transaction mode: the
 * service as a child process while PostgreSQL is stopped, and the app in front of a PgBouncer whose
 * server accepts connections and never answers.
 */
const SKIP = hasPgBouncer ? false : `${PGBOUNCER} is missing (Debian's pgbouncer package; .ci/run installs it)`;
if (SKIP) console.warn(`[long-connections] skipped: ${SKIP}`);

const HOUR_MS = 3_600_000;
/** how long the test waits for what should take a few seconds, and how often it looks */
const PATIENCE = { ms: 30_000, everyMs: 100 };

let cluster: PgCluster;
let pooled: PgBouncer;
let session: PgBouncer;
let smtp: TestSmtp;
let database: OpenDatabase;
let outbox: OutboxWorker;
let scheduler: { stop: () => void };

/** The backend that listens for the outbox's commits, once there is one (other than `not`). */
const listeningBackend = (not?: number) =>
  waitFor(
    'a LISTEN backend',
    async () => {
      const { rows } = await cluster.db.raw<{ rows: { pid: number }[] }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = ? AND pid <> pg_backend_pid()`,
        [`LISTEN ${OUTBOX_NOTIFY_CHANNEL}`],
      );
      const pid = rows.find((r) => r.pid !== not)?.pid;
      return pid;
    },
    PATIENCE,
  );

let sent = 0;
/** Queues an email as a module does (its transaction's commit notifies), and what the SMTP server then received of it. */
async function deliveredOnce(): Promise<{ received: number; queuedToReceivedMs: number }> {
  sent += 1;
  const to = `after-fault-${sent}@example.ac.uk`;
  const queued = performance.now();
  await transaction(database.db, (trx) =>
    queueEmail(trx, {
      to,
      subject: `After fault ${sent}`,
      template: 'backup-failed',
      data: { startedAt: new Date().toISOString(), error: 'none' },
    }),
  );
  await waitFor(`the email to ${to}`, async () => (smtp.to(to).length > 0 ? true : undefined), PATIENCE);
  const queuedToReceivedMs = Math.round(performance.now() - queued);
  // long enough for a second delivery of the same message to show
  await pause(2_000);
  return { received: smtp.to(to).length, queuedToReceivedMs };
}

/**
 * This process's established connections to the port, each with its keepalive timer in seconds (null
 * without one), as the kernel reports them (ss).
 */
async function keepalivesTo(port: number): Promise<(number | null)[]> {
  const { stdout } = await promisify(execFile)('ss', ['-tnoHp', 'state', 'established', `dport = :${port}`]);
  return stdout
    .split('\n')
    .filter((line) => line.includes(`pid=${process.pid},`))
    .map((line) => {
      const timer = /timer:\(keepalive,(?:(\d+)min)?(?:([\d.]+)sec)?/.exec(line);
      return timer ? Number(timer[1] ?? 0) * 60 + Number(timer[2] ?? 0) : null;
    });
}

const lastLedgerCheck = async () =>
  (await cluster.db('ledger_checks').first<{ checked_at: Date } | undefined>('checked_at'))?.checked_at;

/** The scheduled ledger check (every second here) ran again after `after`, on the session connection. */
const ledgerCheckedAfter = (after: Date) =>
  waitFor(
    'a scheduled ledger check',
    async () => {
      const at = await lastLedgerCheck();
      return at && at > after ? at : undefined;
    },
    PATIENCE,
  );

beforeAll(async () => {
  if (SKIP) return;
  cluster = await startPgCluster();
  // deploy/pgbouncer.ini's timeouts
  pooled = await startPgBouncer(cluster.url, {
    default_pool_size: 5,
    query_wait_timeout: 10,
    server_connect_timeout: 3,
  });
  session = await startPgBouncer(cluster.url, { pool_mode: 'session', default_pool_size: 10 });
  smtp = await TestSmtp.start();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    SESSION_SECRET: 'faults-session-secret-0123456789',
    DATABASE_URL: pooled.url('stores'),
    DATABASE_POOL_MODE: 'transaction',
    DATABASE_DIRECT_URL: session.url('stores'),
    SMTP_URL: smtp.url,
  });
  const logger = createLogger('silent');
  database = await openDatabase(config, logger);
  outbox = startOutboxDelivery(
    { db: database.db, databaseUrl: database.directUrl, config, logger },
    { pollMs: HOUR_MS },
  );
  const ledgerCheck = JOBS.find((job) => job.name === LEDGER_CHECK_JOB)!;
  scheduler = startScheduler(database.direct, logger, createMaintenance(), [
    { ...ledgerCheck, schedule: '* * * * * *', afterStartMs: undefined },
  ]);
});

afterAll(async () => {
  scheduler?.stop();
  await outbox?.stop();
  await database?.close();
  await Promise.all([pooled?.close(), session?.close()]);
  await smtp?.stop();
  await cluster?.destroy();
});

describe.skipIf(SKIP)('the outbox LISTEN and the scheduled jobs through a PgBouncer session pool', () => {
  it('before any fault: an email is delivered by NOTIFY (the poll is an hour away), once; the ledger check runs', async () => {
    await listeningBackend();
    const first = await deliveredOnce();
    console.log(`[faults] long connections: no fault, queued to received ${first.queuedToReceivedMs} ms`);
    expect(first.received).toBe(1);
    await ledgerCheckedAfter(new Date(Date.now() - 1_000));
  });

  it("every connection to PgBouncer (the pools', the LISTEN one) probes with TCP keepalives after seconds of silence, so a server that vanished is noticed", async () => {
    const timers = [...(await keepalivesTo(pooled.port)), ...(await keepalivesTo(session.port))];
    // the LISTEN connection and the pools' connections the test's deliveries and ledger checks opened
    expect(timers.length).toBeGreaterThanOrEqual(3);
    expect(timers.filter((seconds) => seconds === null || seconds > 5)).toEqual([]);
  });

  it('the LISTEN backend terminated (pg_terminate_backend): a new LISTEN, and the next email is delivered at once, once', async () => {
    const before = await listeningBackend();
    await cluster.db.raw('SELECT pg_terminate_backend(?)', [before]);
    const after = await listeningBackend(before);
    expect(after).not.toBe(before);
    const delivery = await deliveredOnce();
    console.log(`[faults] long connections: backend terminated, queued to received ${delivery.queuedToReceivedMs} ms`);
    expect(delivery.received).toBe(1);
  });

  it('PostgreSQL stopped and started again: LISTEN comes back, the next email is delivered at once, once, and the scheduled job runs again', async () => {
    const before = await listeningBackend();
    await cluster.stop();
    await pause(3_000);
    await cluster.start();
    const back = new Date();
    await listeningBackend(before);
    const delivery = await deliveredOnce();
    console.log(
      `[faults] long connections: PostgreSQL restarted, queued to received ${delivery.queuedToReceivedMs} ms`,
    );
    expect(delivery.received).toBe(1);
    await ledgerCheckedAfter(back);
  });

  it('PgBouncer (the session pool) stopped and started again: the same', async () => {
    const before = await listeningBackend();
    await session.stop();
    await pause(3_000);
    await session.start();
    const back = new Date();
    await listeningBackend(before);
    const delivery = await deliveredOnce();
    console.log(`[faults] long connections: PgBouncer restarted, queued to received ${delivery.queuedToReceivedMs} ms`);
    expect(delivery.received).toBe(1);
    await ledgerCheckedAfter(back);
  });
});

describe.skipIf(SKIP)('the service behind PgBouncer in transaction mode while its PostgreSQL is gone for 20 s', () => {
  let server: ServerProcess;
  afterAll(() => server?.kill());

  it('answers every request 200 or 503 (never 500, never no answer), and serves again without a restart once PostgreSQL is back', async () => {
    const store = await seedStore(cluster.db, 4);
    server = await startServer(pooled.url('stores'), {
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_DIRECT_URL: session.url('stores'),
    });
    // more patient than the 15 s the issue allows, so that a slow answer is measured rather than cut off
    const client = await new Client(server.baseUrl, 30_000).signIn(store.manager.email);
    type Record = { started: number; ended: number; answer: Answer };
    const records: Record[] = [];
    const t0 = performance.now();
    const now = () => performance.now() - t0;
    let running = true;
    const worker = async (n: number) => {
      while (running) {
        const item = store.itemIds[n % store.itemIds.length];
        const started = now();
        const answer =
          n % 2
            ? await client.get(`/api/items/${item}`)
            : await client.post(`/api/items/${item}/stock`, { type: 'in', quantity: 1, reason: 'faults' });
        records.push({ started, ended: now(), answer });
        await pause(50);
      }
    };
    // more requests at once than the instance's pool holds (10), so some wait for a connection first
    const load = Promise.all(Array.from({ length: 16 }, (_, n) => worker(n)));
    await pause(2_000);
    await cluster.stop();
    const down = now();
    await pause(20_000);
    const startAsked = now();
    await cluster.start();
    const back = now();
    await pause(8_000);
    running = false;
    await load;

    const during = records.filter((r) => r.started >= down && r.ended <= startAsked);
    const slowest = Math.round(Math.max(...during.map((r) => r.answer.ms)));
    const firstOk = records.find((r) => r.started >= back && r.answer.status === 200);
    const statuses = during.reduce<{ [status: number]: number }>((acc, r) => {
      acc[r.answer.status] = (acc[r.answer.status] ?? 0) + 1;
      return acc;
    }, {});
    console.log(
      `[faults] PostgreSQL gone behind PgBouncer: ${during.length} requests during the outage ${JSON.stringify(statuses)}, ` +
        `slowest ${slowest} ms; first 200 ${Math.round((firstOk?.ended ?? Infinity) - back)} ms after it was back`,
    );

    expect(
      records
        .filter((r) => r.answer.status !== 200 && r.answer.status !== 503)
        .map((r) => [r.answer.status, r.answer.body, r.answer.error])
        .slice(0, 5),
    ).toEqual([]);
    expect(during.length).toBeGreaterThan(10);
    expect(
      during
        .filter((r) => (r.answer.body as { message?: string }).message !== 'Service temporarily unavailable')
        .map((r) => [r.answer.status, r.answer.body]),
    ).toEqual([]);
    expect(firstOk).toBeDefined();
    expect(records.filter((r) => r.started >= back + 5_000 && r.answer.status !== 200)).toEqual([]);
    expect(server.child.exitCode).toBeNull();
  });
});

describe.skipIf(SKIP)(
  'a primary that accepts connections and never answers (a hung host), behind PgBouncer with the reference timeouts',
  () => {
    let silent: net.Server;
    let hung: PgBouncer;
    const sockets = new Set<net.Socket>();
    beforeAll(async () => {
      silent = net.createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      const port = await freePort();
      await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
      hung = await startPgBouncer(
        cluster.url,
        { default_pool_size: 5, query_wait_timeout: 10, server_connect_timeout: 3 },
        { host: '127.0.0.1', port },
      );
    });
    afterAll(async () => {
      await hung?.close();
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => silent?.close(resolve));
    });

    it("more requests at once than the pool holds: each answers 503 with Retry-After, not 500 (PgBouncer holds a new client's login until it has a server connection: the 3 s connect timeout, or the pool's 4 s)", async () => {
      const url = hung.url('stores');
      const config = loadConfig({
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        SESSION_SECRET: 'faults-session-secret-0123456789',
        DATABASE_URL: url,
        DATABASE_POOL_MODE: 'transaction',
      });
      const logger = createLogger('silent');
      const db = createDb(url, 10, logger, { poolMode: 'transaction' });
      const sessionPool = createPgPool(url, () => undefined, 5, 'transaction');
      const app = buildApp({ db, databaseUrl: url, config, logger, sessionPool, sessionSecret: config.sessionSecret! });
      try {
        const answers = await Promise.all(
          Array.from({ length: 16 }, async () => {
            const started = performance.now();
            const res = await supertest(app).get('/api/auth/user').set('Authorization', 'Bearer sst_whatever');
            return { status: res.status, retryAfter: res.headers['retry-after'], ms: performance.now() - started };
          }),
        );
        const times = answers.map((a) => Math.round(a.ms)).sort((a, b) => a - b);
        console.log(`[faults] a hung primary behind PgBouncer: 16 requests answered after ${JSON.stringify(times)} ms`);
        expect(answers.map((a) => [a.status, a.retryAfter])).toEqual(answers.map(() => [503, '2']));
      } finally {
        await db.destroy();
        await sessionPool.end();
      }
    });
  },
);
