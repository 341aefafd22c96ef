import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildStockedItem } from './helpers/inventory-factories';
import type { UserRow } from '../src/modules/users/users.service';

// Issue 40, finding 4: approvals cannot be sidestepped, neither by approving one's own request
// nor by splitting a request into parts under the code's threshold (requests.thresholdWindow).

let t: TestApp;
let requester: UserRow;
let asRequester: supertest.Agent;
let approver: UserRow;
let asApprover: supertest.Agent;
let admin: UserRow;
let asAdmin: supertest.Agent;
let asAdmin2: supertest.Agent;

beforeAll(async () => {
  t = await testApp();
  requester = await buildUser(t.db, { role: 'requester' });
  approver = await buildUser(t.db, { role: 'requester', email: `pi-${Date.now()}@example.ac.uk` });
  admin = await buildUser(t.db, { role: 'admin' });
  [asRequester, asApprover, asAdmin, asAdmin2] = await Promise.all([
    t.loginAs(requester),
    t.loginAs(approver),
    t.loginAs(admin),
    t.loginAs(await buildUser(t.db, { role: 'admin' })),
  ]);
});
afterAll(() => t.close());

const submit = (agent: supertest.Agent, chargeCode: string, itemId: number) =>
  agent.post('/api/requests').send({ chargeCode, items: [{ itemId, quantity: 1 }] });

const setWindow = (window: unknown) =>
  asAdmin.put('/api/settings/requests.thresholdWindow').send({ value: { window } });

const statusOf = async (id: number) => (await t.db('stock_requests').where({ id }).first('status')).status;

describe('self-approval', () => {
  it("403 the approver approving their own request names another approver or an admin; the request still waits; it is not in their toApprove; an admin's own waits for another admin", async () => {
    const code = await buildChargeCode(t.db, {
      authorisedEmails: [approver.email, admin.email],
      approverEmail: approver.email,
      approvalThreshold: '10.00',
    });
    const item = await buildStockedItem(t.db, 100, { price: '20.00', vatRate: '0' });
    const own = await submit(asApprover, code.code, item.id).expect(201);
    expect(own.body.status).toBe('awaiting_approval');

    const refused = await asApprover.post(`/api/requests/${own.body.id}/approve`).send({}).expect(403);
    expect(refused.body.message).toBe('You cannot approve your own request; it needs another approver or an admin');
    const rejectOwn = await asApprover.post(`/api/requests/${own.body.id}/reject`).send({}).expect(403);
    expect(rejectOwn.body.message).toBe('You cannot reject your own request; it needs another approver or an admin');
    expect(await statusOf(own.body.id)).toBe('awaiting_approval');
    const toApprove = await asApprover.get('/api/requests?toApprove=true').expect(200);
    expect(toApprove.body.requests.map((r: { id: number }) => r.id)).not.toContain(own.body.id);

    // an admin's own request: not by them, by the code's approver or another admin
    const adminsOwn = await submit(asAdmin, code.code, item.id).expect(201);
    const adminRefused = await asAdmin.post(`/api/requests/${adminsOwn.body.id}/approve`).send({}).expect(403);
    expect(adminRefused.body.message).toBe(
      'You cannot approve your own request; it needs another approver or an admin',
    );
    expect(await statusOf(adminsOwn.body.id)).toBe('awaiting_approval');
    await asApprover.post(`/api/requests/${adminsOwn.body.id}/approve`).send({}).expect(200);
    const byOtherAdmin = await asAdmin2.post(`/api/requests/${own.body.id}/approve`).send({}).expect(200);
    expect(byOtherAdmin.body.status).toBe('approved');
    expect(await statusOf(own.body.id)).toBe('approved');
  });
});

describe('requests.thresholdWindow', () => {
  /** A fresh code the requester may charge, approval over 50.00, and an item of 49.90. */
  async function codeAndItem() {
    const code = await buildChargeCode(t.db, {
      authorisedEmails: [requester.email],
      approverEmail: approver.email,
      approvalThreshold: '50.00',
    });
    const item = await buildStockedItem(t.db, 100, { price: '49.90', vatRate: '0' });
    return { code: code.code, itemId: item.id };
  }

  it('400 a window other than request, day or week; nothing stored', async () => {
    const res = await setWindow('month').expect(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: 'value.window' }));
    expect(await t.db('settings').where({ key: 'requests.thresholdWindow' }).first()).toBeUndefined();
  });

  it('day (the default): three 49.90 requests on a 50.00 code, the second and third wait for approval, the comment naming the day', async () => {
    const { code, itemId } = await codeAndItem();
    const first = await submit(asRequester, code, itemId).expect(201);
    expect(first.body.status).toBe('submitted');
    const second = await submit(asRequester, code, itemId).expect(201);
    expect(second.body.status).toBe('awaiting_approval');
    expect(second.body.history[1].comment).toBe(
      "Total £49.90, £99.80 with the requester's other open requests on the code in the last 24 hours, is over the code's approval threshold £50.00",
    );
    const third = await submit(asRequester, code, itemId).expect(201);
    expect(third.body.status).toBe('awaiting_approval');
    expect(await statusOf(third.body.id)).toBe('awaiting_approval');
  });

  it('day: a cancelled request, a fulfilled one and one older than 24 hours do not count', async () => {
    await setWindow('day').expect(200);
    const { code, itemId } = await codeAndItem();
    const cancelled = await submit(asRequester, code, itemId).expect(201);
    await asRequester.post(`/api/requests/${cancelled.body.id}/cancel`).send({}).expect(200);
    const fulfilled = await submit(asRequester, code, itemId).expect(201);
    await t.db('stock_requests').where({ id: fulfilled.body.id }).update({ status: 'ready' });
    const old = await submit(asRequester, code, itemId).expect(201);
    await t
      .db('stock_requests')
      .where({ id: old.body.id })
      .update({ created_at: t.db.raw("now() - interval '25 hours'") });
    const next = await submit(asRequester, code, itemId).expect(201);
    expect(next.body.status).toBe('submitted');
  });

  it('request: each request alone, three 49.90 requests all submitted', async () => {
    await setWindow('request').expect(200);
    const { code, itemId } = await codeAndItem();
    for (let i = 0; i < 3; i++)
      expect((await submit(asRequester, code, itemId).expect(201)).body.status).toBe('submitted');
  });

  it('week: a request of three days ago counts with the new one', async () => {
    await setWindow('week').expect(200);
    const { code, itemId } = await codeAndItem();
    const earlier = await submit(asRequester, code, itemId).expect(201);
    expect(earlier.body.status).toBe('submitted');
    await t
      .db('stock_requests')
      .where({ id: earlier.body.id })
      .update({ created_at: t.db.raw("now() - interval '3 days'") });
    const second = await submit(asRequester, code, itemId).expect(201);
    expect(second.body.status).toBe('awaiting_approval');
    expect(second.body.history[1].comment).toContain('in the last 7 days');
    // under day the same request of three days ago would not have counted
    await setWindow('day').expect(200);
    await asRequester.post(`/api/requests/${second.body.id}/cancel`).send({}).expect(200);
    expect((await submit(asRequester, code, itemId).expect(201)).body.status).toBe('submitted');
  });
});
