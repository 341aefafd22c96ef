import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster';
import { Client, pause, startServer, type Answer, type ServerProcess } from '../helpers/server-process';
import { seedStore, type Store } from './fixtures';

/** src/db/knex.ts: the pool's size and how long a request waits for one of its connections */
const POOL_MAX = 10;
const ACQUIRE_TIMEOUT_MS = 4_000;
const CLIENT_TIMEOUT_MS = 30_000;

let cluster: PgCluster;
let server: ServerProcess;
let store: Store;
let client: Client;

beforeAll(async () => {
  cluster = await startPgCluster();
  store = await seedStore(cluster.db, 3);
  server = await startServer(cluster.url);
  client = await new Client(server.baseUrl, CLIENT_TIMEOUT_MS).signIn(store.manager.email);
});

afterAll(async () => {
  await server?.kill();
  await cluster?.destroy();
});

/**
 * Every statement on `table` waits while the test holds it (ACCESS EXCLUSIVE), so each request
 * that reads it is slow and keeps its pool connection; `requests` of them at once, the table
 * released after `holdMs`.
 */
async function slowRequests(table: string, requests: number, holdMs: number, call: (i: number) => Promise<Answer>) {
  const holder = await cluster.db.transaction();
  await holder.raw(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  const started = performance.now();
  const answers = Array.from({ length: requests }, (_, i) => call(i));
  await pause(holdMs);
  await holder.rollback();
  const released = performance.now() - started;
  return { answers: await Promise.all(answers), released };
}

const tally = (answers: Answer[]) =>
  answers.reduce<Record<number, number>>((acc, a) => {
    acc[a.status] = (acc[a.status] ?? 0) + 1;
    return acc;
  }, {});

describe('more concurrent slow requests than the pool holds', () => {
  it('the requests beyond the pool queue and are all served when the slowness ends before the acquire timeout', async () => {
    const { answers, released } = await slowRequests('items', 3 * POOL_MAX, 1_500, (i) =>
      client.get(`/api/items/${store.itemIds[i % 3]}`),
    );
    const slowest = Math.max(...answers.map((a) => a.ms));
    console.log(
      `[faults] pool exhaustion, slowness of ${Math.round(released)} ms: ${JSON.stringify(tally(answers))}, slowest ${Math.round(slowest)} ms`,
    );
    expect(tally(answers)).toEqual({ 200: 3 * POOL_MAX });
    expect(slowest).toBeLessThan(released + 2_000);
  });

  it('when it lasts longer, those waiting for a connection answer 503 with a message after the acquire timeout, those holding one are served; never a hang or a 500; the pool serves at once afterwards', async () => {
    const { answers, released } = await slowRequests('items', 3 * POOL_MAX, 7_000, (i) =>
      client.get(`/api/items/${store.itemIds[i % 3]}`),
    );
    const unavailable = answers.filter((a) => a.status === 503);
    const served = answers.filter((a) => a.status === 200);
    console.log(
      `[faults] pool exhaustion, slowness of ${Math.round(released)} ms: ${JSON.stringify(tally(answers))}; ` +
        `503s after ${Math.round(Math.min(...unavailable.map((a) => a.ms)))}-${Math.round(Math.max(...unavailable.map((a) => a.ms)))} ms`,
    );
    expect(served.length + unavailable.length).toBe(answers.length);
    expect(served.length).toBeGreaterThanOrEqual(POOL_MAX);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const a of unavailable) {
      expect(a.body).toEqual({ message: 'Service temporarily unavailable' });
      expect(a.ms).toBeGreaterThanOrEqual(ACQUIRE_TIMEOUT_MS - 100);
      expect(a.ms).toBeLessThan(released);
    }
    const after = await client.get(`/api/items/${store.itemIds[0]}`);
    expect(after.status).toBe(200);
    expect(after.ms).toBeLessThan(500);
  });

  it('the session store pool too: requests waiting for one of its connections answer 503, not 500, and it serves afterwards', async () => {
    const { answers, released } = await slowRequests('sessions', 20, 6_000, () => client.get('/api/auth/user'));
    console.log(
      `[faults] session pool exhaustion, slowness of ${Math.round(released)} ms: ${JSON.stringify(tally(answers))}`,
    );
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => [a.status, a.body, a.error])).toEqual(
      [],
    );
    for (const a of answers.filter((a) => a.status === 503))
      expect(a.body).toEqual({ message: 'Service temporarily unavailable' });
    const after = await client.get('/api/auth/user');
    expect(after.status).toBe(200);
  });
});
