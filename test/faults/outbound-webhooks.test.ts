import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster';
import { Client, startServer, type ServerProcess } from '../helpers/server-process';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';
import { seedStore, type Store } from './fixtures';
import { until } from '../helpers/poll';

// Issue 32: every instance runs an outbox delivery worker; over one database they share the work
// (FOR UPDATE SKIP LOCKED) and deliver each message once.
let cluster: PgCluster;
let a: ServerProcess;
let b: ServerProcess;
let store: Store;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver(() => ({ status: 200 }));
  cluster = await startPgCluster();
  store = await seedStore(cluster.db, 4);
  const env = { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1' };
  [a, b] = await Promise.all([startServer(cluster.url, env), startServer(cluster.url, env)]);
});

afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  await cluster?.destroy();
  await receiver?.close();
});

describe('outbound webhooks from two instances over one database', () => {
  it('each message is delivered once, whichever instance recorded the change or sent it', async () => {
    const admin = await new Client(a.baseUrl).signIn(store.admin.email);
    const endpoints: string[] = [];
    for (const path of ['/one', '/two', '/three']) {
      const created = await admin.post('/api/outbound-webhooks', {
        url: receiver.url(path),
        events: ['sale.created', 'ping'],
      });
      expect(created.status).toBe(201);
      endpoints.push((created.body as { id: string }).id);
    }
    const onA = await new Client(a.baseUrl).signIn(store.manager.email);
    const onB = await new Client(b.baseUrl).signIn(store.manager.email);
    const sales = 30;
    await Promise.all(
      Array.from({ length: sales }, async (_, i) => {
        const res = await (i % 2 ? onB : onA).post('/api/sales', {
          chargeCode: store.chargeCode,
          items: [{ itemId: store.itemIds[i % store.itemIds.length], quantity: 1 }],
          vatApplied: true,
        });
        expect(res.status).toBe(201);
      }),
    );
    for (const id of endpoints) expect((await admin.post(`/api/outbound-webhooks/${id}/ping`)).status).toBe(202);

    const expected = (sales + 1) * endpoints.length;
    await until(
      () => receiver.received,
      (list) => list.length >= expected,
      60_000,
    );
    const sent = await until(
      () => cluster.db('outbox_messages').where({ channel: 'webhook', status: 'sent' }),
      (rows) => rows.length >= expected,
      60_000,
    );
    expect(sent).toHaveLength(expected);
    const ids = receiver.received.map((d) => d.headers['x-stores-delivery'] as string);
    expect(ids).toHaveLength(expected);
    expect(new Set(ids).size).toBe(expected);
    expect(new Set(ids)).toEqual(new Set(sent.map((m) => m.id)));
    expect(sent.every((m) => m.attempts === 1)).toBe(true);
    // the ping of each endpoint came after its sales (one destination's messages go in order)
    for (const path of ['/one', '/two', '/three']) {
      const types = receiver.received.filter((d) => d.path === path).map((d) => d.body.type);
      expect(types).toEqual([...Array(sales).fill('sale.created'), 'ping']);
    }
  });
});
