import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildStockedItem } from './helpers/inventory-factories';
import { outboxMessages } from '../src/modules/outbox/outbox.queries';
import { renderEmail } from '../src/modules/emails/emails.render';
import type { UserRow } from '../src/modules/users/users.service';

// Issue 39, item 6: approved requests need a nudge. The staff queue opens on the first state that
// has work, and a request becoming ready to fulfil is emailed to the stores' request inbox (the
// setting requests.notifyEmails, else the managers keeping the order-received email on), the
// digest switch on My account covering it. A database of its own: who the managers are is known.

let t: TestApp;
let requester: UserRow;
let approver: UserRow;
let keeper: UserRow;
let noOrderEmails: UserRow;
let noDigest: UserRow;
let asRequester: supertest.Agent;
let asApprover: supertest.Agent;
let asStaff: supertest.Agent;
let asAdmin: supertest.Agent;

beforeAll(async () => {
  t = await testApp();
  requester = await buildUser(t.db, { role: 'requester' });
  approver = await buildUser(t.db, { role: 'requester' });
  // the managers: one keeps both emails on (the default), one turned order received off, an admin turned the digest off
  keeper = await buildUser(t.db, { role: 'manager' });
  noOrderEmails = await buildUser(t.db, { role: 'manager' });
  noDigest = await buildUser(t.db, { role: 'admin' });
  // neither a user of the stores nor an inactive manager is a manager who gets it
  await buildUser(t.db, { role: 'user' });
  await buildUser(t.db, { role: 'manager', isActive: false });
  const [asNoOrderEmails, asNoDigest] = await Promise.all([t.loginAs(noOrderEmails), t.loginAs(noDigest)]);
  await asNoOrderEmails.patch('/api/email-preferences').send({ orderReceived: false }).expect(200);
  await asNoDigest.patch('/api/email-preferences').send({ lowStockDigest: false }).expect(200);
  [asRequester, asApprover, asStaff, asAdmin] = await Promise.all([
    t.loginAs(requester),
    t.loginAs(approver),
    t.loginAs(await buildUser(t.db, { role: 'user' })),
    t.loginAs(noDigest),
  ]);
});
afterAll(() => t.close());

/** The addresses the request-to-fulfil email about this request was queued to, sorted. */
async function inboxOf(requestId: number): Promise<string[]> {
  const messages = await outboxMessages(t.db, { kind: 'request-to-fulfil' }, { limit: 1000, offset: 0 });
  return messages
    .filter((m) => (m.payload as { data: { requestId: number } }).data.requestId === requestId)
    .map((m) => m.destination)
    .sort();
}

async function request(quantity: number) {
  const code = await buildChargeCode(t.db, {
    authorisedEmails: [requester.email],
    approverEmail: approver.email,
    approvalThreshold: '50.00',
  });
  const item = await buildStockedItem(t.db, 100, { name: 'Nitrile gloves', price: '30.00', vatRate: '0' });
  const res = await asRequester
    .post('/api/requests')
    .send({ chargeCode: code.code, items: [{ itemId: item.id, quantity }] })
    .expect(201);
  return res.body as { id: number; reference: string; status: string };
}

const setInbox = (emails: unknown) => asAdmin.put('/api/settings/requests.notifyEmails').send({ value: { emails } });

describe('the stores’ request inbox', () => {
  it('201 a request under the threshold is emailed at once to the managers keeping the order-received email and the digest on', async () => {
    const under = await request(1);
    expect(under.status).toBe('submitted');
    expect(await inboxOf(under.id)).toEqual([keeper.email.toLowerCase()]);
    const [message] = await outboxMessages(t.db, { kind: 'request-to-fulfil' }, { limit: 1000, offset: 0 }).then(
      (all) => all.filter((m) => (m.payload as { data: { requestId: number } }).data.requestId === under.id),
    );
    expect(message.payload).toMatchObject({ subject: `Request ${under.reference} is ready to fulfil` });
    const email = await renderEmail(message.payload as Parameters<typeof renderEmail>[0], 'https://stores.example');
    expect(email.text).toContain(`Request ${under.reference} from`);
    expect(email.text).toContain('- Nitrile gloves');
    expect(email.text).toContain(`Fulfil it: https://stores.example/requests/${under.id}`);
    expect(email.text).toContain('You get this email because the low-stock digest is switched on for you.');
  });

  it('200 a request over the threshold is emailed only once approved', async () => {
    const over = await request(2);
    expect(over.status).toBe('awaiting_approval');
    expect(await inboxOf(over.id)).toEqual([]);
    await asApprover.post(`/api/requests/${over.id}/approve`).send({}).expect(200);
    expect(await inboxOf(over.id)).toEqual([keeper.email.toLowerCase()]);
    // fulfilling it tells the inbox nothing more
    await asStaff.post(`/api/requests/${over.id}/fulfil`).send({}).expect(200);
    expect(await inboxOf(over.id)).toEqual([keeper.email.toLowerCase()]);
  });

  it('200 requests.notifyEmails names the inbox: lower case, each once; a person named who turned the digest off is left out', async () => {
    const saved = await setInbox(['Stores@Example.ac.uk', 'stores@example.ac.uk', noDigest.email]).expect(200);
    expect(saved.body.value).toEqual({ emails: ['stores@example.ac.uk', noDigest.email.toLowerCase()] });
    try {
      const under = await request(1);
      expect(await inboxOf(under.id)).toEqual(['stores@example.ac.uk']);
    } finally {
      await setInbox([]).expect(200);
    }
    // an empty list: the managers again
    const next = await request(1);
    expect(await inboxOf(next.id)).toEqual([keeper.email.toLowerCase()]);
  });

  it('400 requests.notifyEmails must be a list of email addresses; nothing is saved', async () => {
    const res = await setInbox(['stores@example.ac.uk', 'not an address']).expect(400);
    expect(res.body.errors).toEqual([
      expect.objectContaining({ field: 'value.emails.1', message: 'must be an email address' }),
    ]);
    await setInbox('stores@example.ac.uk').expect(400);
    expect(await t.db('settings').where({ key: 'requests.notifyEmails' }).first()).toMatchObject({
      value: { emails: [] },
    });
  });

  it('the Settings page saves the request inbox, and refuses an address that is not one beside the field', async () => {
    const page = await asAdmin.get('/settings').expect(200);
    expect(page.text).toContain('Request inbox addresses');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    const refused = await asAdmin
      .post('/settings/requests')
      .type('form')
      .send({ _csrf: csrf, notifyEmails: 'stores@example.ac.uk, nonsense' })
      .expect(422);
    expect(refused.text).toContain('must be an email address');
    expect(refused.text).toContain('value="stores@example.ac.uk, nonsense"');
    await asAdmin
      .post('/settings/requests')
      .type('form')
      .send({ _csrf: csrf, notifyEmails: 'Stores@example.ac.uk; picking@example.ac.uk' })
      .expect(303);
    expect((await t.db('settings').where({ key: 'requests.notifyEmails' }).first()).value).toEqual({
      emails: ['stores@example.ac.uk', 'picking@example.ac.uk'],
    });
    const shown = await asAdmin.get('/settings').expect(200);
    expect(shown.text).toContain('value="stores@example.ac.uk, picking@example.ac.uk"');
    await setInbox([]).expect(200);
  });
});

describe('GET /requests (the staff queue)', () => {
  it('200 opens on the first state with work: Approved (1) rather than an empty Submitted', async () => {
    // every request so far is out of the queue's way: fulfilled, or cancelled
    for (const row of await t.db('stock_requests').whereIn('status', ['submitted', 'approved', 'awaiting_approval']))
      await asStaff.post(`/api/requests/${row.id}/cancel`).send({}).expect(200);
    for (const row of await t.db('stock_requests').where({ status: 'ready' }))
      await asStaff.post(`/api/requests/${row.id}/collect`).send({}).expect(200);

    const over = await request(2);
    const waiting = await asStaff.get('/requests').expect(200);
    // only awaiting approval has any: the queue shows it rather than nothing
    expect(waiting.text).toMatch(/aria-current="page">Awaiting approval <span class="count">\(1\)/);

    await asApprover.post(`/api/requests/${over.id}/approve`).send({}).expect(200);
    const queue = await asStaff.get('/requests').expect(200);
    expect(queue.text).toMatch(/aria-current="page">Approved <span class="count">\(1\)/);
    expect(queue.text).toContain(`>${over.reference}</a>`);
    // asked for, a state with nothing in it is shown as before
    const submitted = await asStaff.get('/requests?status=submitted').expect(200);
    expect(submitted.text).toMatch(/aria-current="page">Submitted <span class="count">\(0\)/);
  });
});
