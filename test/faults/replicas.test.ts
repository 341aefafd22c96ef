import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/knex';
import { migrateLatest } from '../../src/db/migrate';
import { REPLICA_APPLICATION_NAME } from '../../src/db/replicas';
import { freePort } from '../helpers/free-port';
import { hasPgBouncer, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer';
import { Client, pause, startServer, type ServerProcess } from '../helpers/server-process';
import { seedStore, type Store } from './fixtures';

/**
 * Issue 44, read replicas, on a real streaming replica: a throwaway primary (Debian's PostgreSQL 15,
 * initdb) and a replica made from it with `pg_basebackup -R`, each on a port of its own; the service
 * as a child process with DATABASE_REPLICA_URLS on the replica and DATABASE_URL on PgBouncer in
 * transaction mode in front of the primary (DATABASE_DIRECT_URL the primary), as the issue's
 * topology has it; on the primary itself (session) where Debian's PgBouncer is not installed
 * (.ci/run installs it).
 * A fault test (npm run test:faults): it builds and stops clusters, which takes tens of seconds.
 */
const BIN = '/usr/lib/postgresql/15/bin';
const run = promisify(execFile);

/** As root, PostgreSQL runs as the postgres OS user. */
const osUser = (() => {
  if (os.userInfo().uid !== 0) return undefined;
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
})();
const pg = (tool: string, args: string[]) => run(path.join(BIN, tool), args, { ...osUser, timeout: 120_000 });

type Node = { port: number; dir: string; start: () => Promise<void>; stop: () => Promise<void> };

function node(base: string, name: string, port: number): Node {
  const dir = path.join(base, name);
  const log = path.join(base, `${name}.log`);
  return {
    port,
    dir,
    start: () => pg('pg_ctl', ['-D', dir, '-l', log, '-w', '-o', `-p ${port}`, 'start']).then(() => undefined),
    stop: () => pg('pg_ctl', ['-D', dir, '-m', 'fast', '-w', 'stop']).then(() => undefined),
  };
}

const urlOf = (port: number) => `postgres://postgres@127.0.0.1:${port}/stores`;

let base: string;
let primary: Node;
let replica: Node;
let primaryDb: Knex;
let replicaDb: Knex;
let server: ServerProcess;
/** a second instance on the same databases: what one instance knows of a person's writes, the other must too */
let other: ServerProcess;
let bouncer: PgBouncer | undefined;
/** what DATABASE_URL reaches: PgBouncer's port, or the primary's */
let databasePort: number;
let store: Store;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-replicas-'));
  await fs.chmod(base, 0o755);
  if (osUser) await fs.chown(base, osUser.uid, osUser.gid);
  primary = node(base, 'primary', await freePort());
  replica = node(base, 'replica', await freePort());
  await pg('initdb', ['-D', primary.dir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  await fs.appendFile(
    path.join(primary.dir, 'postgresql.conf'),
    [
      "listen_addresses = '127.0.0.1'",
      "unix_socket_directories = ''",
      'wal_level = replica',
      'max_wal_senders = 5',
      'max_connections = 100',
      'fsync = off',
      'full_page_writes = off',
      '',
    ].join('\n'),
  );
  await primary.start();
  const admin = createDb(`postgres://postgres@127.0.0.1:${primary.port}/postgres`, 1);
  await admin.raw('CREATE DATABASE stores');
  await admin.destroy();
  primaryDb = createDb(urlOf(primary.port), 4);
  await migrateLatest(primaryDb);
  store = await seedStore(primaryDb, 2);
  // the replica: a base backup with the standby's settings (-R: standby.signal and primary_conninfo)
  await pg('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    replica.dir,
    '-R',
    '-X',
    'stream',
    // a checkpoint now rather than spread over minutes
    '--checkpoint=fast',
    '--no-sync',
  ]);
  await replica.start();
  replicaDb = createDb(urlOf(replica.port), 2);
  bouncer = hasPgBouncer
    ? await startPgBouncer(`postgres://postgres@127.0.0.1:${primary.port}/stores`, { default_pool_size: 20 })
    : undefined;
  databasePort = bouncer?.port ?? primary.port;
  const env = {
    ...(bouncer ? { DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: urlOf(primary.port) } : {}),
    DATABASE_REPLICA_URLS: urlOf(replica.port),
    // a lag limit no slow machine reaches while replay is paused on purpose below
    DATABASE_REPLICA_MAX_LAG_MS: '60000',
  };
  [server, other] = await Promise.all([startServer(urlOf(databasePort), env), startServer(urlOf(databasePort), env)]);
}, 240_000);

afterAll(async () => {
  await Promise.all([server?.kill(), other?.kill()]);
  await bouncer?.close();
  await Promise.all([primaryDb?.destroy(), replicaDb?.destroy()]);
  for (const n of [replica, primary]) if (n && existsSync(n.dir)) await n.stop().catch(() => undefined);
  if (base) await fs.rm(base, { recursive: true, force: true });
});

type Health = {
  status: string;
  database: string;
  primary: { host: string; latencyMs: number | null };
  replicas: { host: string; state: string; lagMs: number | null; checkedAt: string | null }[];
  poolMode: string;
};
type Report = { data: { sales: { saleId: string }[] } };

const health = async () => {
  const res = await fetch(`${server.baseUrl}/api/health`);
  return { status: res.status, body: (await res.json()) as Health };
};

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(250);
  }
}

const saleIdsIn = async (client: Client, saleId: string) => {
  const res = await client.get(`/api/sales/reports?search=${encodeURIComponent(saleId)}&limit=100`);
  expect(res.status).toBe(200);
  return (res.body as Report).data.sales.map((s) => s.saleId);
};

/** The report's SQL seen on one of the service's replica connections (idle ones show their last query). */
const reportQueryOnReplica = async () =>
  (
    await replicaDb('pg_stat_activity')
      .where('application_name', REPLICA_APPLICATION_NAME)
      .whereILike('query', '%sales%')
      .count<{ count: number }[]>('* as count')
  )[0].count > 0;

describe('read replicas', () => {
  it('GET /api/health reports the primary, the replica by host:port with its lag and state, and the pool mode', async () => {
    const body = await until('the replica healthy', async () => {
      const { body } = await health();
      return body.replicas[0]?.state === 'healthy' ? body : undefined;
    });
    expect(body).toMatchObject({
      status: 'healthy',
      database: 'connected',
      primary: { host: `127.0.0.1:${databasePort}` },
      replicas: [{ host: `127.0.0.1:${replica.port}`, state: 'healthy', lagMs: expect.any(Number) }],
      poolMode: bouncer ? 'transaction' : 'session',
    });
    expect(body.replicas[0].lagMs).toBeGreaterThanOrEqual(0);
    expect(body.replicas[0].lagMs).toBeLessThanOrEqual(60_000);
  });

  it('the sales report is read from the replica: its connection shows in the replica’s pg_stat_activity', async () => {
    const admin = await new Client(server.baseUrl).signIn(store.admin.email);
    // signing in is a write: the admin's reads go to the replica once it has replayed it (the next check)
    await until('a report read on the replica', async () => {
      expect((await admin.get('/api/sales/reports')).status).toBe(200);
      return (await reportQueryOnReplica()) || undefined;
    });
  });

  it("a person's own sale is in their report at once; another's report, from the replica, has it once replayed", async () => {
    const [manager, admin] = await Promise.all([
      new Client(server.baseUrl).signIn(store.manager.email),
      new Client(server.baseUrl).signIn(store.admin.email),
    ]);
    // both sign-ins replayed and seen by a check: neither person has a write the replica lacks
    const signedIn = Date.now();
    await until('a check after the sign-ins', async () => {
      const { body } = await health();
      const at = body.replicas[0].checkedAt;
      return at && Date.parse(at) > signedIn + 100 ? true : undefined;
    });
    await pause(2500);
    // replay stops: what the primary commits from now on is not on the replica, which stays healthy (lag under 60 s)
    await replicaDb.raw('SELECT pg_wal_replay_pause()');
    try {
      const sold = await manager.post('/api/sales', {
        chargeCode: store.chargeCode,
        items: [{ itemId: store.itemIds[0], quantity: 1 }],
      });
      expect(sold.status).toBe(201);
      const saleId = (sold.body as { sale: { saleId: string } }).sale.saleId;
      // the seller reads the primary (read-your-writes), on the instance that made the sale and on
      // another (the write's time is kept in the session, in PostgreSQL)...
      expect(await saleIdsIn(manager, saleId)).toEqual([saleId]);
      const managerOnOther = Object.assign(new Client(other.baseUrl), { cookie: manager.cookie });
      expect(await saleIdsIn(managerOnOther, saleId)).toEqual([saleId]);
      // ...while the admin, who wrote nothing since, reads the replica, which has not replayed it
      expect((await health()).body.replicas[0].state).toBe('healthy');
      expect(await saleIdsIn(admin, saleId)).toEqual([]);
      await replicaDb.raw('SELECT pg_wal_replay_resume()');
      await until('the sale replayed', async () => ((await saleIdsIn(admin, saleId)).length === 1 ? true : undefined));
    } finally {
      await replicaDb.raw('SELECT pg_wal_replay_resume()').catch(() => undefined);
    }
  });

  it('a stopped replica changes nothing but the health figures, with a warning logged once and the alert replica_lagging', async () => {
    const manager = await new Client(server.baseUrl).signIn(store.manager.email);
    const admin = await new Client(server.baseUrl).signIn(store.admin.email);
    const sold = await manager.post('/api/sales', {
      chargeCode: store.chargeCode,
      items: [{ itemId: store.itemIds[1], quantity: 1 }],
    });
    expect(sold.status).toBe(201);
    const saleId = (sold.body as { sale: { saleId: string } }).sale.saleId;
    await replicaDb.destroy();
    await replica.stop();
    try {
      const down = await until('the replica down', async () => {
        const answer = await health();
        return answer.body.replicas[0].state === 'down' ? answer : undefined;
      });
      expect(down.status).toBe(200);
      expect(down.body).toMatchObject({
        status: 'healthy',
        database: 'connected',
        replicas: [{ host: `127.0.0.1:${replica.port}`, state: 'down', lagMs: null }],
      });
      // every report still answers, from the primary
      expect(await saleIdsIn(manager, saleId)).toEqual([saleId]);
      expect(await saleIdsIn(admin, saleId)).toEqual([saleId]);
      const csv = await admin.get('/api/sales/reports?format=csv');
      expect(csv.status).toBe(200);
      expect(String(csv.body)).toContain(saleId);
      const alerts = await admin.get('/api/system/alerts');
      expect(alerts.status).toBe(200);
      expect((alerts.body as { alerts: { type: string; level: string }[] }).alerts).toContainEqual(
        expect.objectContaining({ type: 'replica_lagging', level: 'warning' }),
      );
      // several checks later, the change was logged once
      await pause(5000);
      await health();
      const warnings = server
        .log()
        .split('\n')
        .filter((line) => line.includes('read replica unreachable'));
      expect(warnings).toHaveLength(1);
    } finally {
      await replica.start();
      replicaDb = createDb(urlOf(replica.port), 2);
    }
    await until('the replica healthy again', async () =>
      (await health()).body.replicas[0].state === 'healthy' ? true : undefined,
    );
    const alerts = await admin.get('/api/system/alerts');
    expect((alerts.body as { alerts: { type: string }[] }).alerts.map((a) => a.type)).not.toContain('replica_lagging');
  });
});
