import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { startOutboxDelivery } from '../src/jobs/outbox-delivery';
import { createLogger } from '../src/logger';
import { backupScheduleService } from '../src/modules/backups/backups.schedule';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import { buildStockedItem } from './helpers/inventory-factories';
import { buildOrder, buildSupplier } from './helpers/purchasing-factories';
import { buildChargeCode } from './helpers/sales-factories';
import { startReceiver, type Receiver, type ReceivedDelivery } from './helpers/webhook-receiver';
import { until } from './helpers/poll';

type Delivery = { id: string; status: string; attempts: number; lastError: string | null; eventId: string };
type OutboxPage = { messages: { id: string; destination: string }[]; pagination: object };

const ALL_EVENTS = [
  'sale.created',
  'sale.refunded',
  'sale.paid',
  'stock.low',
  'order.received',
  'backup.failed',
  'stocktake.posted',
  'ping',
];

let t: TestApp;
let admin: supertest.Agent;
let adminEmail: string;
let manager: supertest.Agent;
let code: string;
let receiver: Receiver;
/** what the receiver answers next (200 unless a test says otherwise) */
const answers: ((d: ReceivedDelivery) => { status: number; body?: string; headers?: Record<string, string> })[] = [];

beforeAll(async () => {
  receiver = await startReceiver((d) => (answers.shift() ?? (() => ({ status: 200 })))(d));
  t = await testApp({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1' }, { deliverOutbox: true });
  const adminUser = await buildUser(t.db, { role: 'admin' });
  adminEmail = adminUser.email;
  admin = await t.loginAs(adminUser);
  manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  code = (await buildChargeCode(t.db)).code;
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/** An endpoint on the receiver subscribed to the events; the receiver verifies with its secret. */
async function endpoint(events = ALL_EVENTS, path = '/hook') {
  const res = await admin
    .post('/api/outbound-webhooks')
    .send({ url: receiver.url(path), events })
    .expect(201);
  receiver.useSecret(res.body.secret);
  return res.body as { id: string; secret: string };
}

const deliveredOf = (type: string, path = '/hook') =>
  receiver.received.filter((d) => d.body.type === type && d.path === path);
const waitFor = (type: string, n = 1, path = '/hook') =>
  until(
    () => deliveredOf(type, path),
    (list) => list.length >= n,
  );

describe('the outbound webhooks admin API', () => {
  it('201 shows the secret once; the list, the record and a change never show it', async () => {
    const res = await admin
      .post('/api/outbound-webhooks')
      .send({ url: receiver.url('/admin'), events: ['sale.created', 'stock.low'], description: 'Finance' })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      url: receiver.url('/admin'),
      events: ['sale.created', 'stock.low'],
      description: 'Finance',
      active: true,
      secret: expect.stringMatching(/^whsec_[\w-]{40,}$/),
      createdAt: expect.any(String),
    });
    const id = res.body.id;
    const list = await admin.get('/api/outbound-webhooks').expect(200);
    expect(list.body.find((w: { id: string }) => w.id === id)).toMatchObject({
      id,
      description: 'Finance',
      active: true,
    });
    expect(JSON.stringify(list.body)).not.toContain(res.body.secret);
    const one = await admin.get(`/api/outbound-webhooks/${id}`).expect(200);
    expect(one.body).not.toHaveProperty('secret');

    const changed = await admin
      .patch(`/api/outbound-webhooks/${id}`)
      .send({ events: ['sale.paid'], description: null, active: false })
      .expect(200);
    expect(changed.body).toMatchObject({ events: ['sale.paid'], description: null, active: false });

    const rotated = await admin.post(`/api/outbound-webhooks/${id}/rotate-secret`).expect(200);
    expect(rotated.body).toEqual({ id, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.body.secret).not.toBe(res.body.secret);
    const audit = await t.db('audit_log').where({ entity_type: 'outbound_webhook', entity_id: id });
    expect(JSON.stringify(audit)).not.toContain(res.body.secret);
    expect(JSON.stringify(audit)).not.toContain(rotated.body.secret);

    await admin.delete(`/api/outbound-webhooks/${id}`).expect(204);
    await admin.get(`/api/outbound-webhooks/${id}`).expect(404);
  });

  it('400 for an unknown event name, naming it', async () => {
    const res = await admin
      .post('/api/outbound-webhooks')
      .send({ url: receiver.url(), events: ['sale.created', 'sale.exploded'] })
      .expect(400);
    expect(res.body.errors).toEqual([{ field: 'events.1', message: expect.stringContaining('must be one of') }]);
  });

  it('400 naming url for loopback, private, link-local, metadata and unspecified addresses, and for http:// to a public one', async () => {
    for (const url of [
      'https://10.1.2.3/hook',
      'https://192.168.0.10/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://127.0.0.2/hook',
      'https://0.0.0.0/hook',
      'https://100.64.0.1/hook',
      'https://[::1]/hook',
      'https://[fe80::1]/hook',
      'https://[fd00:ec2::254]/hook',
      'https://[::ffff:10.0.0.1]/hook',
      'https://[::ffff:169.254.169.254]/hook',
      'https://[::]/hook',
      // IPv6 ranges embedding an IPv4 address (issue 40, finding 6)
      'https://[::127.0.0.1]/hook',
      'https://[::7f00:1]/hook',
      'https://[::808:808]/hook',
      'https://[2002:7f00:1::1]/hook',
      'https://[2001::1]/hook',
      'https://[64:ff9b::a9fe:a9fe]/hook',
      'https://[64:ff9b:1::808:808]/hook',
      'http://93.184.216.34/hook',
      'ftp://93.184.216.34/hook',
    ]) {
      const res = await admin.post('/api/outbound-webhooks').send({ url, events: ['ping'] });
      expect([url, res.status]).toEqual([url, 400]);
      expect(res.body.errors).toEqual([{ field: 'url', message: expect.any(String) }]);
    }
    const patched = await admin
      .patch(`/api/outbound-webhooks/${(await endpoint(['ping'], '/patched')).id}`)
      .send({ url: 'https://10.0.0.1/' })
      .expect(400);
    expect(patched.body.errors[0].field).toBe('url');
  });

  it('an allow-listed CIDR admits its private addresses, over http too', async () => {
    const other = await testApp({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1, 10.20.0.0/16' });
    try {
      const agent = await other.loginAs(await buildUser(other.db, { role: 'admin' }));
      await agent
        .post('/api/outbound-webhooks')
        .send({ url: 'http://10.20.3.4:8080/in', events: ['ping'] })
        .expect(201);
      await agent
        .post('/api/outbound-webhooks')
        .send({ url: 'https://[::ffff:10.20.0.9]/in', events: ['ping'] })
        .expect(201);
      const refused = await agent.post('/api/outbound-webhooks').send({ url: 'http://10.21.0.1/in', events: ['ping'] });
      expect(refused.status).toBe(400);
    } finally {
      await other.close();
    }
  });
});

describe('deliveries', () => {
  it('every event type is delivered, signed, with its data in the API shape', async () => {
    const hook = await endpoint(ALL_EVENTS, '/all');
    const signedOf = (type: string) => deliveredOf(type, '/all');

    // sale.created and stock.low (5 in stock, minimum 3: selling 3 crosses it)
    const item = await buildStockedItem(t.db, 5);
    await t.db('items').where({ id: item.id }).update({ minimum_stock: 3 });
    const sold = await manager
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 3 }], vatApplied: true })
      .expect(201);
    const saleId = sold.body.sale.id;
    await manager.patch(`/api/sales/${saleId}/paid`).expect(200);
    await admin
      .patch(`/api/sales/${saleId}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: 3 }] })
      .expect(200);

    const supplier = await buildSupplier(t.db);
    const stocked = await buildItem(t.db, { currentStock: 0 });
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { itemId: stocked.id, name: 'Tips', quantity: '2', unitCost: '1.00' },
    ]);
    await manager
      .post(`/api/orders/${order.id}/receive`)
      .send({ receivedItems: [{ orderItemId: lines[0].id, receivedQuantity: 2, addToInventory: true }] })
      .expect(200);

    const counted = await buildStockedItem(t.db, 4);
    const st = await manager
      .post('/api/stocktakes')
      .send({ name: 'Shelf', scope: { itemIds: [counted.id] } })
      .expect(201);
    await manager.post(`/api/stocktakes/${st.body.id}/counts`).send({ itemId: counted.id, quantity: 3 }).expect(200);
    const posted = await manager.post(`/api/stocktakes/${st.body.id}/post`).send({}).expect(200);

    const [run] = await t
      .db('backup_runs')
      .insert({ slot: new Date('2026-01-01T02:00:00Z') })
      .returning('id');
    await backupScheduleService(t.db).recordRun(run.id, { ok: false, error: 'Backup failed: disk on fire' });

    await admin.post(`/api/outbound-webhooks/${hook.id}/ping`).expect(202);

    await until(
      () => receiver.received.filter((d) => d.path === '/all'),
      (list) => new Set(list.map((d) => d.body.type)).size === ALL_EVENTS.length,
    );
    const received = receiver.received.filter((d) => d.path === '/all');
    expect(new Set(received.map((d) => d.body.type))).toEqual(new Set(ALL_EVENTS));
    for (const d of received) {
      expect(d.signed).toBe(true);
      expect(d.headers['content-type']).toBe('application/json');
      expect(d.headers['x-stores-event']).toBe(d.body.type);
      expect(d.headers['x-stores-delivery']).toMatch(/^[0-9a-f-]{36}$/);
      expect(d.headers['x-stores-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(Date.parse(d.body.createdAt)).not.toBeNaN();
    }

    const saleNow = (await manager.get(`/api/sales/${saleId}`).expect(200)).body;
    expect(signedOf('sale.created')[0].body.data).toEqual(sold.body.sale);
    expect(signedOf('sale.paid')[0].body.data).toMatchObject({ id: saleId, isPaid: true, status: 'paid' });
    expect(signedOf('sale.refunded')[0].body.data).toEqual(saleNow);
    expect(signedOf('stock.low')).toHaveLength(1);
    expect(signedOf('stock.low')[0].body.data).toMatchObject({
      id: item.id,
      sku: item.sku,
      currentStock: '2.00',
      minimumStock: '3.00',
      category: { id: item.category_id },
    });
    const orderNow = (await manager.get(`/api/orders/${order.id}`).expect(200)).body;
    expect(signedOf('order.received')[0].body.data).toEqual(orderNow.order ?? orderNow);
    expect(signedOf('stocktake.posted')[0].body.data).toEqual(posted.body);
    expect(signedOf('backup.failed')[0].body.data).toMatchObject({
      type: 'scheduled',
      ok: false,
      error: 'Backup failed: disk on fire',
    });
    expect(signedOf('ping')[0].body.data).toMatchObject({ webhookId: hook.id });

    // the deliveries, newest first, with the delivery ids the receiver saw
    const deliveries = await admin.get(`/api/outbound-webhooks/${hook.id}/deliveries`).expect(200);
    expect(deliveries.body.pagination).toMatchObject({ page: 1, total: ALL_EVENTS.length });
    expect(deliveries.body.deliveries[0]).toMatchObject({
      event: 'ping',
      status: 'sent',
      statusCode: 200,
      attempts: 1,
      durationMs: expect.any(Number),
      nextAttemptAt: null,
    });
    expect(new Set(deliveries.body.deliveries.map((d: { id: string }) => d.id))).toEqual(
      new Set(received.map((d) => d.headers['x-stores-delivery'])),
    );
  });

  it('redeliver sends the same event as a new delivery', async () => {
    const hook = await endpoint(['ping'], '/again');
    await admin.post(`/api/outbound-webhooks/${hook.id}/ping`).expect(202);
    const [first] = await waitFor('ping', 1, '/again');
    const again = await admin
      .post(`/api/outbound-webhooks/${hook.id}/deliveries/${first.headers['x-stores-delivery']}/redeliver`)
      .expect(202);
    expect(again.body).toMatchObject({ event: 'ping', status: 'pending', eventId: first.body.id });
    const both = await waitFor('ping', 2, '/again');
    expect(both[1].headers['x-stores-delivery']).toBe(again.body.id);
    expect(both[1].body).toEqual(first.body);
    await admin
      .post(`/api/outbound-webhooks/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`)
      .expect(404);
  });

  it('a refused sale (oversold) emits nothing: the next delivery is the next sale that committed', async () => {
    await endpoint(['sale.created'], '/rollback');
    const item = await buildStockedItem(t.db, 2);
    await manager
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 5 }], vatApplied: true })
      .expect(400);
    const ok = await manager
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 1 }], vatApplied: true })
      .expect(201);
    const [first] = await waitFor('sale.created', 1, '/rollback');
    expect((first.body.data as { id: number }).id).toBe(ok.body.sale.id);
    expect(deliveredOf('sale.created', '/rollback')).toHaveLength(1);
    expect(await t.db('sales').where({ charge_code: code }).whereRaw('total_amount > 50')).toEqual([]);
  });

  it('a redirect is not followed: the delivery waits for its retry with the status it got', async () => {
    const hook = await endpoint(['ping'], '/moved');
    answers.push(() => ({ status: 302, headers: { location: receiver.url('/elsewhere') } }));
    await admin.post(`/api/outbound-webhooks/${hook.id}/ping`).expect(202);
    const page = await until(
      async () => (await admin.get(`/api/outbound-webhooks/${hook.id}/deliveries`)).body.deliveries,
      (list: Delivery[]) => list[0]?.attempts === 1,
    );
    expect(page[0]).toMatchObject({
      status: 'pending',
      statusCode: 302,
      lastError: 'HTTP 302',
      nextAttemptAt: expect.any(String),
    });
    expect(receiver.received.filter((d) => d.path === '/elsewhere')).toEqual([]);
  });

  it('a large answer is read to 64 KB and the delivery counts', async () => {
    const hook = await endpoint(['ping'], '/large');
    answers.push(() => ({ status: 200, body: 'x'.repeat(1024 * 1024) }));
    await admin.post(`/api/outbound-webhooks/${hook.id}/ping`).expect(202);
    const page = await until(
      async () => (await admin.get(`/api/outbound-webhooks/${hook.id}/deliveries`)).body.deliveries,
      (list: Delivery[]) => list[0]?.status === 'sent',
    );
    expect(page[0]).toMatchObject({ status: 'sent', statusCode: 200 });
  });

  it('an endpoint failing for 24 hours is set inactive and the admins are emailed', async () => {
    const hook = await endpoint(['ping'], '/down');
    await t
      .db('outbound_webhooks')
      .where({ id: hook.id })
      .update({ failing_since: new Date(Date.now() - 25 * 3600_000) });
    answers.push(() => ({ status: 503 }));
    await admin.post(`/api/outbound-webhooks/${hook.id}/ping`).expect(202);
    const now = await until(
      async () => (await admin.get(`/api/outbound-webhooks/${hook.id}`)).body,
      (w: { active: boolean }) => !w.active,
    );
    expect(now).toMatchObject({ active: false, deactivatedAt: expect.any(String), failingSince: expect.any(String) });
    const emails = await t.db('outbox_messages').where({ channel: 'email', kind: 'webhook-disabled' });
    expect(emails.map((e) => e.destination)).toContain(adminEmail.toLowerCase());
    expect(emails[0].payload.data).toMatchObject({ url: receiver.url('/down') });
    // nothing is sent to an inactive endpoint
    await admin.post(`/api/outbound-webhooks/${hook.id}/ping`).expect(409);
  });
});

describe('the delivery-time address check', () => {
  it('an endpoint saved while its address was allowed is refused at delivery once it is not', async () => {
    const saving = await testApp({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1' });
    const worker = startOutboxDelivery(
      {
        db: saving.db,
        databaseUrl: saving.databaseUrl,
        config: { ...saving.config, outboundWebhooksAllowPrivate: [] },
        logger: createLogger('silent'),
      },
      { pollMs: 100 },
    );
    try {
      const agent = await saving.loginAs(await buildUser(saving.db, { role: 'admin' }));
      const created = await agent
        .post('/api/outbound-webhooks')
        .send({ url: receiver.url('/rebound'), events: ['ping'] })
        .expect(201);
      await agent.post(`/api/outbound-webhooks/${created.body.id}/ping`).expect(202);
      const page = await until(
        async () => (await agent.get(`/api/outbound-webhooks/${created.body.id}/deliveries`)).body.deliveries,
        (list: Delivery[]) => list[0]?.status === 'failed',
      );
      expect(page[0]).toMatchObject({ status: 'failed', attempts: 1, statusCode: null });
      expect(page[0].lastError).toMatch(/^url refused at delivery: resolves to 127\.0\.0\.1, a loopback address/);
      expect(receiver.received.filter((d) => d.path === '/rebound')).toEqual([]);
    } finally {
      await worker.stop();
      await saving.close();
    }
  });

  it('an IPv4-compatible IPv6 address written into the row is refused at delivery (issue 40)', async () => {
    const hook = await endpoint(['ping'], '/compatible');
    await t.db('outbound_webhooks').where({ id: hook.id }).update({ url: 'https://[::7f00:1]/compatible' });
    await admin.post(`/api/outbound-webhooks/${hook.id}/ping`).expect(202);
    const page = await until(
      async () => (await admin.get(`/api/outbound-webhooks/${hook.id}/deliveries`)).body.deliveries,
      (list: Delivery[]) => list[0]?.status === 'failed',
    );
    expect(page[0]).toMatchObject({ status: 'failed', attempts: 1, statusCode: null });
    expect(page[0].lastError).toMatch(
      /^url refused at delivery: resolves to ::7f00:1, a IPv4-compatible \(deprecated\) address/,
    );
    expect(receiver.received.filter((d) => d.path === '/compatible')).toEqual([]);
  });
});

describe('the outbox admin API and the system alert', () => {
  it('lists by status and kind; Retry now on a failed message, 409 on another; the alert counts the failed', async () => {
    const hook = await endpoint(['ping'], '/outbox');
    await t.db('outbound_webhooks').where({ id: hook.id }).update({ url: 'https://10.9.9.9/outbox' });
    await admin.post(`/api/outbound-webhooks/${hook.id}/ping`).expect(202);
    const failed = await until(
      async () => (await admin.get('/api/outbox?status=failed&kind=ping')).body,
      (page: OutboxPage) => page.messages.some((m) => m.destination === hook.id),
    );
    const message = failed.messages.find((m) => m.destination === hook.id)!;
    expect(message).toMatchObject({
      channel: 'webhook',
      kind: 'ping',
      status: 'failed',
      attempts: 1,
      lastError: expect.stringContaining('url refused at delivery'),
      failedAt: expect.any(String),
    });
    expect(failed.pagination).toMatchObject({ page: 1, limit: 50 });

    const alerts = (await manager.get('/api/system/alerts').expect(200)).body.alerts;
    expect(alerts).toContainEqual({
      type: 'outbox_failed',
      level: 'warning',
      message: expect.stringMatching(/^\d+ outbox messages? failed in the last day$/),
    });

    await t
      .db('outbound_webhooks')
      .where({ id: hook.id })
      .update({ url: receiver.url('/outbox') });
    const retried = await admin.post(`/api/outbox/${message.id}/retry`).expect(200);
    expect(retried.body).toMatchObject({ id: message.id, status: 'pending', failedAt: null });
    const [delivered] = await waitFor('ping', 1, '/outbox');
    expect(delivered.headers['x-stores-delivery']).toBe(message.id);
    await until(
      async () => (await admin.get(`/api/outbox?status=sent&kind=ping`)).body.messages,
      (list: { id: string }[]) => list.some((m) => m.id === message.id),
    );
    const conflict = await admin.post(`/api/outbox/${message.id}/retry`).expect(409);
    expect(conflict.body.message).toMatch(/only a failed message/i);
    await admin.post('/api/outbox/00000000-0000-4000-8000-000000000000/retry').expect(404);
    await admin.get('/api/outbox?status=lost').expect(400);
    await manager.get('/api/outbox').expect(403);
  });
});

describe('retries', () => {
  it('a receiver answering 500 twice then 200 gets the same delivery three times, and nothing after', async () => {
    let failures = 2;
    const flaky = await startReceiver(() => (failures-- > 0 ? { status: 500, body: 'down' } : { status: 200 }));
    const fast = await testApp(
      { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1', OUTBOX_RETRY_BASE_MS: '100' },
      { deliverOutbox: true },
    );
    try {
      const agent = await fast.loginAs(await buildUser(fast.db, { role: 'admin' }));
      const created = await agent
        .post('/api/outbound-webhooks')
        .send({ url: flaky.url('/flaky'), events: ['ping'] })
        .expect(201);
      flaky.useSecret(created.body.secret);
      await agent.post(`/api/outbound-webhooks/${created.body.id}/ping`).expect(202);
      const page = await until(
        async () => (await agent.get(`/api/outbound-webhooks/${created.body.id}/deliveries`)).body.deliveries,
        (list: Delivery[]) => list[0]?.status === 'sent',
      );
      expect(page).toHaveLength(1);
      expect(page[0]).toMatchObject({ status: 'sent', attempts: 3, statusCode: 200, lastError: null });
      // the next delivery to the endpoint comes after it: the first is not sent again
      const next = await agent.post(`/api/outbound-webhooks/${created.body.id}/ping`).expect(202);
      await until(
        () => flaky.received,
        (list) => list.some((d) => d.headers['x-stores-delivery'] === next.body.id),
      );
      expect(flaky.received.map((d) => d.headers['x-stores-delivery'])).toEqual([
        page[0].id,
        page[0].id,
        page[0].id,
        next.body.id,
      ]);
      expect(flaky.received.every((d) => d.signed)).toBe(true);
      expect(new Set(flaky.received.slice(0, 3).map((d) => d.raw)).size).toBe(1);
    } finally {
      await fast.close();
      await flaky.close();
    }
  });
});
