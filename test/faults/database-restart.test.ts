import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster';
import { Client, pause, startServer, type Answer, type ServerProcess } from '../helpers/server-process';
import { seedStore, sellThroughQuote, type Store } from './fixtures';
import { ledgerProblems, NO_PROBLEMS } from './ledger';

type Kind = 'read' | 'stock' | 'sale' | 'health';
type Record = { kind: Kind; started: number; ended: number; answer: Answer };

const OUTAGE_MS = 5_000;
/** the client's patience: the service must answer (503 at worst) well within it */
const CLIENT_TIMEOUT_MS = 12_000;

let cluster: PgCluster;
let server: ServerProcess;
let store: Store;

beforeAll(async () => {
  cluster = await startPgCluster();
  store = await seedStore(cluster.db);
  server = await startServer(cluster.url);
});

afterAll(async () => {
  await server?.kill();
  await cluster?.destroy();
});

describe('PostgreSQL stopped (fast shutdown) for 5 s and started again under load', () => {
  it('answers 503 with a message during the outage (no hang, no 500), recovers within 2 s without a restart, and the ledger reconciles with what the clients saw succeed', async () => {
    const client = await new Client(server.baseUrl, CLIENT_TIMEOUT_MS).signIn(store.manager.email);
    const records: Record[] = [];
    let running = true;
    const t0 = performance.now();
    const now = () => performance.now() - t0;
    const track = async (kind: Kind, call: () => Promise<Answer>) => {
      const started = now();
      const answer = await call();
      records.push({ kind, started, ended: now(), answer });
      return answer;
    };
    let stockIns = 0;
    const sold: string[] = [];
    const pick = () => store.itemIds[Math.floor(Math.random() * store.itemIds.length)];

    const worker = async (kind: Exclude<Kind, 'health'>) => {
      while (running) {
        if (kind === 'read') await track('read', () => client.get(`/api/items/${pick()}`));
        else if (kind === 'stock') {
          const answer = await track('stock', () =>
            client.post(`/api/items/${pick()}/stock`, { type: 'in', quantity: 1, reason: 'faults' }),
          );
          if (answer.status === 200) stockIns += 1;
        } else {
          const a = pick();
          const b = store.itemIds[(store.itemIds.indexOf(a) + 1) % store.itemIds.length];
          const started = now();
          const result = await sellThroughQuote(client, store, a, b);
          records.push({ kind: 'sale', started, ended: now(), answer: result.answer });
          if (result.step === 'process' && result.answer.status === 200)
            sold.push((result.answer.body as { sale: { saleId: string } }).sale.saleId);
        }
        await pause(20);
      }
    };
    const health = async () => {
      while (running) {
        await track('health', () => client.get('/api/health'));
        await pause(100);
      }
    };
    const load = Promise.all([
      worker('read'),
      worker('read'),
      worker('stock'),
      worker('stock'),
      worker('sale'),
      worker('sale'),
      health(),
    ]);

    await pause(3_000);
    const stopAsked = now();
    await cluster.stop();
    const down = now();
    await pause(OUTAGE_MS);
    const startAsked = now();
    await cluster.start();
    const back = now();
    await pause(6_000);
    running = false;
    await load;

    const summary = (rs: Record[]) =>
      Object.entries(
        rs.reduce<{ [k: string]: number }>((acc, r) => {
          const key = `${r.kind} ${r.answer.status}`;
          acc[key] = (acc[key] ?? 0) + 1;
          return acc;
        }, {}),
      );
    // certainly down from the end of the stop until the start is asked: pg_ctl start -w returns a
    // moment after the database accepts connections, so requests just before `back` may succeed
    const during = records.filter((r) => r.started >= down && r.ended <= startAsked);
    const firstOk = (kind: Kind) =>
      records.find((r) => r.kind === kind && r.started >= back && r.answer.status === 200);
    const recovery = Object.fromEntries(
      (['health', 'read', 'stock', 'sale'] as const).map((kind) => [
        kind,
        Math.round((firstOk(kind)?.ended ?? Infinity) - back),
      ]),
    );
    console.log(
      `[faults] database restart: stop took ${Math.round(down - stopAsked)} ms; ${records.length} requests; ` +
        `during the outage ${JSON.stringify(summary(during))}; slowest answer ${Math.round(Math.max(...records.map((r) => r.answer.ms)))} ms; ` +
        `first success after the database was back (ms): ${JSON.stringify(recovery)}; ${sold.length} sales and ${stockIns} stock changes succeeded`,
    );

    // no hang, no 500: every request got an answer, each 200, or 503 with a message (a sale's save or process may also be 404 when its quote is gone)
    const bad = records.filter((r) => r.answer.status === 0 || (r.answer.status >= 500 && r.answer.status !== 503));
    expect(
      bad
        .map((r) => ({ kind: r.kind, status: r.answer.status, body: r.answer.body, error: r.answer.error }))
        .slice(0, 5),
    ).toEqual([]);
    for (const r of records.filter((r) => r.answer.status === 503)) {
      expect(
        (r.answer.body as { message?: string }).message ?? (r.answer.body as { status?: string }).status,
      ).toBeTruthy();
    }
    // during the outage, nothing but 503 (the health check says unhealthy), and there were requests then
    expect(during.length).toBeGreaterThan(10);
    expect(during.filter((r) => r.answer.status !== 503).map((r) => [r.kind, r.answer.status])).toEqual([]);
    // health: 200, then 503, then 200 again
    const healthStatuses = records.filter((r) => r.kind === 'health').map((r) => r.answer.status);
    expect(healthStatuses.filter((s, i) => s !== healthStatuses[i - 1])).toEqual([200, 503, 200]);
    // within 2 s of the database being back every kind of request succeeds, and keeps succeeding
    for (const kind of ['health', 'read', 'stock', 'sale'] as const) expect(recovery[kind], kind).toBeLessThan(2_000);
    const late = records.filter((r) => r.started >= back + 2_000);
    expect(late.filter((r) => r.answer.status !== 200).map((r) => [r.kind, r.answer.status, r.answer.body])).toEqual(
      [],
    );
    expect(server.child.exitCode).toBeNull();

    // the ledger: no half-written sale, and exactly what the clients saw succeed
    expect(await ledgerProblems(cluster.db)).toEqual(NO_PROBLEMS);
    const saleIds = await cluster.db('sales').orderBy('sale_id').pluck('sale_id');
    expect(saleIds).toEqual([...sold].sort());
    const manual = await cluster
      .db('stock_movements')
      .where({ reason: 'faults', type: 'in' })
      .count<{ count: number }[]>('* as count');
    expect(manual[0].count).toBe(stockIns);
  });
});
