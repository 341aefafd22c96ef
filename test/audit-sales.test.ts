import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../src/modules/users/users.service';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildStockedItem } from './helpers/inventory-factories';
import { buildChargeCode } from './helpers/sales-factories';

let t: TestApp;
let admin: UserRow;
let adminAgent: supertest.Agent;
beforeAll(async () => {
  t = await testApp();
  admin = await buildUser(t.db, { role: 'admin' });
  adminAgent = await t.loginAs(admin);
});
afterAll(() => t.close());

const sessionActor = (user: UserRow) => ({
  kind: 'session',
  userId: user.id,
  email: user.email,
  mcpKeyId: null,
  ip: expect.any(String),
});

async function saleOf(agent: supertest.Agent, quantity = 3): Promise<{ id: number; itemId: number }> {
  const code = await buildChargeCode(t.db);
  const item = await buildStockedItem(t.db, 10, { name: 'Beaker', price: '2.00', vatRate: '0' });
  const res = await agent
    .post('/api/sales')
    .send({ chargeCode: code.code, items: [{ itemId: item.id, quantity }] })
    .expect(201);
  return { id: res.body.sale.id, itemId: item.id };
}

const eventsOf = async (saleId: number) =>
  (
    await adminAgent
      .get('/api/audit')
      .query({ entityType: 'sale', entityId: String(saleId) })
      .expect(200)
  ).body.events as {
    action: string;
    actor: unknown;
    before: unknown;
    after: unknown;
  }[];

describe('audit of sales', () => {
  it('marking paid and unpaid records the payment state before and after, with who did it', async () => {
    const manager = await buildUser(t.db, { role: 'manager' });
    const { id } = await saleOf(await t.loginAs(manager));
    await (await t.loginAs(manager)).patch(`/api/sales/${id}/paid`).expect(200);
    await adminAgent.patch(`/api/sales/${id}/unpaid`).expect(200);

    const [unpaid, paid] = await eventsOf(id);
    expect(paid).toMatchObject({
      action: 'mark_paid',
      actor: sessionActor(manager),
      before: { isPaid: false, status: 'completed' },
      after: { isPaid: true, status: 'paid' },
    });
    expect(unpaid).toMatchObject({
      action: 'mark_unpaid',
      actor: sessionActor(admin),
      before: { isPaid: true, status: 'paid' },
      after: { isPaid: false, status: 'completed' },
    });
  });

  it('a changed recipient records the recipient before and after', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const { id } = await saleOf(agent);
    await agent
      .patch(`/api/sales/${id}/recipient`)
      .send({ deliveredTo: 'Dr Grace', deliveredToEmail: 'grace@example.ac.uk' })
      .expect(200);
    await agent.patch(`/api/sales/${id}/recipient`).send({ deliveredTo: 'Dr Ada' }).expect(200);

    const [second, first] = await eventsOf(id);
    expect(first).toMatchObject({
      action: 'change_recipient',
      actor: sessionActor(user),
      before: { deliveredTo: null, deliveredToEmail: null, deliveredAt: null },
      after: { deliveredTo: 'Dr Grace', deliveredToEmail: 'grace@example.ac.uk', deliveredAt: expect.any(String) },
    });
    expect(second).toMatchObject({
      before: { deliveredTo: 'Dr Grace' },
      after: { deliveredTo: 'Dr Ada', deliveredToEmail: null },
    });
  });

  it('a refund records the amount, the lines and the reason; a refused one records nothing', async () => {
    const { id, itemId } = await saleOf(adminAgent);
    await adminAgent
      .patch(`/api/sales/${id}/refund`)
      .send({ items: [{ itemId, refundQty: 5 }] })
      .expect(400);
    await adminAgent
      .patch(`/api/sales/${id}/refund`)
      .send({ items: [{ itemId, refundQty: 1 }], note: 'Cracked' })
      .expect(200);

    const events = await eventsOf(id);
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual(
      expect.objectContaining({
        action: 'refund',
        actor: sessionActor(admin),
        before: { status: 'completed', refundedAmount: '0.00' },
        after: {
          status: 'partially_refunded',
          refundedAmount: '2.00',
          amount: '2.00',
          lines: [{ itemId, itemName: 'Beaker', quantity: '1.00' }],
          reason: 'Cracked',
        },
      }),
    );
  });

  it('a refused change records nothing (404 sale, 403 role)', async () => {
    await adminAgent.patch('/api/sales/999999/paid').expect(404);
    const { id } = await saleOf(adminAgent);
    await (await t.loginAs(await buildUser(t.db, { role: 'manager' }))).patch(`/api/sales/${id}/unpaid`).expect(403);
    expect(await eventsOf(999999)).toEqual([]);
    expect(await eventsOf(id)).toEqual([]);
  });
});
