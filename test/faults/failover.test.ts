import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTBOX_NOTIFY_CHANNEL } from '../../src/modules/outbox/outbox.queries';
import { DIGEST_TIME_SETTING } from '../../src/modules/notifications/notifications.digest';
import { buildUser } from '../helpers/factories';
import { Client, pause, type Answer } from '../helpers/server-process';
import type { TestSmtp } from '../helpers/smtp';
import { topologyMissing, type Topology } from '../helpers/topology';
import type { Receiver } from '../helpers/webhook-receiver';
import { ledgerProblems, NO_PROBLEMS } from './ledger';
import { closeOutboxTopology, startOutboxTopology, type Store } from './fixtures';
import { waitFor } from '../helpers/poll';

/**
 * Issue 44's failover, on the reference topology (test/helpers/topology.ts) with a synchronous
 * replica, through HAProxy: under a load of direct sales, each with its own Idempotency-Key and
 * retried with the same key on a 503 as a real counter would, the primary is stopped, the replica
 * promoted and PgBouncer re-pointed (RELOAD), as docs/operations.md's failover does. The 15 s
 * answer and the 5 s recovery are the issue's contract, asserted as such; everything else is
 * checked on the new primary afterwards.
 */
if (topologyMissing) console.warn(`[faults] failover skipped: ${topologyMissing}`);

/** the issue: each request answered within 15 s while the primary is gone */
const ANSWER_BOUND_MS = 15_000;
/** the issue: serving again within 5 s of the new primary accepting writes */
const RECOVERY_BOUND_MS = 5_000;
const COUNTERS = 10;
/** from the primary's stop to the promotion */
const OUTAGE_MS = 12_000;
const STOCK = 100_000;

let topology: Topology;
let smtp: TestSmtp;
let receiver: Receiver;
let store: Store;

beforeAll(async () => {
  if (topologyMissing) return;
  ({ topology, smtp, receiver, store } = await startOutboxTopology({ instances: 2, items: 4, stock: STOCK }));
}, 300_000);

afterAll(() => closeOutboxTopology({ topology, smtp, receiver }));

/** One request of a sale: what it was answered, when (performance.now() at the answer), for which key. */
type Attempt = Answer & { key: string; counter: number; at: number; retryAfter: string | null };
/** A sale as the client sees it: its key, its line, and the 201 it finally got (or its last answer). */
type Sale = { key: string; itemId: number; final: Attempt };

/** Answers that a client sends again, with the same key: the service asks it to (503, 409 "being recorded") or none came. */
const retried = (a: Answer) => a.status === 503 || a.status === 0 || a.status === 409;

/**
 * One counter selling one unit at a time until told to stop; every attempt recorded. A refused
 * sale is sent again with its key after Retry-After (1 s when none) until it gets a final answer.
 */
async function counterLoop(counter: number, client: Client, stop: { now: boolean }, attempts: Attempt[]) {
  const sales: Sale[] = [];
  while (!stop.now) {
    const key = randomUUID();
    const itemId = store.itemIds[(counter + sales.length) % store.itemIds.length];
    const body = { chargeCode: store.chargeCode, items: [{ itemId, quantity: 1 }] };
    for (let tries = 0; ; tries += 1) {
      const answer = await client.post('/api/sales', body, { 'Idempotency-Key': key });
      const attempt: Attempt = {
        ...answer,
        key,
        counter,
        at: performance.now(),
        retryAfter: answer.headers?.get('retry-after') ?? null,
      };
      attempts.push(attempt);
      if (!retried(answer) || tries >= 120) {
        sales.push({ key, itemId, final: attempt });
        break;
      }
      await pause(Number(attempt.retryAfter ?? 1) * 1000);
    }
  }
  return sales;
}

const tally = (answers: Answer[]) =>
  answers.reduce<Record<string, number>>((acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }), {});

describe.skipIf(topologyMissing)('a failover under sale load, through HAProxy (synchronous replica)', () => {
  it('stop the primary, promote the replica, re-point PgBouncer: only 201, 409 or 503, each within 15 s; serving again within 5 s; no sale lost, none twice; the outbox, the jobs and the reports carry on', async () => {
    const admin = await new Client(topology.url).signIn(store.admin.email);
    // the day's low-stock digest due from midnight: the job that runs it each minute shows the scheduler working
    expect(
      (await admin.request('PUT', `/api/settings/${DIGEST_TIME_SETTING}`, { value: { time: '00:00' } })).status,
    ).toBe(200);
    // signing in is a write: every counter signs in before the primary goes
    const people = await Promise.all(
      Array.from({ length: COUNTERS }, () => buildUser(topology.primary.db, { role: 'manager' })),
    );
    const clients = await Promise.all(people.map((p) => new Client(topology.url, 120_000).signIn(p.email)));

    const attempts: Attempt[] = [];
    const stop = { now: false };
    const started = performance.now();
    const load = Promise.all(clients.map((client, i) => counterLoop(i, client, stop, attempts)));
    let t0: number, t1: number;
    try {
      await pause(3_000);
      await topology.stopPrimary();
      t0 = performance.now();
      // an operator notices before promoting: longer than PgBouncer's query_wait_timeout (10 s),
      // so requests meet the missing primary for as long as the 15 s bound allows for
      await pause(OUTAGE_MS);
      await topology.promoteReplica();
      await topology.replica.db.raw('CREATE TABLE failover_probe (at timestamptz DEFAULT now())');
      await topology.replica.db('failover_probe').insert({});
      t1 = performance.now();
      await topology.repointPgBouncer(true);
      const repointed = performance.now();
      await waitFor('a sale answered 201 after the promotion', async () =>
        attempts.some((a) => a.status === 201 && a.at > t1) ? true : undefined,
      );
      await pause(5_000);
      stop.now = true;
      const sales = (await load).flat();
      const t2 = Math.min(...attempts.filter((a) => a.status === 201 && a.at > t1).map((a) => a.at));
      const slowest = attempts.reduce((a, b) => (b.ms > a.ms ? b : a));
      const during = attempts.filter((a) => a.at >= t0 && a.at <= t2);
      console.log(
        `[faults] failover: ${sales.length} sales in ${((performance.now() - started) / 1000).toFixed(1)} s, ` +
          `${attempts.length} requests ${JSON.stringify(tally(attempts))} (between the stop and the first 201 after: ${JSON.stringify(tally(during))}); ` +
          `stop to promoted ${((t1 - t0) / 1000).toFixed(1)} s, promoted to re-pointed ${((repointed - t1) / 1000).toFixed(2)} s, ` +
          `promoted to first 201 (T2-T1) ${((t2 - t1) / 1000).toFixed(2)} s; slowest request ${(slowest.ms / 1000).toFixed(2)} s (${slowest.status}); ` +
          `${new Set(attempts.filter((a) => a.status !== 201).map((a) => a.key)).size} keys sent more than once; ` +
          `503s said ${JSON.stringify([...new Set(attempts.filter((a) => a.status === 503).map((a) => (a.body as { message?: string }).message))])}`,
      );

      const unexpected = attempts.filter((a) => ![201, 409, 503].includes(a.status));
      expect(
        unexpected.map((a) => `${a.status} ${a.error ?? JSON.stringify(a.body)}`),
        'only 201, 409 or 503 during the failover',
      ).toEqual([]);
      expect(attempts.filter((a) => a.status === 503 && !a.retryAfter).length, 'every 503 carries Retry-After').toBe(0);
      expect(
        attempts.filter((a) => a.ms > ANSWER_BOUND_MS).map((a) => `${a.status} after ${Math.round(a.ms)} ms`),
        `the issue's contract: every request answered within ${ANSWER_BOUND_MS / 1000} s`,
      ).toEqual([]);
      expect(
        Math.round(t2 - t1),
        `the issue's contract: serving again within ${RECOVERY_BOUND_MS / 1000} s of the new primary accepting writes`,
      ).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
      expect(attempts.filter((a) => a.status === 503).length, 'the failover was felt').toBeGreaterThan(0);

      // --- on the new primary: every acknowledged sale, once per key, with its line and movement
      const db = topology.replica.db;
      expect(sales.filter((s) => s.final.status !== 201).map((s) => s.final.status)).toEqual([]);
      const saleIdOf = (a: Attempt) => (a.body as { sale: { id: number } }).sale.id;
      for (const key of new Set(attempts.filter((a) => a.status === 201).map((a) => a.key))) {
        const ids = new Set(attempts.filter((a) => a.key === key && a.status === 201).map(saleIdOf));
        expect([...ids], `every 201 for key ${key} names the same sale`).toHaveLength(1);
      }
      const acknowledged = new Map(sales.map((s) => [saleIdOf(s.final), s]));
      const userIds = (await db('users')
        .whereIn(
          'email',
          people.map((p) => p.email),
        )
        .pluck('id')) as string[];
      const recorded = await db('sales').whereIn('processed_by', userIds).pluck('id');
      expect(
        recorded.map(Number).sort((a, b) => a - b),
        'the sales recorded are exactly those answered 201',
      ).toEqual([...acknowledged.keys()].sort((a, b) => a - b));
      const keys = await db('sale_idempotency_keys').whereIn('user_id', userIds).select('key', 'sale_id');
      expect(keys.map((k) => [k.key, Number(k.sale_id)]).sort(), 'each Idempotency-Key made one sale').toEqual(
        sales.map((s) => [s.key, saleIdOf(s.final)]).sort(),
      );
      const lines = await db('sale_items')
        .whereIn('sale_id', [...acknowledged.keys()])
        .select('sale_id', 'item_id', 'quantity');
      expect(lines.map((l) => [Number(l.sale_id), l.item_id, Number(l.quantity)]).sort()).toEqual(
        [...acknowledged].map(([id, s]) => [id, s.itemId, 1]).sort(),
      );
      const movements = await db('stock_movements')
        .where({ reference_type: 'sale' })
        .whereIn(
          'reference_id',
          sales.map((s) => (s.final.body as { sale: { saleId: string } }).sale.saleId),
        )
        .count<{ n: string }[]>({ n: '*' });
      expect(Number(movements[0].n)).toBe(acknowledged.size);
      const stock = await db('items').whereIn('id', store.itemIds).orderBy('id').select('id', 'current_stock');
      expect(stock.map((i) => [i.id, Number(i.current_stock)])).toEqual(
        stock.map((i) => [i.id, STOCK - sales.filter((s) => s.itemId === i.id).length]),
      );
      expect(await ledgerProblems(db)).toEqual(NO_PROBLEMS);
    } finally {
      stop.now = true;
      await load;
    }

    // --- after: the health report, the reports on the promoted node, the outbox and the jobs
    for (const instance of topology.instances) {
      const health = await waitFor('the promoted node reported no longer a replica', async () => {
        const res = await fetch(`${instance.baseUrl}/api/health`);
        const body = (await res.json()) as { status: string; replicas: { host: string; state: string }[] };
        return res.status === 200 && body.replicas[0]?.state === 'down' ? body : undefined;
      });
      // DATABASE_REPLICA_URLS still names the promoted node, now the primary: skipped as a replica
      expect(health).toMatchObject({
        status: 'healthy',
        database: 'connected',
        primary: { host: `127.0.0.1:${topology.pgbouncer.port}` },
        replicas: [{ host: `127.0.0.1:${topology.replica.port}`, state: 'down' }],
      });
    }
    const seller = await new Client(topology.url).signIn(store.manager.email);
    for (const url of ['/api/sales/reports', '/api/sales/reports?format=csv', `/api/items/${store.itemIds[0]}`])
      expect((await admin.get(url)).status, url).toBe(200);

    const listening = await waitFor('a LISTEN on the new primary from each instance', async () => {
      const n = Number(
        (
          await topology.replica
            .db('pg_stat_activity')
            .where({ query: `LISTEN ${OUTBOX_NOTIFY_CHANNEL}` })
            .count<{ n: string }[]>({ n: '*' })
        )[0].n,
      );
      return n >= topology.instances.length ? n : undefined;
    });
    const hook = await admin.post('/api/outbound-webhooks', {
      url: receiver.url('/failover'),
      events: ['sale.created'],
    });
    expect(hook.status).toBe(201);
    const sold = await seller.post(
      '/api/sales',
      { chargeCode: store.chargeCode, items: [{ itemId: store.itemIds[0], quantity: 1 }] },
      { 'Idempotency-Key': randomUUID() },
    );
    expect(sold.status).toBe(201);
    const { id, saleId } = (sold.body as { sale: { id: number; saleId: string } }).sale;
    const recipient = await seller.request('PATCH', `/api/sales/${id}/recipient`, {
      deliveredTo: 'Failover test',
      deliveredToEmail: store.manager.email,
      emailReceipt: true,
    });
    expect(recipient.status).toBe(200);
    const deliveries = () =>
      receiver.received.filter((d) => d.path === '/failover' && JSON.stringify(d.body).includes(saleId));
    const receipts = () => smtp.to(store.manager.email).filter((m) => `${m.subject} ${m.text}`.includes(saleId));
    await waitFor('the webhook and the email delivered', async () =>
      deliveries().length > 0 && receipts().length > 0 ? true : undefined,
    );
    // both instances poll their outbox each second: several polls more, then count again
    await pause(5_000);
    expect([deliveries().length, receipts().length]).toEqual([1, 1]);

    // the digest job: its record removed on the new primary, the next minute's run writes it again
    const cleared = new Date();
    await topology.replica.db('email_runs').where({ name: 'low-stock-digest' }).delete();
    const ran = await waitFor(
      'the low-stock digest job run on the new primary',
      async () => {
        const row = await topology.replica.db('email_runs').where({ name: 'low-stock-digest' }).first();
        return row && row.last_run_at >= cleared ? (row.last_run_at as Date) : undefined;
      },
      { ms: 100_000 },
    );
    console.log(
      `[faults] failover: ${listening} LISTEN backends on the new primary; digest job ran at ${ran.toISOString()}`,
    );
  }, 420_000);
});
