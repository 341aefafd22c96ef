import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPLICA_APPLICATION_NAME } from '../../src/db/replicas';
import { Client, pause, type ServerProcess } from '../helpers/server-process';
import { startTopology, topologyMissing, type Topology } from '../helpers/topology';
import { seedStore, type Store } from './fixtures';
import { waitFor } from '../helpers/poll';

/**
 * Issue 44, read replicas, on a real streaming replica: the reference topology
 * (test/helpers/topology.ts: a primary of Debian's PostgreSQL 15 and a replica made from it with
 * `pg_basebackup -R`, PgBouncer in transaction mode in front of the primary, two instances with
 * DATABASE_REPLICA_URLS on the replica), with asynchronous replication so that pausing replay or
 * stopping the replica holds no write up. The instances are used directly, not through HAProxy:
 * what one instance knows of a person's writes, the other must too.
 * A fault test (npm run test:faults): it builds and stops clusters, which takes tens of seconds.
 */
if (topologyMissing) console.warn(`[faults] replicas skipped: ${topologyMissing}`);

let topology: Topology;
let server: ServerProcess;
let other: ServerProcess;
let store: Store;

beforeAll(async () => {
  if (topologyMissing) return;
  topology = await startTopology({
    synchronousReplica: false,
    // a lag limit no slow machine reaches while replay is paused on purpose below
    env: { DATABASE_REPLICA_MAX_LAG_MS: '60000' },
  });
  [server, other] = topology.instances;
  store = await seedStore(topology.primary.db, 2);
}, 300_000);

afterAll(async () => {
  await topology?.close();
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

const saleIdsIn = async (client: Client, saleId: string) => {
  const res = await client.get(`/api/sales/reports?search=${encodeURIComponent(saleId)}&limit=100`);
  expect(res.status).toBe(200);
  return (res.body as Report).data.sales.map((s) => s.saleId);
};

/** The report's SQL seen on one of the service's replica connections (idle ones show their last query). */
const reportQueryOnReplica = async () =>
  (
    await topology.replica
      .db('pg_stat_activity')
      .where('application_name', REPLICA_APPLICATION_NAME)
      .whereILike('query', '%sales%')
      .count<{ count: number }[]>('* as count')
  )[0].count > 0;

describe.skipIf(topologyMissing)('read replicas', () => {
  it('GET /api/health reports the primary, the replica by host:port with its lag and state, and the pool mode', async () => {
    const body = await waitFor('the replica healthy', async () => {
      const { body } = await health();
      return body.replicas[0]?.state === 'healthy' ? body : undefined;
    });
    expect(body).toMatchObject({
      status: 'healthy',
      database: 'connected',
      primary: { host: `127.0.0.1:${topology.pgbouncer.port}` },
      replicas: [{ host: `127.0.0.1:${topology.replica.port}`, state: 'healthy', lagMs: expect.any(Number) }],
      poolMode: 'transaction',
    });
    expect(body.replicas[0].lagMs).toBeGreaterThanOrEqual(0);
    expect(body.replicas[0].lagMs).toBeLessThanOrEqual(60_000);
  });

  it('the sales report is read from the replica: its connection shows in the replica’s pg_stat_activity', async () => {
    const admin = await new Client(server.baseUrl).signIn(store.admin.email);
    // signing in is a write: the admin's reads go to the replica once it has replayed it (the next check)
    await waitFor('a report read on the replica', async () => {
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
    await waitFor('a check after the sign-ins', async () => {
      const { body } = await health();
      const at = body.replicas[0].checkedAt;
      return at && Date.parse(at) > signedIn + 100 ? true : undefined;
    });
    await pause(2500);
    // replay stops: what the primary commits from now on is not on the replica, which stays healthy (lag under 60 s)
    await topology.replica.db.raw('SELECT pg_wal_replay_pause()');
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
      await topology.replica.db.raw('SELECT pg_wal_replay_resume()');
      await waitFor('the sale replayed', async () =>
        (await saleIdsIn(admin, saleId)).length === 1 ? true : undefined,
      );
    } finally {
      await topology.replica.db.raw('SELECT pg_wal_replay_resume()').catch(() => undefined);
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
    await topology.stopReplica();
    try {
      const down = await waitFor('the replica down', async () => {
        const answer = await health();
        return answer.body.replicas[0].state === 'down' ? answer : undefined;
      });
      expect(down.status).toBe(200);
      expect(down.body).toMatchObject({
        status: 'healthy',
        database: 'connected',
        replicas: [{ host: `127.0.0.1:${topology.replica.port}`, state: 'down', lagMs: null }],
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
      await topology.startReplica();
    }
    await waitFor('the replica healthy again', async () =>
      (await health()).body.replicas[0].state === 'healthy' ? true : undefined,
    );
    const alerts = await admin.get('/api/system/alerts');
    expect((alerts.body as { alerts: { type: string }[] }).alerts.map((a) => a.type)).not.toContain('replica_lagging');
  });
});
