import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { INITIAL_ADMIN_PASSWORD_FILE } from '../../src/auth/bootstrap-admin';
import { createDb } from '../../src/db/knex';
import { withDatabase } from '../global-setup';
import { buildMcpKey, withKey } from '../helpers/mcp-factories';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster';
import { Client, pause, startServer, type Answer, type ServerProcess } from '../helpers/server-process';
import { seedStore, sessionId, type Store } from './fixtures';
import { ledgerProblems, NO_PROBLEMS } from './ledger';

let cluster: PgCluster;
let a: ServerProcess;
let b: ServerProcess;
let store: Store;

beforeAll(async () => {
  cluster = await startPgCluster();
  store = await seedStore(cluster.db, 4);
  [a, b] = await Promise.all([startServer(cluster.url), startServer(cluster.url)]);
});

afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  await cluster?.destroy();
});

/** The same user's session used on the other instance: the cookie is all it takes. */
const sameSessionOn = (server: ServerProcess, client: Client) =>
  Object.assign(new Client(server.baseUrl), { cookie: client.cookie });

const scheduledDumps = async (server: ServerProcess) =>
  (await fs.readdir(path.join(server.dataDir, 'backups')).catch(() => [] as string[])).filter((f) =>
    f.endsWith('-scheduled.dump'),
  );

describe('two instances over one database', () => {
  it('a session started on A is valid on B, and signing out on B ends it on A', async () => {
    const onA = await new Client(a.baseUrl).signIn(store.manager.email);
    const onB = sameSessionOn(b, onA);
    expect((await onB.get('/api/auth/user')).status).toBe(200);
    expect((await onB.post('/api/auth/logout')).status).toBe(204);
    expect((await onA.get('/api/auth/user')).status).toBe(401);
  });

  it('the sign-in limiter counts the failures made on A and on B together', async () => {
    const email = store.admin.email;
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) {
      const res = await new Client(i % 2 ? b.baseUrl : a.baseUrl).post('/api/auth/login', {
        email,
        password: 'not the password',
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
    await cluster.db('rate_limits').delete();
  });

  it('the MCP limits count the requests made on A and on B together (60 status reads a minute per key)', async () => {
    const { key } = await buildMcpKey(cluster.db);
    const statuses: number[] = [];
    for (let i = 0; i < 62; i += 1) {
      const res = await fetch(`${(i % 2 ? b : a).baseUrl}/api/mcp/status`, { headers: withKey(key) });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.slice(60)).toEqual([429, 429]);
  });

  it('the same quote processed on A and on B at once makes one sale', async () => {
    const onA = await new Client(a.baseUrl).signIn(store.manager.email);
    const onB = sameSessionOn(b, onA);
    for (let round = 0; round < 5; round += 1) {
      const saved = await onA.post('/api/sales/quotes', {
        chargeCode: store.chargeCode,
        sessionId: sessionId(),
        items: [
          { itemId: store.itemIds[0], quantity: 1 },
          { itemId: store.itemIds[1], quantity: 2 },
        ],
      });
      expect(saved.status).toBe(200);
      const { id, quoteId } = (saved.body as { quote: { id: number; quoteId: string } }).quote;
      const answers = await Promise.all([
        onA.post(`/api/sales/quotes/${id}/process`, {}),
        onB.post(`/api/sales/quotes/${id}/process`, {}),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 404]);
      expect(await cluster.db('sales').where({ quote_id: quoteId }).count<{ count: number }[]>('* as count')).toEqual([
        { count: 1 },
      ]);
    }
    expect(await ledgerProblems(cluster.db)).toEqual(NO_PROBLEMS);
  });

  it('one scheduled backup per slot: both instances tick, one claims the slot and writes the file', async () => {
    const admin = await new Client(a.baseUrl).signIn(store.admin.email);
    // the next whole minute, with room for the schedule to be saved before it
    let slot = new Date(Math.ceil((Date.now() + 1_000) / 60_000) * 60_000);
    if (slot.getTime() - Date.now() < 5_000) slot = new Date(slot.getTime() + 60_000);
    const time = `00:${String(slot.getMinutes()).padStart(2, '0')}`;
    expect(
      (await admin.post('/api/backups/schedule', { enabled: true, frequency: 'hourly', time, retention: 5 })).status,
    ).toBe(200);
    await pause(slot.getTime() - Date.now());
    const runsOf = () => cluster.db('backup_runs').select<{ slot: Date; ok: boolean | null }[]>('slot', 'ok');
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !(await runsOf()).some((r) => r.ok !== null)) await pause(250);
    // the other instance's tick of the same slot has come and gone
    await pause(2_000);
    const runs = await runsOf();
    const files = [...(await scheduledDumps(a)), ...(await scheduledDumps(b))];
    console.log(`[faults] scheduled backup: runs ${JSON.stringify(runs)}, files ${JSON.stringify(files)}`);
    expect(runs).toEqual([{ slot, ok: true }]);
    expect(files).toHaveLength(1);
    await admin.post('/api/backups/schedule', { enabled: false, frequency: 'hourly', time, retention: 5 });
  });

  it('a backup restored on A leaves B serving: B answers 200 or 503 meanwhile (never 500) and succeeds again within 2 s of the restore', async () => {
    const admin = await new Client(a.baseUrl, 120_000).signIn(store.admin.email);
    const manager = await new Client(b.baseUrl).signIn(store.manager.email);
    // a bearer token made before the backup survives the restore (sessions do not)
    const token = (await manager.post('/api/auth/tokens', { name: 'faults' })).body as { token: string };
    const backup = await admin.post('/api/backups');
    expect(backup.status).toBe(201);
    const { filename } = backup.body as { filename: string };

    const onB = new Client(b.baseUrl, 30_000);
    const bearer = { Authorization: `Bearer ${token.token}` };
    const records: { started: number; ended: number; kind: string; answer: Answer }[] = [];
    let running = true;
    const t0 = performance.now();
    const loop = async (kind: string, call: () => Promise<Answer>) => {
      while (running) {
        const started = performance.now() - t0;
        const answer = await call();
        records.push({ kind, started, ended: performance.now() - t0, answer });
        await pause(25);
      }
    };
    const itemId = store.itemIds[2];
    const load = Promise.all([
      loop('read', () => onB.request('GET', `/api/items/${itemId}`, undefined, bearer)),
      loop('search', () => onB.request('GET', `/api/items?search=Item`, undefined, bearer)),
      loop('stock', () =>
        onB.request('POST', `/api/items/${itemId}/stock`, { type: 'in', quantity: 1, reason: 'faults' }, bearer),
      ),
      loop('sale', () =>
        onB.request('POST', '/api/sales', { chargeCode: store.chargeCode, items: [{ itemId, quantity: 1 }] }, bearer),
      ),
    ]);
    await pause(1_000);
    const restoreStarted = performance.now() - t0;
    const restored = await admin.post(`/api/backups/${filename}/restore`);
    const restoreEnded = performance.now() - t0;
    await pause(4_000);
    running = false;
    await load;

    const tally = records.reduce<Record<string, number>>((acc, r) => {
      const key = `${r.kind} ${r.answer.status}`;
      acc[key] = (acc[key] ?? 0) + 1;
      return acc;
    }, {});
    const firstOk = Math.min(
      ...['read', 'search', 'stock', 'sale'].map(
        (k) =>
          records.find((r) => r.kind === k && r.started >= restoreEnded && r.answer.status < 300)?.ended ?? Infinity,
      ),
    );
    const lastOk = Math.max(
      ...['read', 'search', 'stock', 'sale'].map(
        (k) =>
          records.find((r) => r.kind === k && r.started >= restoreEnded && r.answer.status < 300)?.ended ?? Infinity,
      ),
    );
    console.log(
      `[faults] restore on A took ${Math.round(restoreEnded - restoreStarted)} ms (${restored.status}); B answered ${JSON.stringify(tally)}; ` +
        `B's first success after it ${Math.round(firstOk - restoreEnded)} ms, every kind by ${Math.round(lastOk - restoreEnded)} ms`,
    );
    expect([restored.status, restored.body]).toEqual([200, expect.anything()]);
    const bad = records.filter((r) => ![200, 201, 503].includes(r.answer.status));
    expect(bad.map((r) => [r.kind, r.answer.status, r.answer.body, r.answer.error]).slice(0, 5)).toEqual([]);
    expect(lastOk - restoreEnded).toBeLessThan(2_000);
    const late = records.filter((r) => r.started >= restoreEnded + 2_000);
    expect(late.length).toBeGreaterThan(0);
    expect(late.filter((r) => r.answer.status >= 300).map((r) => [r.kind, r.answer.status, r.answer.body])).toEqual([]);
    expect(await ledgerProblems(cluster.db)).toEqual(NO_PROBLEMS);
  });
});

describe('two instances started at once on a fresh database (issue 44)', () => {
  const ADMIN = { email: 'first.admin@example.edu', password: 'Bootstrap-Race-Passphrase-44' };

  /**
   * A database with nothing in it and one DATA_DIR for both (a shared folder), with no
   * SESSION_SECRET: each instance migrates, creates the first admin and generates the session
   * secret, all at the same moment. Returns the servers once both answer, or fails with why not.
   */
  const startBothFresh = async (round: string, env: Record<string, string>) => {
    const name = `bootstrap_race_${round}_${process.pid}`;
    const admin = createDb(withDatabase(cluster.url, 'postgres'), 1);
    await admin.raw(`CREATE DATABASE "${name}"`);
    await admin.destroy();
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-faults-shared-'));
    const url = withDatabase(cluster.url, name);
    const started = await Promise.allSettled([
      startServer(url, { DATA_DIR: dataDir, SESSION_SECRET: '', ...env }),
      startServer(url, { DATA_DIR: dataDir, SESSION_SECRET: '', ...env }),
    ]);
    const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const db = createDb(url, 1);
    const close = async () => {
      await Promise.all(servers.map((s) => s.kill()));
      await db.destroy();
      await fs.rm(dataDir, { recursive: true, force: true });
      const dropper = createDb(withDatabase(cluster.url, 'postgres'), 1);
      await dropper.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await dropper.destroy();
    };
    const failures = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason).slice(0, 2_000)] : []));
    if (failures.length > 0) await close();
    expect(failures).toEqual([]);
    return { servers: servers as [ServerProcess, ServerProcess], db, dataDir, close };
  };

  /** Both healthy, one admin, who signs in through either, and each one's session is valid on the other. */
  const expectAgreement = async (
    [a, b]: [ServerProcess, ServerProcess],
    db: Knex,
    admin: { email: string; password: string },
  ) => {
    expect([(await fetch(`${a.baseUrl}/health`)).status, (await fetch(`${b.baseUrl}/health`)).status]).toEqual([
      200, 200,
    ]);
    expect(await db('users').select('email', 'role')).toEqual([{ email: admin.email, role: 'admin' }]);
    const onA = await new Client(a.baseUrl).signIn(admin.email, admin.password);
    const onB = await new Client(b.baseUrl).signIn(admin.email, admin.password);
    expect((await sameSessionOn(b, onA).get('/api/auth/user')).status).toBe(200);
    expect((await sameSessionOn(a, onB).get('/api/auth/user')).status).toBe(200);
  };

  it('with ADMIN_EMAIL, twice over: both start, and agree on the admin and the session secret', async () => {
    for (let round = 0; round < 2; round += 1) {
      const fresh = await startBothFresh(`email${round}`, { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
      try {
        await expectAgreement(fresh.servers, fresh.db, ADMIN);
      } finally {
        await fresh.close();
      }
    }
  }, 360_000);

  it('without, twice over: both start, one admin@localhost and one password file, which signs in on either', async () => {
    for (let round = 0; round < 2; round += 1) {
      const fresh = await startBothFresh(`generated${round}`, {});
      try {
        const file = await fs.readFile(path.join(fresh.dataDir, INITIAL_ADMIN_PASSWORD_FILE), 'utf8');
        const password = /^password: (.+)$/m.exec(file)?.[1] ?? '';
        await expectAgreement(fresh.servers, fresh.db, { email: 'admin@localhost', password });
      } finally {
        await fresh.close();
      }
    }
  }, 360_000);
});
