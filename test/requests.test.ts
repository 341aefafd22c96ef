import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { buildChargeCode, untilSomeoneWaitsOnALock } from './helpers/sales-factories';
import { buildStockedItem, movementsOf, stockOf } from './helpers/inventory-factories';
import { outboxMessages } from '../src/modules/outbox/outbox.queries';
import { renderEmail } from '../src/modules/emails/emails.render';
import type { UserRow } from '../src/modules/users/users.service';

let t: TestApp;
let requester: UserRow;
let asRequester: supertest.Agent;
let other: UserRow;
let asOther: supertest.Agent;
let approver: UserRow;
let asApprover: supertest.Agent;
let asStaff: supertest.Agent;
let asStaff2: supertest.Agent;
let asAdmin: supertest.Agent;
let asManager: supertest.Agent;
let webhookId: string;

const REQUEST_EVENTS = [
  'request.submitted',
  'request.awaiting_approval',
  'request.approved',
  'request.rejected',
  'request.ready',
  'request.collected',
  'request.cancelled',
];

beforeAll(async () => {
  t = await testApp();
  requester = await buildUser(t.db, { role: 'requester', firstName: 'Rita', lastName: 'Researcher' });
  other = await buildUser(t.db, { role: 'requester' });
  approver = await buildUser(t.db, { role: 'requester', email: `pi-${Date.now()}@example.ac.uk` });
  [asRequester, asOther, asApprover, asStaff, asStaff2, asAdmin, asManager] = await Promise.all([
    t.loginAs(requester),
    t.loginAs(other),
    t.loginAs(approver),
    t.loginAs(await buildUser(t.db, { role: 'user' })),
    t.loginAs(await buildUser(t.db, { role: 'user' })),
    t.loginAs(await buildUser(t.db, { role: 'admin' })),
    t.loginAs(await buildUser(t.db, { role: 'manager' })),
  ]);
  // an outbound webhook subscribed to every request event: publishEvent queues one delivery each
  [{ id: webhookId }] = await t
    .db('outbound_webhooks')
    .insert({ url: 'https://hooks.example.org/stores', events: REQUEST_EVENTS, secret: 'test-secret-0123456789' })
    .returning('id');
});
afterAll(() => t.close());

/** A code the requester (and the other requester) may charge; approval over `threshold` by the approver. */
const codeFor = (overrides: Parameters<typeof buildChargeCode>[1] = {}) =>
  buildChargeCode(t.db, {
    authorisedEmails: [requester.email, other.email],
    approverEmail: approver.email,
    ...overrides,
  });

/** The request.* events queued for the webhook about the request with this reference, oldest first. */
async function eventsOf(reference: string): Promise<string[]> {
  const messages = await outboxMessages(
    t.db,
    { channel: 'webhook', destination: webhookId },
    { limit: 1000, offset: 0 },
  );
  return messages
    .filter((m) => (m.payload as { data: { reference: string } }).data.reference === reference)
    .map((m) => m.kind)
    .reverse();
}

/** The emails queued about the request with this id: [template, address], oldest first; the stores' request inbox's (request-to-fulfil, test/requests-inbox.test.ts) left out. */
async function emailsOf(requestId: number): Promise<[string, string][]> {
  const messages = await outboxMessages(t.db, { channel: 'email' }, { limit: 1000, offset: 0 });
  return messages
    .filter((m) => (m.payload as { data: { requestId: number } }).data.requestId === requestId)
    .filter((m) => m.kind !== 'request-to-fulfil')
    .map((m): [string, string] => [m.kind, m.destination])
    .reverse();
}

/** A page's text as a reader sees it: tags and entities out, whitespace collapsed. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

function submit(agent: supertest.Agent, chargeCode: string, items: { itemId: number; quantity: number | string }[]) {
  return agent.post('/api/requests').send({ chargeCode, items });
}

describe('POST /api/requests', () => {
  it('201 a requester submits: reference RQ-<YYYYMMDD>-<n>, priced lines, short lines marked, history, the request.submitted event', async () => {
    const code = await codeFor();
    const flask = await buildStockedItem(t.db, 10, { name: 'Beaker 250 ml', price: '4.00', vatRate: '0.2' });
    const gloves = await buildStockedItem(t.db, 2, { name: 'Gloves', price: '1.50', vatRate: '0' });
    const res = await asRequester
      .post('/api/requests')
      .send({
        chargeCode: code.code,
        items: [
          { itemId: flask.id, quantity: 3 },
          { itemId: gloves.id, quantity: 5 },
        ],
        notes: 'For the Tuesday practical',
        neededBy: '2026-12-01',
      })
      .expect(201);
    const day = new Date().toISOString().slice(0, 10).replace(/-/g, '');
    expect(res.body.reference).toMatch(new RegExp(`^RQ-${day}-\\d+$`));
    expect(res.body).toMatchObject({
      status: 'submitted',
      chargeCode: code.code,
      subtotalAmount: '19.50',
      vatAmount: '2.40',
      totalAmount: '21.90',
      notes: 'For the Tuesday practical',
      neededBy: '2026-12-01',
      requestedBy: { id: requester.id, email: requester.email },
      saleId: null,
      shortfall: [],
      approverEmail: approver.email,
    });
    expect(res.body.items).toEqual([
      expect.objectContaining({
        itemId: flask.id,
        itemName: 'Beaker 250 ml',
        quantity: '3.00',
        unitPrice: '4.00',
        vatRate: '0.2000',
        total: '14.40',
        short: false,
        fulfilledQuantity: null,
      }),
      // a requester sees the item's availability before fulfilment, never a comparison with the count (issue 40)
      expect.objectContaining({
        itemId: gloves.id,
        quantity: '5.00',
        total: '7.50',
        short: false,
        availability: 'in_stock',
      }),
    ]);
    const staffView = await asStaff.get(`/api/requests/${res.body.id}`).expect(200);
    expect(staffView.body.items[1]).toMatchObject({ short: true, shortReason: 'stock' });
    expect(res.body.history).toEqual([
      expect.objectContaining({
        status: 'submitted',
        by: expect.objectContaining({ id: requester.id }),
        comment: null,
      }),
    ]);
    expect(await eventsOf(res.body.reference)).toEqual(['request.submitted']);
    expect(await emailsOf(res.body.id)).toEqual([]);
    // references are a sequence
    const next = await submit(asRequester, code.code, [{ itemId: flask.id, quantity: 1 }]).expect(201);
    expect(Number(next.body.reference.split('-')[2])).toBeGreaterThan(Number(res.body.reference.split('-')[2]));
  });

  it("400 with the counter's messages: unknown, expired, not yet valid, on hold, excluded category", async () => {
    const category = await buildCategory(t.db);
    const item = await buildStockedItem(t.db, 5, { categoryId: category.id });
    const DAY = 86_400_000;
    const expired = await codeFor({
      validFrom: new Date(Date.now() - 10 * DAY),
      validUntil: new Date(Date.now() - DAY),
    });
    const future = await codeFor({
      validFrom: new Date(Date.now() + DAY),
      validUntil: new Date(Date.now() + 10 * DAY),
    });
    const held = await codeFor({ onHold: true, holdReason: 'Grant audit' });
    const excluding = await codeFor({ excludedCategoryIds: [category.id] });
    const line = [{ itemId: item.id, quantity: 1 }];
    const cases: [string, RegExp][] = [
      // a requester hears one message for an unknown code as for any code they are not authorised on (issue 40)
      ['NO-SUCH-CODE', /^You are not authorised on charge code 'NO-SUCH-CODE'$/],
      [expired.code, new RegExp(`^Charge code '${expired.code}' has expired on \\d\\d/\\d\\d/\\d{4}\\.$`)],
      [future.code, new RegExp(`^Charge code '${future.code}' is not yet valid until \\d\\d/\\d\\d/\\d{4}\\.$`)],
      [held.code, new RegExp(`^Charge code '${held.code}' is on hold: Grant audit$`)],
      [excluding.code, new RegExp(`^Charge code '${excluding.code}' cannot be used for some items`)],
    ];
    for (const [code, message] of cases) {
      const res = await submit(asRequester, code, line).expect(400);
      expect(res.body.message, code).toMatch(message);
    }
    expect(
      await t.db('stock_requests').where({ requested_by: requester.id, charge_code: held.code }).first(),
    ).toBeUndefined();
  });

  it('400 with chargeCodes.requireAuthorisedUser on, when the person is not an authorised user of the code (a requester: one message, issue 40)', async () => {
    const notMine = await buildChargeCode(t.db, { authorisedEmails: ['someone-else@example.ac.uk'] });
    const mine = await codeFor();
    const item = await buildStockedItem(t.db, 5);
    await asAdmin
      .put('/api/settings/chargeCodes.requireAuthorisedUser')
      .send({ value: { enabled: true } })
      .expect(200);
    try {
      const res = await submit(asRequester, notMine.code, [{ itemId: item.id, quantity: 1 }]).expect(400);
      expect(res.body.message).toBe(`You are not authorised on charge code '${notMine.code}'`);
      const byStaff = await submit(asStaff, notMine.code, [{ itemId: item.id, quantity: 1 }]).expect(400);
      expect(byStaff.body.message).toMatch(/^Recipient '.+' is not an authorised user of charge code/);
      await submit(asRequester, mine.code, [{ itemId: item.id, quantity: 1 }]).expect(201);
    } finally {
      await asAdmin
        .put('/api/settings/chargeCodes.requireAuthorisedUser')
        .send({ value: { enabled: false } })
        .expect(200);
    }
  });

  it('400 names invalid fields; 401 without a session', async () => {
    const res = await asRequester.post('/api/requests').send({ chargeCode: '', items: [] }).expect(400);
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['chargeCode', 'items']));
    await t.request.post('/api/requests').send({}).expect(401);
  });
});

describe('approval', () => {
  it('over the threshold: awaiting_approval, the approver emailed with the link; approved by the approver, the requester emailed', async () => {
    const code = await codeFor({ approvalThreshold: '50.00' });
    const item = await buildStockedItem(t.db, 100, { price: '30.00', vatRate: '0' });
    const under = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 1 }]).expect(201);
    expect(under.body.status).toBe('submitted');
    const res = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 2 }]).expect(201);
    expect(res.body.status).toBe('awaiting_approval');
    expect(res.body.history.map((h: { status: string }) => h.status)).toEqual(['submitted', 'awaiting_approval']);
    // money in the history carries its currency sign (issue 39)
    expect(res.body.history[1].comment).toBe("Total £60.00 is over the code's approval threshold £50.00");
    expect(await eventsOf(res.body.reference)).toEqual(['request.submitted', 'request.awaiting_approval']);
    expect(await emailsOf(res.body.id)).toEqual([['request-approval-needed', approver.email]]);
    const [email] = await outboxMessages(t.db, { kind: 'request-approval-needed', destination: approver.email });
    expect(email.payload).toMatchObject({
      subject: `Request ${res.body.reference} needs your approval`,
      template: 'request-approval-needed',
      data: { requestId: res.body.id, reference: res.body.reference, totalAmount: '60.00' },
    });

    // the approver (a requester, not the requester) sees it; staff who are not the approver or an admin may not approve
    await asApprover.get(`/api/requests/${res.body.id}`).expect(200);
    const refused = await asStaff.post(`/api/requests/${res.body.id}/approve`).send({}).expect(403);
    expect(refused.body.message).toBe("Only the charge code's approver or an admin may approve this request");
    await asManager.post(`/api/requests/${res.body.id}/reject`).send({}).expect(403);
    await asOther.post(`/api/requests/${res.body.id}/approve`).send({}).expect(404);
    // a submitted request is not awaiting approval
    const early = await asApprover.post(`/api/requests/${under.body.id}/approve`).send({}).expect(409);
    expect(early.body.message).toBe(`Request ${under.body.reference} is submitted; it cannot become approved`);

    const approved = await asApprover
      .post(`/api/requests/${res.body.id}/approve`)
      .send({ comment: 'Fine for the grant' })
      .expect(200);
    expect(approved.body.status).toBe('approved');
    expect(approved.body.history.at(-1)).toMatchObject({
      status: 'approved',
      by: { id: approver.id },
      comment: 'Fine for the grant',
    });
    expect(await emailsOf(res.body.id)).toEqual([
      ['request-approval-needed', approver.email],
      ['request-approved', requester.email],
    ]);
    expect((await eventsOf(res.body.reference)).at(-1)).toBe('request.approved');
    const again = await asApprover.post(`/api/requests/${res.body.id}/approve`).send({}).expect(409);
    expect(again.body.message).toBe(`Request ${res.body.reference} is approved; it cannot become approved`);
    const rejectLate = await asAdmin.post(`/api/requests/${res.body.id}/reject`).send({}).expect(409);
    expect(rejectLate.body.message).toBe(`Request ${res.body.reference} is approved; it cannot become rejected`);
  });

  it('an admin rejects with a comment; the requester is emailed; a rejected request cannot be fulfilled or cancelled', async () => {
    const code = await codeFor({ approvalThreshold: '0' });
    const item = await buildStockedItem(t.db, 100, { price: '5.00' });
    const res = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 1 }]).expect(201);
    const rejected = await asAdmin
      .post(`/api/requests/${res.body.id}/reject`)
      .send({ comment: 'Use the teaching budget' })
      .expect(200);
    expect(rejected.body).toMatchObject({ status: 'rejected' });
    expect(rejected.body.history.at(-1)).toMatchObject({ status: 'rejected', comment: 'Use the teaching budget' });
    expect((await emailsOf(res.body.id)).at(-1)).toEqual(['request-rejected', requester.email]);
    expect((await eventsOf(res.body.reference)).at(-1)).toBe('request.rejected');
    const fulfil = await asStaff.post(`/api/requests/${res.body.id}/fulfil`).send({}).expect(409);
    expect(fulfil.body.message).toBe(`Request ${res.body.reference} is rejected; it cannot become ready`);
    await asRequester.post(`/api/requests/${res.body.id}/cancel`).send({}).expect(409);
  });

  it('awaiting approval cannot be fulfilled (409 naming both states)', async () => {
    const code = await codeFor({ approvalThreshold: '1.00' });
    const item = await buildStockedItem(t.db, 100, { price: '5.00' });
    const res = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 1 }]).expect(201);
    const refused = await asStaff.post(`/api/requests/${res.body.id}/fulfil`).expect(409);
    expect(refused.body.message).toBe(`Request ${res.body.reference} is awaiting_approval; it cannot become ready`);
  });
});

describe('POST /api/requests/{id}/fulfil and /collect', () => {
  it('sells the request through the counter: stock out, movements, a sale with the lines; ready with saleId; the requester emailed; then collected', async () => {
    const code = await codeFor();
    const item = await buildStockedItem(t.db, 10, { price: '2.00', vatRate: '0' });
    const res = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 4 }]).expect(201);
    await asRequester.post(`/api/requests/${res.body.id}/fulfil`).send({}).expect(403);
    const ready = await asStaff.post(`/api/requests/${res.body.id}/fulfil`).expect(200);
    expect(ready.body).toMatchObject({ status: 'ready', shortfall: [], saleNumber: expect.stringMatching(/^SALE-/) });
    expect(ready.body.items[0]).toMatchObject({ quantity: '4.00', fulfilledQuantity: '4.00' });
    expect(await stockOf(t.db, item.id)).toBe('6.00');
    const movements = await movementsOf(t.db, item.id);
    expect(movements.at(-1)).toMatchObject({
      type: 'out',
      reference_type: 'sale',
      reference_id: ready.body.saleNumber,
    });
    const sale = await asStaff.get(`/api/sales/${ready.body.saleId}`).expect(200);
    expect(sale.body).toMatchObject({
      chargeCode: code.code,
      totalAmount: '8.00',
      customerNotes: `Request ${res.body.reference}`,
    });
    expect(await emailsOf(res.body.id)).toEqual([['request-ready', requester.email]]);
    expect((await eventsOf(res.body.reference)).at(-1)).toBe('request.ready');
    // the requester may not cancel a ready request
    const late = await asRequester.post(`/api/requests/${res.body.id}/cancel`).send({}).expect(409);
    expect(late.body.message).toBe(`Request ${res.body.reference} is ready; it cannot become cancelled`);

    await asRequester.post(`/api/requests/${res.body.id}/collect`).send({}).expect(403);
    const collected = await asStaff.post(`/api/requests/${res.body.id}/collect`).send({}).expect(200);
    expect(collected.body).toMatchObject({ status: 'collected', deliveredTo: 'Rita Researcher' });
    const delivered = await t.db('sales').where({ id: ready.body.saleId }).first();
    expect(delivered).toMatchObject({ delivered_to: 'Rita Researcher', delivered_to_email: requester.email });
    expect(delivered.delivered_at).not.toBeNull();
    expect((await eventsOf(res.body.reference)).at(-1)).toBe('request.collected');
    const twice = await asStaff.post(`/api/requests/${res.body.id}/collect`).send({}).expect(409);
    expect(twice.body.message).toBe(`Request ${res.body.reference} is collected; it cannot become collected`);
    // the sale is charged to the requester: theirs to read, not another's
    const sales = await asRequester.get('/api/requests/sales').expect(200);
    expect(sales.body.sales.map((s: { id: number }) => s.id)).toContain(ready.body.saleId);
    expect(sales.body.sales.find((s: { id: number }) => s.id === ready.body.saleId)).toMatchObject({
      chargeCode: code.code,
      deliveredTo: 'Rita Researcher',
    });
    const others = await asOther.get('/api/requests/sales').expect(200);
    expect(others.body.sales.map((s: { id: number }) => s.id)).not.toContain(ready.body.saleId);
    await asRequester.get(`/api/sales/${ready.body.saleId}`).expect(403);
    // the requester sees it collected
    const mine = await asRequester.get(`/api/requests/${res.body.id}`).expect(200);
    expect(mine.body.history.map((h: { status: string }) => h.status)).toEqual(['submitted', 'ready', 'collected']);
  });

  it('collect records who collected on the sale when given', async () => {
    const code = await codeFor();
    const item = await buildStockedItem(t.db, 10);
    const res = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 1 }]).expect(201);
    const ready = await asStaff.post(`/api/requests/${res.body.id}/fulfil`).send({}).expect(200);
    await asStaff.post(`/api/requests/${res.body.id}/collect`).send({ deliveredTo: 'Sam, the lab tech' }).expect(200);
    expect(await t.db('sales').where({ id: ready.body.saleId }).first()).toMatchObject({
      delivered_to: 'Sam, the lab tech',
    });
  });

  it('short stock: smaller quantities sold, never more than the stock; the shortfall recorded and emailed', async () => {
    const code = await codeFor();
    const few = await buildStockedItem(t.db, 3, { price: '1.00', vatRate: '0' });
    const none = await buildStockedItem(t.db, 0, { price: '1.00', vatRate: '0' });
    const res = await submit(asRequester, code.code, [
      { itemId: few.id, quantity: 5 },
      { itemId: none.id, quantity: 2 },
    ]).expect(201);
    // the requester sees availability; the staff see the lines short (issue 40)
    expect(res.body.items.map((i: { availability: string }) => i.availability)).toEqual(['in_stock', 'out']);
    const staffView = await asStaff.get(`/api/requests/${res.body.id}`).expect(200);
    expect(staffView.body.items.map((i: { short: boolean }) => i.short)).toEqual([true, true]);
    const ready = await asStaff.post(`/api/requests/${res.body.id}/fulfil`).send({}).expect(200);
    expect(ready.body.shortfall).toEqual([
      { itemId: few.id, itemName: expect.any(String), requested: '5.00', fulfilled: '3.00', reason: 'stock' },
      { itemId: none.id, itemName: expect.any(String), requested: '2.00', fulfilled: '0.00', reason: 'stock' },
    ]);
    expect(ready.body.items.map((i: { short: boolean; shortReason: string }) => [i.short, i.shortReason])).toEqual([
      [true, 'stock'],
      [true, 'stock'],
    ]);
    expect(ready.body.chargedTotal).toBe('3.00');
    expect(await stockOf(t.db, few.id)).toBe('0.00');
    expect(await stockOf(t.db, none.id)).toBe('0.00');
    const sale = await asStaff.get(`/api/sales/${ready.body.saleId}`).expect(200);
    expect(sale.body.items.map((l: { itemId: number; quantity: string }) => [l.itemId, l.quantity])).toEqual([
      [few.id, '3.00'],
    ]);
    expect(await emailsOf(res.body.id)).toEqual([
      ['request-ready', requester.email],
      ['request-shortfall', requester.email],
    ]);
  });

  it('409 when nothing of the request is in stock, and nothing is written', async () => {
    const code = await codeFor();
    const none = await buildStockedItem(t.db, 0);
    const res = await submit(asRequester, code.code, [{ itemId: none.id, quantity: 1 }]).expect(201);
    const refused = await asStaff.post(`/api/requests/${res.body.id}/fulfil`).send({}).expect(409);
    expect(refused.body.message).toBe('None of the requested items is in stock; nothing was sold');
    expect((await asStaff.get(`/api/requests/${res.body.id}`).expect(200)).body.status).toBe('submitted');
  });

  it('quantities edited at fulfilment: at most what was requested (400 otherwise), a line left out is not handed out', async () => {
    const code = await codeFor();
    const a = await buildStockedItem(t.db, 10);
    const b = await buildStockedItem(t.db, 10);
    const res = await submit(asRequester, code.code, [
      { itemId: a.id, quantity: 4 },
      { itemId: b.id, quantity: 2 },
    ]).expect(201);
    const over = await asStaff
      .post(`/api/requests/${res.body.id}/fulfil`)
      .send({ items: [{ itemId: a.id, quantity: 5 }] })
      .expect(400);
    expect(over.body.errors).toEqual([{ field: 'items.0.quantity', message: 'must be at most the 4 requested' }]);
    const stranger = await buildStockedItem(t.db, 10);
    await asStaff
      .post(`/api/requests/${res.body.id}/fulfil`)
      .send({ items: [{ itemId: stranger.id, quantity: 1 }] })
      .expect(400);
    const ready = await asStaff
      .post(`/api/requests/${res.body.id}/fulfil`)
      .send({ items: [{ itemId: a.id, quantity: 2 }] })
      .expect(200);
    expect(ready.body.items.map((i: { fulfilledQuantity: string }) => i.fulfilledQuantity)).toEqual(['2.00', '0.00']);
    expect(await stockOf(t.db, a.id)).toBe('8.00');
    expect(await stockOf(t.db, b.id)).toBe('10.00');
  });

  it('a code put on hold after submission: fulfilment refused with the hold message, nothing sold', async () => {
    const code = await codeFor();
    const item = await buildStockedItem(t.db, 10);
    const res = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 1 }]).expect(201);
    await asStaff
      .patch(`/api/chargecodes/${code.code}/hold`)
      .send({ onHold: true, holdReason: 'Overspent' })
      .expect(200);
    const refused = await asStaff.post(`/api/requests/${res.body.id}/fulfil`).send({}).expect(400);
    expect(refused.body.message).toBe(`Charge code '${code.code}' is on hold: Overspent`);
    expect(await stockOf(t.db, item.id)).toBe('10.00');
    const after = (await asStaff.get(`/api/requests/${res.body.id}`).expect(200)).body;
    expect(after).toMatchObject({ status: 'submitted', saleId: null });
    expect(
      await t
        .db('sales')
        .where({ customer_notes: `Request ${res.body.reference}` })
        .first(),
    ).toBeUndefined();
  });

  it('two staff fulfilling the same request at once make one sale: one 200, one 409', async () => {
    const code = await codeFor();
    const item = await buildStockedItem(t.db, 10);
    const res = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 3 }]).expect(201);
    // hold the request's row so both fulfilments are in flight together, then let them race
    const holder = await t.db.transaction();
    await holder('stock_requests').where({ id: res.body.id }).forUpdate();
    const racing = Promise.all([
      asStaff
        .post(`/api/requests/${res.body.id}/fulfil`)
        .send({})
        .then((r) => r),
      asStaff2
        .post(`/api/requests/${res.body.id}/fulfil`)
        .send({})
        .then((r) => r),
    ]);
    await untilSomeoneWaitsOnALock(t.db);
    await holder.commit();
    const answers = await racing;
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)!.body.message).toBe(
      `Request ${res.body.reference} is ready; it cannot become ready`,
    );
    const sales = await t.db('sales').where({ customer_notes: `Request ${res.body.reference}` });
    expect(sales).toHaveLength(1);
    expect(await stockOf(t.db, item.id)).toBe('7.00');
  });
});

describe('a part-fulfilled request (issue 39)', () => {
  /** The repro: 1 x CHM-ETH-25 (£50.40 with VAT) and 2 x CHM-ACE-1 (£17.16 each, 7 in stock), £84.72 in all. */
  async function repro() {
    const code = await codeFor();
    const suffix = Math.random().toString(36).slice(2, 7).toUpperCase();
    const ethanol = await buildStockedItem(t.db, 5, {
      name: 'Ethanol 2.5 l',
      sku: `CHM-ETH-25-${suffix}`,
      price: '42.00',
      vatRate: '0.2',
    });
    const acetone = await buildStockedItem(t.db, 7, {
      name: 'Acetone 1 l',
      sku: `CHM-ACE-1-${suffix}`,
      price: '14.30',
      vatRate: '0.2',
    });
    const res = await submit(asRequester, code.code, [
      { itemId: ethanol.id, quantity: 1 },
      { itemId: acetone.id, quantity: 2 },
    ]).expect(201);
    expect(res.body).toMatchObject({ totalAmount: '84.72', chargedTotal: null });
    return { code, ethanol, acetone, request: res.body as { id: number; reference: string } };
  }

  it('200 Acetone lowered to 1: chargedTotal is the sale’s £67.56 beside the £84.72 asked; the line short for staff; the emails say so', async () => {
    const { ethanol, acetone, request } = await repro();
    const ready = await asStaff
      .post(`/api/requests/${request.id}/fulfil`)
      .send({
        items: [
          { itemId: ethanol.id, quantity: 1 },
          { itemId: acetone.id, quantity: 1 },
        ],
      })
      .expect(200);
    const sale = await asStaff.get(`/api/sales/${ready.body.saleId}`).expect(200);
    expect(sale.body.totalAmount).toBe('67.56');
    for (const body of [ready.body, (await asRequester.get(`/api/requests/${request.id}`).expect(200)).body]) {
      expect(body).toMatchObject({ totalAmount: '84.72', chargedTotal: '67.56' });
      expect(body.items.map((i: { short: boolean; shortReason: string | null }) => [i.short, i.shortReason])).toEqual([
        [false, null],
        [true, 'staff'],
      ]);
      expect(body.shortfall).toEqual([
        { itemId: acetone.id, itemName: 'Acetone 1 l', requested: '2.00', fulfilled: '1.00', reason: 'staff' },
      ]);
    }
    // the requester's list carries both totals too
    const mine = await asRequester.get('/api/requests?mine=true&status=ready').expect(200);
    expect(mine.body.requests.find((r: { id: number }) => r.id === request.id)).toMatchObject({
      totalAmount: '84.72',
      chargedTotal: '67.56',
    });

    // the state afterwards: the line records why, the request what was charged
    expect(await t.db('stock_request_items').where({ request_id: request.id }).orderBy('position')).toEqual([
      expect.objectContaining({ fulfilled_quantity: '1.00', short_reason: null }),
      expect.objectContaining({ fulfilled_quantity: '1.00', short_reason: 'staff' }),
    ]);
    expect(await t.db('stock_requests').where({ id: request.id }).first()).toMatchObject({ charged_total: '67.56' });

    // the emails say the stores lowered the quantity (7 were in stock), and what was charged
    const [shortfall] = await outboxMessages(t.db, { kind: 'request-shortfall', destination: requester.email });
    const shortfallEmail = await renderEmail(
      shortfall.payload as Parameters<typeof renderEmail>[0],
      'https://stores.example.ac.uk',
    );
    expect(shortfallEmail.text).toContain('- Acetone 1 l: 1 of 2 (the stores lowered the quantity)');
    expect(shortfallEmail.text).not.toContain('stock ran short');
    expect(shortfallEmail.text).toContain(
      `£67.56 was charged to ${ready.body.chargeCode} rather than the £84.72 asked`,
    );
    const [readyMessage] = await outboxMessages(t.db, { kind: 'request-ready', destination: requester.email });
    const readyEmail = await renderEmail(
      readyMessage.payload as Parameters<typeof renderEmail>[0],
      'https://stores.example.ac.uk',
    );
    expect(readyEmail.text).toContain(`Charged to ${ready.body.chargeCode}: £67.56 (sale ${ready.body.saleNumber}).`);
  });

  it('200 short for stock whenever the stores held fewer than requested, even lowered to what they held; for staff when one with enough is left out', async () => {
    const code = await codeFor();
    const scarce = await buildStockedItem(t.db, 2, { price: '1.00', vatRate: '0' });
    const fewer = await buildStockedItem(t.db, 1, { price: '1.00', vatRate: '0' });
    const plenty = await buildStockedItem(t.db, 10, { price: '1.00', vatRate: '0' });
    const res = await submit(asRequester, code.code, [
      { itemId: scarce.id, quantity: 5 },
      { itemId: fewer.id, quantity: 2 },
      { itemId: plenty.id, quantity: 3 },
    ]).expect(201);
    const staffView = await asStaff.get(`/api/requests/${res.body.id}`).expect(200);
    expect(staffView.body.items.map((i: { shortReason: string | null }) => i.shortReason)).toEqual([
      'stock',
      'stock',
      null,
    ]);
    const ready = await asStaff
      .post(`/api/requests/${res.body.id}/fulfil`)
      .send({
        items: [
          { itemId: scarce.id, quantity: 4 },
          { itemId: fewer.id, quantity: 1 },
        ],
      })
      .expect(200);
    expect(ready.body.shortfall.map((l: { fulfilled: string; reason: string }) => [l.fulfilled, l.reason])).toEqual([
      ['2.00', 'stock'],
      ['1.00', 'stock'],
      ['0.00', 'staff'],
    ]);
    expect(ready.body).toMatchObject({ totalAmount: '10.00', chargedTotal: '3.00' });
    const [shortfall] = await outboxMessages(t.db, { kind: 'request-shortfall', destination: requester.email });
    const text = (await renderEmail(shortfall.payload as Parameters<typeof renderEmail>[0], 'https://s.example')).text;
    expect(text).toContain('(stock ran short)');
    expect(text).toContain('(the stores lowered the quantity)');
  });

  it('200 the pages show what was charged beside what was asked: the request, the requester’s list, the staff queue', async () => {
    const { ethanol, acetone, request } = await repro();
    const show = await asRequester.get(`/requests/${request.id}`).expect(200);
    expect(show.text).not.toContain('£67.56');
    await asStaff
      .post(`/api/requests/${request.id}/fulfil`)
      .send({
        items: [
          { itemId: ethanol.id, quantity: 1 },
          { itemId: acetone.id, quantity: 1 },
        ],
      })
      .expect(200);
    const page = await asRequester.get(`/requests/${request.id}`).expect(200);
    expect(textOf(page.text)).toMatch(/Total asked £84\.72/);
    expect(textOf(page.text)).toMatch(/Charged \(sale SALE-[\d-]+\) £67\.56/);
    expect(textOf(page.text)).toContain('Acetone 1 l: 1 of 2 (the stores lowered the quantity)');
    expect(page.text).not.toContain('The stores had less than was asked for');
    const row = (html: string) =>
      textOf(
        new RegExp(`<tr>\\s*<td data-label="Request"><a href="/requests/${request.id}">[\\s\\S]*?</tr>`).exec(
          html,
        )?.[0] ?? '',
      );
    expect(row((await asRequester.get('/requests').expect(200)).text)).toMatch(/£84\.72\s+£67\.56/);
    expect(row((await asStaff.get('/requests?status=ready').expect(200)).text)).toMatch(/£84\.72\s+£67\.56/);
  });
});

describe('cancel, visibility and the list', () => {
  it('the requester or staff cancel before ready; another requester gets 404; the approver 403', async () => {
    const code = await codeFor();
    const item = await buildStockedItem(t.db, 10);
    const mine = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 1 }]).expect(201);
    await asOther.post(`/api/requests/${mine.body.id}/cancel`).send({}).expect(404);
    await asOther.get(`/api/requests/${mine.body.id}`).expect(404);
    const refused = await asApprover.post(`/api/requests/${mine.body.id}/cancel`).send({}).expect(403);
    expect(refused.body.message).toBe('Only the requester or the stores staff may cancel this request');
    const cancelled = await asRequester
      .post(`/api/requests/${mine.body.id}/cancel`)
      .send({ comment: 'Found some in the lab' })
      .expect(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect(cancelled.body.history.at(-1)).toMatchObject({ status: 'cancelled', comment: 'Found some in the lab' });
    expect((await eventsOf(mine.body.reference)).at(-1)).toBe('request.cancelled');
    const again = await asStaff.post(`/api/requests/${mine.body.id}/cancel`).send({}).expect(409);
    expect(again.body.message).toBe(`Request ${mine.body.reference} is cancelled; it cannot become cancelled`);
    const approved = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 1 }]).expect(201);
    await asStaff.post(`/api/requests/${approved.body.id}/cancel`).expect(200);
  });

  it('lists: staff every request oldest first; a requester only their own; status, mine and toApprove filters', async () => {
    const code = await codeFor({ approvalThreshold: '100.00' });
    const item = await buildStockedItem(t.db, 100, { price: '60.00', vatRate: '0' });
    const first = await submit(asOther, code.code, [{ itemId: item.id, quantity: 1 }]).expect(201);
    const second = await submit(asRequester, code.code, [{ itemId: item.id, quantity: 2 }]).expect(201);
    expect(second.body.status).toBe('awaiting_approval');

    const all = await asStaff.get('/api/requests').query({ limit: 200 }).expect(200);
    const ids = all.body.requests.map((r: { id: number }) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids).toEqual(expect.arrayContaining([first.body.id, second.body.id]));
    expect(all.body.total).toBe(ids.length);

    const own = await asRequester.get('/api/requests').query({ limit: 200 }).expect(200);
    expect(own.body.requests.every((r: { requestedBy: { id: string } }) => r.requestedBy.id === requester.id)).toBe(
      true,
    );
    expect(own.body.requests.map((r: { id: number }) => r.id)).not.toContain(first.body.id);

    const waiting = await asStaff.get('/api/requests').query({ status: 'awaiting_approval', limit: 200 }).expect(200);
    expect(waiting.body.requests.every((r: { status: string }) => r.status === 'awaiting_approval')).toBe(true);
    expect(waiting.body.requests.map((r: { id: number }) => r.id)).toContain(second.body.id);

    const staffMine = await asStaff.get('/api/requests').query({ mine: 'true' }).expect(200);
    expect(staffMine.body.requests).toEqual([]);

    const toApprove = await asApprover.get('/api/requests').query({ toApprove: 'true', limit: 200 }).expect(200);
    expect(toApprove.body.requests.map((r: { id: number }) => r.id)).toContain(second.body.id);
    expect(toApprove.body.requests.every((r: { approverEmail: string }) => r.approverEmail === approver.email)).toBe(
      true,
    );

    await asRequester.get('/api/requests').query({ status: 'nope' }).expect(400);
  });
});
