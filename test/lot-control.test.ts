import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { agentsByRole, stockOf, type Agents } from './helpers/inventory-factories';
import { buildOrder, buildSupplier } from './helpers/purchasing-factories';
import { buildChargeCode, grantPermission } from './helpers/sales-factories';
import { TestSmtp } from './helpers/smtp';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';
import { createItem, day, stockInLot } from './helpers/lots-factories';
import { until } from './helpers/poll';

/*
 * Issue 42 on the floor: the lots list (expiring, expired, quarantined), write-off, quarantine and
 * release, a lot's trace, and a recall that emails each person who got the lot once, through a
 * real SMTP server.
 */

const PUBLIC_URL = 'http://stores.example.ac.uk';
let smtp: TestSmtp;
let receiver: Receiver;
let t: TestApp;
let as: Agents;
let code: string;
let categoryId: number;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  receiver = await startReceiver();
  t = await testApp(
    {
      SMTP_URL: smtp.url,
      PUBLIC_URL,
      OUTBOX_RETRY_BASE_MS: '100',
      MAIL_FROM: 'Stores <stores@example.ac.uk>',
      OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1',
    },
    { deliverOutbox: true },
  );
  as = await agentsByRole(t);
  code = (await buildChargeCode(t.db)).code;
  categoryId = (await buildCategory(t.db)).id;
});
afterAll(async () => {
  await t.close();
  await smtp.stop();
  await receiver.close();
});

async function trackedItem(): Promise<{ id: number; sku: string; name: string }> {
  const { id, sku, name } = await createItem(as.manager, {
    categoryId,
    prefix: 'LC',
    name: (sku) => `Sodium azide ${sku}`,
  });
  return { id, sku, name };
}

const stockIn = (id: number, lotNumber: string, quantity: number, expiresOn: string | null) =>
  stockInLot(as.manager, id, lotNumber, quantity, expiresOn).expect(200);

const lotId = async (itemId: number, lotNumber: string): Promise<number> =>
  (await t.db('stock_lots').where({ item_id: itemId, lot_number: lotNumber }).first('id')).id;

type Listed = { id: number; lotNumber: string; status: string; quantity: number; item: object };
const listed = async (query: string) => (await as.user.get(`/api/lots?${query}`).expect(200)).body;
const numbers = (body: { lots: Listed[] }) => body.lots.map((lot) => lot.lotNumber);

const sell = (agent: supertest.Agent, itemId: number, quantity: number, extra: Record<string, unknown> = {}) =>
  agent
    .post('/api/sales')
    .send({ chargeCode: code, items: [{ itemId, quantity }], vatApplied: false, ...extra })
    .expect(201)
    .then((res) => res.body.sale as { id: number; saleId: string });

describe('GET /api/lots', () => {
  let item: { id: number; sku: string; name: string };
  beforeAll(async () => {
    item = await trackedItem();
    await stockIn(item.id, 'FAR', 1, day(300));
    await stockIn(item.id, 'LATER', 2, day(20));
    await stockIn(item.id, 'SOON', 3, day(5));
    await stockIn(item.id, 'OLD', 4, day(-2));
    await stockIn(item.id, 'GONE', 1, day(-10));
    await stockIn(item.id, 'HELD', 5, day(400));
    await stockIn(item.id, 'NODATE', 1, null);
    await as.manager
      .post(`/api/items/${item.id}/stock`)
      .send({ type: 'adjustment', quantity: 0, lotNumber: 'GONE', reason: 'Poured away' })
      .expect(200);
    await as.manager
      .post(`/api/lots/${await lotId(item.id, 'HELD')}/quarantine`)
      .send({ reason: 'Cloudy' })
      .expect(200);
  });

  it('lists each status of the lots holding stock, soonest expiry first, with the item', async () => {
    expect(numbers(await listed(`itemId=${item.id}&status=expired`))).toEqual(['OLD']);
    expect(numbers(await listed(`itemId=${item.id}&status=expiring`))).toEqual(['SOON', 'LATER']);
    expect(numbers(await listed(`itemId=${item.id}&status=quarantined`))).toEqual(['HELD']);
    const all = await listed(`itemId=${item.id}`);
    expect(numbers(all)).toEqual(['OLD', 'SOON', 'LATER', 'HELD']);
    expect(all.pagination).toEqual({ page: 1, limit: 50, total: 4, totalPages: 1 });
    expect(all.lots[0]).toEqual({
      id: await lotId(item.id, 'OLD'),
      lotNumber: 'OLD',
      expiresOn: day(-2),
      quantity: 4,
      status: 'expired',
      receivedAt: expect.any(String),
      orderId: null,
      supplierId: null,
      createdAt: expect.any(String),
      quarantinedAt: null,
      quarantineReason: null,
      item: { id: item.id, sku: item.sku, name: item.name },
    });
    expect(all.lots[3]).toMatchObject({
      status: 'quarantined',
      quarantineReason: 'Cloudy',
      quarantinedAt: expect.any(String),
    });
  });

  it('pages: page 2 of limit 1 is the second lot, with the total', async () => {
    const second = await listed(`itemId=${item.id}&page=2&limit=1`);
    expect(numbers(second)).toEqual(['SOON']);
    expect(second.pagination).toEqual({ page: 2, limit: 1, total: 4, totalPages: 4 });
  });

  it('expiring follows the setting lots.expiryWarningDays', async () => {
    await as.admin
      .put('/api/settings/lots.expiryWarningDays')
      .send({ value: { days: 10 } })
      .expect(200);
    try {
      expect(numbers(await listed(`itemId=${item.id}&status=expiring`))).toEqual(['SOON']);
    } finally {
      await as.admin
        .put('/api/settings/lots.expiryWarningDays')
        .send({ value: { days: 30 } })
        .expect(200);
    }
    expect(numbers(await listed(`itemId=${item.id}&status=expiring`))).toEqual(['SOON', 'LATER']);
  });

  it('400 names an unknown status or a bad limit; 401 signed out', async () => {
    const res = await as.user.get('/api/lots?status=available&limit=500').expect(400);
    expect((res.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['limit', 'status']);
    await t.request.get('/api/lots').expect(401);
  });

  it('reads the lots holding stock through the partial indexes on expiry', async () => {
    const planOf = (where: string) =>
      t.db.transaction(async (trx) => {
        await trx.raw('SET LOCAL enable_seqscan = off');
        const { rows } = await trx.raw(
          `EXPLAIN SELECT id FROM stock_lots l WHERE l.quantity > 0 AND ${where}
            ORDER BY l.expires_on NULLS LAST, l.id LIMIT 50`,
          [day(0)],
        );
        return (rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
      });
    expect(await planOf('l.expires_on < ?::date AND l.quarantined_at IS NULL')).toContain(
      'stock_lots_holding_by_expiry',
    );
    expect(await planOf('l.quarantined_at IS NOT NULL AND ?::date IS NOT NULL')).toContain(
      'stock_lots_quarantined_holding',
    );
  });
});

describe('POST /api/lots/{id}/write-off', () => {
  it('empties the lot with one adjustment movement, reason "Expired lot <lotNumber>", audited; again 409', async () => {
    const item = await trackedItem();
    await stockIn(item.id, 'X1', 4, day(-1));
    await stockIn(item.id, 'X2', 6, day(100));
    const id = await lotId(item.id, 'X1');

    const res = await as.manager.post(`/api/lots/${id}/write-off`).send({}).expect(200);
    expect(res.body).toMatchObject({ id, lotNumber: 'X1', quantity: 0, status: 'empty', item: { id: item.id } });
    expect(await stockOf(t.db, item.id)).toBe('6.00');
    const [movement] = await t.db('stock_movements').where({ item_id: item.id }).orderBy('id', 'desc').limit(1);
    expect(movement).toMatchObject({
      type: 'adjustment',
      reason: 'Expired lot X1',
      previous_stock: '10.00',
      new_stock: '6.00',
    });
    expect(await t.db('stock_movement_lots').where({ movement_id: movement.id })).toEqual([
      expect.objectContaining({ lot_id: id, lot_number: 'X1', quantity: '-4.00' }),
    ]);
    const audit = await t.db('audit_log').where({ entity_type: 'lot', entity_id: String(id), action: 'write_off' });
    expect(audit).toHaveLength(1);
    expect(audit[0].after).toMatchObject({ lotNumber: 'X1', quantity: '0.00', reason: 'Expired lot X1' });

    const again = await as.manager.post(`/api/lots/${id}/write-off`).send({}).expect(409);
    expect(again.body.message).toBe(`Lot X1 of ${item.sku} holds no stock`);
  });

  it('records the reason given; 403 below manager, 404 an unknown lot, 400 a bad reason', async () => {
    const item = await trackedItem();
    await stockIn(item.id, 'Y1', 2, day(50));
    const id = await lotId(item.id, 'Y1');
    await as.user.post(`/api/lots/${id}/write-off`).send({}).expect(403);
    const missing = await as.manager.post('/api/lots/999999/write-off').send({}).expect(404);
    expect(missing.body.message).toBe('Lot not found');
    const bad = await as.manager
      .post(`/api/lots/${id}/write-off`)
      .send({ reason: 'x'.repeat(501) })
      .expect(400);
    expect(bad.body.errors[0].field).toBe('reason');

    await as.manager.post(`/api/lots/${id}/write-off`).send({ reason: 'Bottle broken' }).expect(200);
    const [movement] = await t.db('stock_movements').where({ item_id: item.id }).orderBy('id', 'desc').limit(1);
    expect(movement).toMatchObject({ type: 'adjustment', reason: 'Bottle broken', new_stock: '0.00' });
  });
});

describe('quarantine and release', () => {
  it('a quarantined lot is not sold; released, it is sold again; both audited; 409 twice', async () => {
    const item = await trackedItem();
    await stockIn(item.id, 'Q1', 3, day(30));
    await stockIn(item.id, 'Q2', 2, day(60));
    const id = await lotId(item.id, 'Q1');

    const quarantined = await as.manager
      .post(`/api/lots/${id}/quarantine`)
      .send({ reason: 'Supplier notice' })
      .expect(200);
    expect(quarantined.body).toMatchObject({ id, status: 'quarantined', quarantineReason: 'Supplier notice' });
    const row = await t.db('stock_lots').where({ id }).first();
    expect(row.quarantined_by).toBe(as.ids.manager);

    const again = await as.manager.post(`/api/lots/${id}/quarantine`).send({ reason: 'Twice' }).expect(409);
    expect(again.body.message).toBe(`Lot Q1 of ${item.sku} is quarantined already`);

    const short = await as.user
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: item.id, quantity: 3 }], vatApplied: false })
      .expect(400);
    expect(short.body.message).toBe(
      `Insufficient stock for item '${item.name}'. Current stock: 2, Required: 3 (3 in expired or quarantined lots)`,
    );
    await sell(as.user, item.id, 1);
    expect((await t.db('stock_lots').where({ id }).first()).quantity).toBe('3.00');

    const released = await as.manager.post(`/api/lots/${id}/release`).send({}).expect(200);
    expect(released.body).toMatchObject({ id, status: 'expiring', quarantinedAt: null, quarantineReason: null });
    const notHeld = await as.manager.post(`/api/lots/${id}/release`).send({}).expect(409);
    expect(notHeld.body.message).toBe(`Lot Q1 of ${item.sku} is not quarantined`);
    await sell(as.user, item.id, 1);
    expect((await t.db('stock_lots').where({ id }).first()).quantity).toBe('2.00');

    const actions = await t
      .db('audit_log')
      .where({ entity_type: 'lot', entity_id: String(id) })
      .orderBy('occurred_at');
    expect(actions.map((a) => a.action)).toEqual(['quarantine', 'release']);
  });

  it('400 without a reason, 403 below manager, 404 an unknown lot', async () => {
    const item = await trackedItem();
    await stockIn(item.id, 'Q3', 1, null);
    const id = await lotId(item.id, 'Q3');
    const bad = await as.manager.post(`/api/lots/${id}/quarantine`).send({}).expect(400);
    expect(bad.body.errors[0].field).toBe('reason');
    await as.user.post(`/api/lots/${id}/quarantine`).send({ reason: 'x' }).expect(403);
    await as.user.post(`/api/lots/${id}/release`).send({}).expect(403);
    expect((await as.manager.post('/api/lots/999999/quarantine').send({ reason: 'x' }).expect(404)).body.message).toBe(
      'Lot not found',
    );
    await as.manager.post('/api/lots/999999/release').send({}).expect(404);
  });
});

describe('GET /api/lots/{id}/trace', () => {
  it('the receipts, the sales net of refunds, the movements and what remains; CSV of the sales', async () => {
    const item = await trackedItem();
    const supplier = await buildSupplier(t.db, { name: 'Reagents & Co' });
    const { order, lines: orderLines } = await buildOrder(t.db, supplier.id, [
      { itemId: item.id, name: item.name, quantity: '10', unitCost: '1.00' },
    ]);
    await as.manager
      .post(`/api/orders/${order.id}/receive`)
      .send({
        receivedItems: [
          {
            orderItemId: orderLines[0].id,
            receivedQuantity: 10,
            lots: [{ lotNumber: 'T1', expiresOn: day(90), quantity: 10 }],
          },
        ],
      })
      .expect(200);
    const id = await lotId(item.id, 'T1');

    const first = await sell(as.user, item.id, 3, {
      recipient: { deliveredTo: 'Dr Ada', deliveredToEmail: 'ada@example.ac.uk' },
    });
    const second = await sell(as.user, item.id, 2);
    const refunder = await buildUser(t.db);
    await grantPermission(t.db, refunder.id, 'sales.refund');
    await (
      await t.loginAs(refunder)
    )
      .patch(`/api/sales/${second.id}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: 2 }] })
      .expect(200);
    const third = await sell(as.user, item.id, 1);

    const res = await as.manager.get(`/api/lots/${id}/trace`).expect(200);
    expect(res.body.lot).toMatchObject({ id, lotNumber: 'T1', quantity: 6, orderId: order.id });
    expect(res.body.item).toEqual({ id: item.id, sku: item.sku, name: item.name });
    expect(res.body.received).toEqual([
      {
        orderId: order.id,
        orderNumber: order.order_id,
        supplier: 'Reagents & Co',
        quantity: 10,
        receivedAt: expect.any(String),
      },
    ]);
    expect(res.body.sales).toEqual([
      {
        saleId: first.id,
        saleNumber: first.saleId,
        chargeCode: code,
        deliveredTo: 'Dr Ada',
        deliveredToEmail: 'ada@example.ac.uk',
        quantity: 3,
        soldAt: expect.any(String),
      },
      {
        saleId: third.id,
        saleNumber: third.saleId,
        chargeCode: code,
        deliveredTo: null,
        deliveredToEmail: null,
        quantity: 1,
        soldAt: expect.any(String),
      },
    ]);
    expect(res.body.movements.map((m: { type: string; quantity: number }) => [m.type, m.quantity])).toEqual([
      ['in', 10],
      ['out', -3],
      ['out', -2],
      ['in', 2],
      ['out', -1],
    ]);
    expect(res.body.remaining).toBe(6);

    const csv = await as.manager.get(`/api/lots/${id}/trace?format=csv`).expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.text
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\n');
    expect(lines[0]).toBe('SKU,Item,Lot,Expires on,Sale,Sold at,Charge code,Delivered to,Delivered to email,Quantity');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain(`${first.saleId},`);
    expect(lines[1]).toContain(',Dr Ada,ada@example.ac.uk,3');
  });

  it('403 below manager, 404 an unknown lot', async () => {
    await as.user.get('/api/lots/1/trace').expect(403);
    expect((await as.manager.get('/api/lots/999999/trace').expect(404)).body.message).toBe('Lot not found');
  });
});

describe('POST /api/lots/{id}/recall', () => {
  it('quarantines the lot, publishes lot.recalled, and emails each address once with their sale numbers', async () => {
    const hook = await as.admin
      .post('/api/outbound-webhooks')
      .send({ url: receiver.url('/recalls'), events: ['lot.recalled'] })
      .expect(201);
    const item = await trackedItem();
    await stockIn(item.id, 'R1', 10, day(200));
    await stockIn(item.id, 'R2', 10, day(300));
    const id = await lotId(item.id, 'R1');
    const pi = (await buildChargeCode(t.db, { approverEmail: 'pi.recall@example.ac.uk' })).code;
    const noHolder = (await buildChargeCode(t.db)).code;

    const alice = { deliveredTo: 'Alice', deliveredToEmail: 'alice.recall@example.ac.uk' };
    const a1 = await sell(as.user, item.id, 2, { recipient: alice });
    const a2 = await sell(as.user, item.id, 1, {
      recipient: { ...alice, deliveredToEmail: 'Alice.Recall@example.ac.uk' },
    });
    const viaCode = await sell(as.user, item.id, 1, { chargeCode: pi });
    await sell(as.user, item.id, 1, { chargeCode: noHolder });
    const bob = await sell(as.user, item.id, 1, {
      recipient: { deliveredTo: 'Bob', deliveredToEmail: 'bob.recall@example.ac.uk' },
    });
    const refunder = await buildUser(t.db);
    await grantPermission(t.db, refunder.id, 'sales.refund');
    await (
      await t.loginAs(refunder)
    )
      .patch(`/api/sales/${bob.id}/refund`)
      .send({ items: [{ itemId: item.id, refundQty: 1 }] })
      .expect(200);

    const message = 'Stop using it and bring the bottle back to the stores.';
    const res = await as.manager.post(`/api/lots/${id}/recall`).send({ message }).expect(200);
    expect(res.body).toEqual({ quarantined: true, notified: 2 });

    const lot = (await as.user.get(`/api/items/${item.id}/lots`).expect(200)).body.find(
      (l: { lotNumber: string }) => l.lotNumber === 'R1',
    );
    expect(lot.status).toBe('quarantined');

    const [toAlice] = await until(
      () => smtp.to('alice.recall@example.ac.uk'),
      (m) => m.length >= 1,
    );
    expect(toAlice.subject).toBe(`Recall: lot R1 of ${item.name}`);
    for (const text of [message, item.name, item.sku, 'R1', a1.saleId, a2.saleId]) expect(toAlice.text).toContain(text);
    const [toPi] = await until(
      () => smtp.to('pi.recall@example.ac.uk'),
      (m) => m.length >= 1,
    );
    expect(toPi.text).toContain(viaCode.saleId);
    expect(toPi.text).not.toContain(a1.saleId);
    // queued in the recall's transaction: one per address, none to the refunded sale's recipient
    const queued = await t.db('outbox_messages').where({ kind: 'lot-recall' }).select('destination');
    expect(queued.map((q) => q.destination).sort()).toEqual(['alice.recall@example.ac.uk', 'pi.recall@example.ac.uk']);
    expect(smtp.to('alice.recall@example.ac.uk')).toHaveLength(1);

    const [delivery] = await until(
      () => receiver.received.filter((d) => d.path === '/recalls' && d.body.type === 'lot.recalled'),
      (list) => list.length >= 1,
    );
    expect(delivery.body.data).toMatchObject({
      lot: { id, lotNumber: 'R1', status: 'quarantined', item: { id: item.id, sku: item.sku } },
      message,
      notified: 2,
    });
    expect((delivery.body.data as { sales: unknown[] }).sales).toHaveLength(4);

    const audit = await t.db('audit_log').where({ entity_type: 'lot', entity_id: String(id), action: 'recall' });
    expect(audit).toHaveLength(1);
    await as.admin.delete(`/api/outbound-webhooks/${hook.body.id}`).expect(204);
  });

  it('400 without a message, 403 below manager, 404 an unknown lot', async () => {
    const bad = await as.manager.post('/api/lots/1/recall').send({}).expect(400);
    expect(bad.body.errors[0].field).toBe('message');
    await as.user.post('/api/lots/1/recall').send({ message: 'x' }).expect(403);
    await as.manager.post('/api/lots/999999/recall').send({ message: 'x' }).expect(404);
  });
});
