import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPLICA_APPLICATION_NAME } from '../../src/db/replicas';
import { buildUser } from '../helpers/factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { Client, pause, type Answer } from '../helpers/server-process';
import type { TestSmtp } from '../helpers/smtp';
import { topologyMissing, type Topology } from '../helpers/topology';
import type { Receiver } from '../helpers/webhook-receiver';
import { ledgerProblems, NO_PROBLEMS } from './ledger';
import { closeOutboxTopology, sessionId, startOutboxTopology, type Store } from './fixtures';
import { waitFor } from '../helpers/poll';

/**
 * Issue 44's reference deployment, for real (test/helpers/topology.ts): HAProxy in front of two
 * instances, PgBouncer (`stores` in transaction mode, `stores_direct` in session mode) in front of a
 * primary with a synchronous streaming replica, the reports on that replica. Everything goes
 * through HAProxy's URL unless a test names an instance. Checks are made in the primary.
 * The machine is slow and shared: every wait polls with a generous deadline, nothing is timed.
 */
if (topologyMissing) console.warn(`[faults] topology skipped: ${topologyMissing}`);

let topology: Topology;
let smtp: TestSmtp;
let receiver: Receiver;
let store: Store;

beforeAll(async () => {
  if (topologyMissing) return;
  ({ topology, smtp, receiver, store } = await startOutboxTopology({ items: 2 }));
}, 300_000);

afterAll(() => closeOutboxTopology({ topology, smtp, receiver }));

type Health = { status: string; replicas: { host: string; state: string; lagMs: number | null }[] };
const healthOf = async (baseUrl: string) => {
  const res = await fetch(`${baseUrl}/api/health`);
  return { status: res.status, body: (await res.json()) as Health };
};
/** Sessions started per instance, as HAProxy counts them (`show stat`: pxname, svname, ..., stot). */
const sessionsPerInstance = async () =>
  (await topology.haproxy('show stat'))
    .split('\n')
    .filter((line) => line.startsWith('stores,app'))
    .map((line) => Number(line.split(',')[7]));
const saleOf = (answer: Answer) => (answer.body as { sale: { id: number; saleId: string } }).sale;

describe.skipIf(topologyMissing)('the reference topology, through HAProxy', () => {
  it('serves through HAProxy, both instances on PgBouncer in transaction mode, the replica synchronous and healthy', async () => {
    for (const instance of topology.instances) {
      const { status, body } = await waitFor('the replica checked healthy', async () => {
        const answer = await healthOf(instance.baseUrl);
        return answer.body.replicas[0]?.state === 'healthy' ? answer : undefined;
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({ database: 'connected', poolMode: 'transaction' });
    }
    expect((await healthOf(topology.url)).status).toBe(200);
    const replication = await topology.primary.db.raw<{ rows: { application_name: string; sync_state: string }[] }>(
      'SELECT application_name, sync_state FROM pg_stat_replication',
    );
    expect(replication.rows).toEqual([{ application_name: 'replica1', sync_state: 'sync' }]);
    const pools = await topology.pgbouncer.admin('SHOW DATABASES');
    expect(pools.filter((p) => p.name === 'stores' || p.name === 'stores_direct')).toHaveLength(2);
  });

  it('20 counters selling the last units at once across both instances: no oversell, no 500', async () => {
    const units = 10;
    const items = await Promise.all([1, 2, 3].map(() => buildStockedItem(topology.primary.db, units)));
    const before = await sessionsPerInstance();
    // 20 people, each at a counter with its own connection to HAProxy, spread over the instances
    // (leastconn); one account signing in 20 times at once would meet the sign-in limits instead
    const people = await Promise.all(
      Array.from({ length: 20 }, () => buildUser(topology.primary.db, { role: 'manager' })),
    );
    const counters = await Promise.all(people.map((p) => new Client(topology.url, 60_000).signIn(p.email)));
    // 40 attempts of one unit on each item of 10 units: every unit is sold, 30 attempts find none
    // (400 with the spec's message, service-interface.md: quote processing and draft errors)
    const answers = (
      await Promise.all(
        counters.map(async (counter) => {
          const mine: Answer[] = [];
          for (let round = 0; round < 2; round += 1)
            for (const item of items)
              mine.push(
                await counter.post('/api/sales', {
                  chargeCode: store.chargeCode,
                  items: [{ itemId: item.id, quantity: 1 }],
                }),
              );
          return mine;
        }),
      )
    ).flat();
    const after = await sessionsPerInstance();
    const tally = answers.reduce<Record<number, number>>(
      (acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }),
      {},
    );
    console.log(
      `[faults] topology: 120 sales of the last 30 units: ${JSON.stringify(tally)}; sessions per instance ${after.map((n, i) => n - before[i])}`,
    );
    expect(tally).toEqual({ 201: items.length * units, 400: items.length * (40 - units) });
    for (const refused of answers.filter((a) => a.status === 400))
      expect((refused.body as { message: string }).message).toMatch(/^Insufficient stock for item /);
    expect(after.every((n, i) => n > before[i])).toBe(true);

    const db = topology.primary.db;
    const ids = items.map((i) => i.id);
    expect((await db('items').whereIn('id', ids).orderBy('id').pluck('current_stock')).map(Number)).toEqual(
      ids.map(() => 0),
    );
    const sold = await db('sale_items')
      .whereIn('item_id', ids)
      .groupBy('item_id')
      .orderBy('item_id')
      .select('item_id')
      .sum({ sold: 'quantity' });
    expect(sold.map((r) => Number(r.sold))).toEqual(ids.map(() => units));
    const lines = await db('sale_items').whereIn('item_id', ids).count<{ n: string }[]>({ n: '*' });
    const movements = await db('stock_movements')
      .whereIn('item_id', ids)
      .where({ reference_type: 'sale' })
      .count<{ n: string }[]>({ n: '*' });
    expect(Number(movements[0].n)).toBe(Number(lines[0].n));
    expect(await ledgerProblems(db)).toEqual(NO_PROBLEMS);
  });

  it('a quote saved and processed on one instance is seen by the other', async () => {
    const [a, b] = topology.instances;
    const onA = await new Client(a.baseUrl).signIn(store.manager.email);
    const onB = Object.assign(new Client(b.baseUrl), { cookie: onA.cookie });
    const saved = await onA.post('/api/sales/quotes', {
      chargeCode: store.chargeCode,
      sessionId: sessionId(),
      items: [{ itemId: store.itemIds[0], quantity: 2 }],
    });
    expect(saved.status).toBe(200);
    const quoteId = (saved.body as { quote: { id: number } }).quote.id;
    const draft = await onB.get(`/api/sales/quotes/${quoteId}`);
    expect(draft.status).toBe(200);
    expect(draft.body).toMatchObject({ status: 'draft', items: [{ itemId: store.itemIds[0] }] });

    const processed = await onA.post(`/api/sales/quotes/${quoteId}/process`, {});
    expect(processed.status).toBe(200);
    const sale = saleOf(processed);
    const seen = await onB.get(`/api/sales/${sale.id}`);
    expect([seen.status, (seen.body as { saleId: string }).saleId]).toEqual([200, sale.saleId]);
    // processed on A: B no longer offers the draft
    expect((await onB.get(`/api/sales/quotes/${quoteId}`)).status).toBe(404);
  });

  it('an email and a webhook queued on one instance are delivered once, with both instances running their outbox', async () => {
    const [a] = topology.instances;
    const admin = await new Client(topology.url).signIn(store.admin.email);
    const hook = await admin.post('/api/outbound-webhooks', {
      url: receiver.url('/topology'),
      events: ['sale.created'],
    });
    expect(hook.status).toBe(201);
    const onA = await new Client(a.baseUrl).signIn(store.manager.email);
    const sold = await onA.post('/api/sales', {
      chargeCode: store.chargeCode,
      items: [{ itemId: store.itemIds[0], quantity: 1 }],
    });
    expect(sold.status).toBe(201);
    const sale = saleOf(sold);
    // the receipt: emailed to the seller's own address (a recipient domain: an active user's)
    const recipient = await onA.request('PATCH', `/api/sales/${sale.id}/recipient`, {
      deliveredTo: 'Counter test',
      deliveredToEmail: store.manager.email,
      emailReceipt: true,
    });
    expect(recipient.status).toBe(200);

    const deliveries = () =>
      receiver.received.filter((d) => d.path === '/topology' && JSON.stringify(d.body).includes(sale.saleId));
    const receipts = () => smtp.to(store.manager.email).filter((m) => `${m.subject} ${m.text}`.includes(sale.saleId));
    await waitFor('the webhook and the email delivered', async () =>
      deliveries().length > 0 && receipts().length > 0 ? true : undefined,
    );
    // every instance polls its outbox each second: let each poll several times more, then count again
    await pause(8_000);
    expect(deliveries()).toHaveLength(1);
    expect(receipts()).toHaveLength(1);
    const messages = await topology.primary
      .db('outbox_messages')
      .where({ status: 'sent' })
      .whereIn('channel', ['webhook', 'email'])
      .andWhere((q) => q.whereRaw('payload::text LIKE ?', [`%${sale.saleId}%`]));
    expect(messages.map((m) => [m.channel, m.attempts]).sort()).toEqual([
      ['email', 1],
      ['webhook', 1],
    ]);
  });

  it("the sales report is read on the replica, and a person's own fresh sale is in their report at once", async () => {
    const admin = await new Client(topology.url).signIn(store.admin.email);
    const reportOnReplica = async () =>
      Number(
        (
          await topology.replica
            .db('pg_stat_activity')
            .where('application_name', REPLICA_APPLICATION_NAME)
            .whereILike('query', '%sales%')
            .count<{ n: string }[]>({ n: '*' })
        )[0].n,
      ) > 0;
    // signing in is a write: the admin's reports go to the replica once a check saw it replayed
    await waitFor('a report read on the replica', async () => {
      expect((await admin.get('/api/sales/reports')).status).toBe(200);
      return (await reportOnReplica()) || undefined;
    });

    const manager = await new Client(topology.url).signIn(store.manager.email);
    const sold = await manager.post('/api/sales', {
      chargeCode: store.chargeCode,
      items: [{ itemId: store.itemIds[1], quantity: 1 }],
    });
    expect(sold.status).toBe(201);
    const { saleId } = saleOf(sold);
    const report = await manager.get(`/api/sales/reports?search=${encodeURIComponent(saleId)}&limit=100`);
    expect(report.status).toBe(200);
    expect((report.body as { data: { sales: { saleId: string }[] } }).data.sales.map((s) => s.saleId)).toEqual([
      saleId,
    ]);
  });

  it('a replica stopped changes nothing but the health figures (a write waits for it, synchronous); started again it is healthy', async () => {
    const admin = await new Client(topology.url).signIn(store.admin.email);
    const manager = await new Client(topology.url).signIn(store.manager.email);
    // signing in is a write, which would wait for the stopped replica: before it stops
    const patient = await new Client(topology.url, 120_000).signIn(store.manager.email);
    const sold = await manager.post('/api/sales', {
      chargeCode: store.chargeCode,
      items: [{ itemId: store.itemIds[0], quantity: 1 }],
    });
    expect(sold.status).toBe(201);
    const { saleId } = saleOf(sold);
    await topology.stopReplica();
    let waiting: Promise<Answer> | undefined;
    try {
      for (const instance of topology.instances) {
        const down = await waitFor('the replica down', async () => {
          const answer = await healthOf(instance.baseUrl);
          return answer.body.replicas[0].state === 'down' ? answer : undefined;
        });
        expect(down.status).toBe(200);
        expect(down.body).toMatchObject({
          status: 'healthy',
          replicas: [{ host: `127.0.0.1:${topology.replica.port}`, state: 'down', lagMs: null }],
        });
      }
      // reads, reports included, answer from the primary, through HAProxy
      for (const client of [manager, admin]) {
        const report = await client.get(`/api/sales/reports?search=${encodeURIComponent(saleId)}&limit=100`);
        expect(report.status).toBe(200);
        expect((report.body as { data: { sales: { saleId: string }[] } }).data.sales.map((s) => s.saleId)).toEqual([
          saleId,
        ]);
        expect((await client.get(`/api/items/${store.itemIds[0]}`)).status).toBe(200);
      }
      const csv = await admin.get('/api/sales/reports?format=csv');
      expect([csv.status, String(csv.body).includes(saleId)]).toEqual([200, true]);
      // a sale now: its COMMIT waits for the synchronous replica (deploy/postgresql.primary.conf)
      waiting = patient.post('/api/sales', {
        chargeCode: store.chargeCode,
        items: [{ itemId: store.itemIds[1], quantity: 1 }],
      });
      await waitFor('the sale waiting for the synchronous replica', async () => {
        const waits = await topology.primary
          .db('pg_stat_activity')
          .where({ wait_event: 'SyncRep' })
          .count<{ n: string }[]>({ n: '*' });
        return Number(waits[0].n) > 0 || undefined;
      });
    } finally {
      await topology.startReplica();
    }
    for (const instance of topology.instances)
      await waitFor('the replica healthy again', async () =>
        (await healthOf(instance.baseUrl)).body.replicas[0].state === 'healthy' ? true : undefined,
      );
    expect((await waiting).status).toBe(201);
  });

  it("a backup and a restore through DATABASE_DIRECT_URL, PgBouncer's session pool", async () => {
    const admin = await new Client(topology.url, 180_000).signIn(store.admin.email);
    const manager = await new Client(topology.url).signIn(store.manager.email);
    const direct = async () => {
      const row = (await topology.pgbouncer.admin('SHOW STATS')).find((r) => r.database === 'stores_direct')!;
      return { sent: Number(row.total_sent), received: Number(row.total_received) };
    };
    const beforeBackup = await direct();
    const backup = await admin.post('/api/backups');
    expect(backup.status).toBe(201);
    const { filename } = backup.body as { filename: string };
    const size = (await fs.stat(path.join(topology.dataDir, 'backups', filename))).size;
    // pg_dump read the whole database through stores_direct: at least the (compressed) file's bytes
    const dumped = (await direct()).sent - beforeBackup.sent;
    expect(dumped).toBeGreaterThanOrEqual(size);

    const kept = await topology.primary.db('sales').pluck('sale_id');
    const later = await manager.post('/api/sales', {
      chargeCode: store.chargeCode,
      items: [{ itemId: store.itemIds[0], quantity: 1 }],
    });
    expect(later.status).toBe(201);
    const beforeRestore = await direct();
    const restored = await admin.post(`/api/backups/${encodeURIComponent(filename)}/restore`);
    expect(restored.status).toBe(200);
    // pg_restore sent the database to the primary through stores_direct: far more up than down
    const afterRestore = await direct();
    const up = afterRestore.received - beforeRestore.received;
    const down = afterRestore.sent - beforeRestore.sent;
    console.log(
      `[faults] topology: backup ${size} bytes; through stores_direct, pg_dump read ${dumped} bytes, pg_restore sent ${up} (and read ${down})`,
    );
    expect(up).toBeGreaterThan(down);
    expect((await topology.primary.db('sales').pluck('sale_id')).sort()).toEqual(kept.sort());
    expect(await ledgerProblems(topology.primary.db)).toEqual(NO_PROBLEMS);
    // the restore replaced the sessions too: each instance serves a new one
    for (const instance of topology.instances) {
      const counter = await new Client(instance.baseUrl).signIn(store.manager.email);
      const sale = await counter.post('/api/sales', {
        chargeCode: store.chargeCode,
        items: [{ itemId: store.itemIds[1], quantity: 1 }],
      });
      expect(sale.status).toBe(201);
    }
  });
});
