import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster';
import { Client, connectionRefused, pause, startServer, type ServerProcess } from '../helpers/server-process';
import { seedStore, type Store } from './fixtures';
import { ledgerProblems, NO_PROBLEMS } from './ledger';

const DRAIN_SECONDS = 3;

let cluster: PgCluster;
let server: ServerProcess;
let store: Store;

beforeAll(async () => {
  cluster = await startPgCluster();
  store = await seedStore(cluster.db, 2);
  server = await startServer(cluster.url, { SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS) });
});

afterAll(async () => {
  await server?.kill();
  await cluster?.destroy();
});

describe(`SIGTERM with SHUTDOWN_DRAIN_SECONDS=${DRAIN_SECONDS} (a deploy behind a load balancer)`, () => {
  it('health answers 503 at once, requests sent within the drain window are served, a sale in flight at its end completes whole, then connections are refused and the process exits 0', async () => {
    const manager = await new Client(server.baseUrl, 30_000).signIn(store.manager.email);
    const sale = (itemId: number) =>
      manager.post('/api/sales', { chargeCode: store.chargeCode, items: [{ itemId, quantity: 1 }] });
    const [first, second] = store.itemIds;

    const sent = performance.now();
    server.child.kill('SIGTERM');
    let health = await manager.get('/api/health');
    while (health.status === 200 && performance.now() - sent < 2_000) health = await manager.get('/api/health');
    const unhealthyAfter = performance.now() - sent;
    expect(health).toMatchObject({
      status: 503,
      body: { status: 'unhealthy', database: 'connected', shuttingDown: true },
    });

    // within the window, on fresh connections as a load balancer's last requests would come
    await pause(500);
    const fresh = new Client(server.baseUrl, 30_000);
    fresh.cookie = manager.cookie;
    const [read, sold] = await Promise.all([fresh.get('/api/items'), sale(first)]);
    expect([read.status, sold.status]).toEqual([200, 201]);

    // a sale that starts inside the window and is still waiting (on a row lock) when it ends
    const holder = await cluster.db.transaction();
    await holder('items').where({ id: second }).forUpdate().select('id');
    const inFlight = sale(second);
    while (performance.now() - sent < DRAIN_SECONDS * 1000 + 500) await pause(50);
    expect(await connectionRefused(server.port)).toBe(true);
    await holder.rollback();
    expect((await inFlight).status).toBe(201);

    const [code] = await server.exited;
    const exitedAfter = performance.now() - sent;
    console.log(
      `[faults] drain: /api/health 503 after ${Math.round(unhealthyAfter)} ms; exited ${code} after ${Math.round(exitedAfter)} ms`,
    );
    expect(unhealthyAfter).toBeLessThan(500);
    expect(code).toBe(0);
    expect(exitedAfter).toBeGreaterThanOrEqual(DRAIN_SECONDS * 1000);
    expect(await ledgerProblems(cluster.db)).toEqual(NO_PROBLEMS);
    expect(Number((await cluster.db('sales').count<{ count: number }[]>('* as count'))[0].count)).toBe(2);
  });
});
