import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildStockedItem } from './helpers/inventory-factories';
import type { UserRow } from '../src/modules/users/users.service';

// Issue 40, finding 5: a requester is held to the codes they are authorised on, whatever
// chargeCodes.requireAuthorisedUser says, hears one message for any other code (unknown, held or
// not theirs), and sees an item's availability on their request's lines, never a comparison with the count.

let t: TestApp;
let requester: UserRow;
let asRequester: supertest.Agent;
let asStaff: supertest.Agent;
let staff: UserRow;

beforeAll(async () => {
  t = await testApp();
  requester = await buildUser(t.db, { role: 'requester' });
  staff = await buildUser(t.db, { role: 'user' });
  [asRequester, asStaff] = await Promise.all([t.loginAs(requester), t.loginAs(staff)]);
});
afterAll(() => t.close());

const submit = (agent: supertest.Agent, chargeCode: string, itemId: number, quantity = 1) =>
  agent.post('/api/requests').send({ chargeCode, items: [{ itemId, quantity }] });

const requestsOf = async (userId: string) => (await t.db('stock_requests').where({ requested_by: userId })).length;

/** A page's text as a reader sees it: tags and entities out, whitespace collapsed. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

describe('POST /api/requests: a requester and charge codes', () => {
  it("400 one message, whether the code is someone else's, held, expired or unknown (chargeCodes.requireAuthorisedUser unset); nothing stored", async () => {
    const item = await buildStockedItem(t.db, 10, { price: '2.00' });
    const notTheirs = await buildChargeCode(t.db, { authorisedEmails: ['someone@example.ac.uk'] });
    const held = await buildChargeCode(t.db, { onHold: true, holdReason: 'Grant frozen by the funder' });
    const expired = await buildChargeCode(t.db, {
      validFrom: new Date(Date.now() - 5 * 86_400_000),
      validUntil: new Date(Date.now() - 2 * 86_400_000),
    });
    const unknown = `CC-NONE-${Date.now()}`;
    const answers = [];
    for (const code of [notTheirs.code, held.code, expired.code, unknown]) {
      const res = await submit(asRequester, code, item.id);
      answers.push([res.status, res.body.message]);
      expect(res.body.message).toBe(`You are not authorised on charge code '${code}'`);
      expect(JSON.stringify(res.body)).not.toContain('Grant frozen');
    }
    expect(new Set(answers.map(([status]) => status))).toEqual(new Set([400]));
    expect(await requestsOf(requester.id)).toBe(0);
  });

  it("400 an authorised requester hears the hold's reason; the staff, not authorised, still submit under the default settings", async () => {
    const item = await buildStockedItem(t.db, 10, { price: '2.00' });
    const held = await buildChargeCode(t.db, {
      authorisedEmails: [requester.email.toUpperCase()],
      onHold: true,
      holdReason: 'Audit in progress',
    });
    const res = await submit(asRequester, held.code, item.id).expect(400);
    expect(res.body.message).toBe(`Charge code '${held.code}' is on hold: Audit in progress`);

    const open = await buildChargeCode(t.db, { authorisedEmails: ['someone@example.ac.uk'] });
    await submit(asStaff, open.code, item.id).expect(201);
    expect(await requestsOf(staff.id)).toBe(1);
    const unknown = await submit(asStaff, 'CC-NOPE', item.id).expect(400);
    expect(unknown.body.message).toBe("Invalid charge code: 'CC-NOPE' does not exist");
  });

  it('GET /api/catalogue/charge-codes lists only the codes the requester is authorised on; a hold reason only on those', async () => {
    const mine = await buildChargeCode(t.db, {
      authorisedEmails: [requester.email],
      onHold: true,
      holdReason: 'Audit in progress',
    });
    const others = await buildChargeCode(t.db, { onHold: true, holdReason: 'Grant frozen by the funder' });
    const res = await asRequester.get('/api/catalogue/charge-codes').expect(200);
    const codes = res.body.map((c: { code: string }) => c.code);
    expect(codes).toContain(mine.code);
    expect(codes).not.toContain(others.code);
    expect(res.body.find((c: { code: string }) => c.code === mine.code).holdReason).toBe('Audit in progress');
    expect(JSON.stringify(res.body)).not.toContain('Grant frozen');
  });

  it("the catalogue basket's charge code: one message for a held code the requester is not authorised on, no reason", async () => {
    const held = await buildChargeCode(t.db, { onHold: true, holdReason: 'Grant frozen by the funder' });
    const catalogue = await asRequester.get('/catalogue').expect(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(catalogue.text)![1];
    for (const code of [held.code, 'CC-NOPE']) {
      const res = await asRequester
        .post('/catalogue/basket/charge-code')
        .set('HX-Request', 'true')
        .type('form')
        .send({ _csrf: csrf, chargeCode: code })
        .expect(200);
      expect(textOf(res.text)).toContain(`You are not authorised on charge code '${code}'`);
      expect(res.text).not.toContain('Grant frozen');
    }
  });
});

describe("a requester's lines: availability before fulfilment, what was handed out after", () => {
  it('requested over the stock: the requester sees availability, not short; the staff see short; after fulfilment both see what was handed out', async () => {
    const code = await buildChargeCode(t.db, { authorisedEmails: [requester.email] });
    const item = await buildStockedItem(t.db, 3, { price: '2.00', minimumStock: 1 });
    const created = await submit(asRequester, code.code, item.id, 10).expect(201);
    expect(created.body.items[0]).toMatchObject({ short: false, shortReason: null, availability: 'in_stock' });
    const mine = await asRequester.get('/api/requests?mine=true').expect(200);
    expect(mine.body.requests[0].items[0]).toMatchObject({ short: false, shortReason: null, availability: 'in_stock' });
    const staffView = await asStaff.get(`/api/requests/${created.body.id}`).expect(200);
    expect(staffView.body.items[0]).toMatchObject({ short: true, shortReason: 'stock', availability: 'in_stock' });

    // the stock falls to its minimum: the requester's line says Low, on the API and the page
    await t.db('items').where({ id: item.id }).update({ current_stock: 1 });
    const low = await asRequester.get(`/api/requests/${created.body.id}`).expect(200);
    expect(low.body.items[0]).toMatchObject({ short: false, availability: 'low' });
    const page = textOf((await asRequester.get(`/requests/${created.body.id}`).expect(200)).text);
    expect(page).toContain(`${item.name} Low`);
    expect(page).not.toContain('Short');

    const fulfilled = await asStaff.post(`/api/requests/${created.body.id}/fulfil`).send({}).expect(200);
    expect(fulfilled.body.items[0]).toMatchObject({ fulfilledQuantity: '1.00', short: true, shortReason: 'stock' });
    const after = await asRequester.get(`/api/requests/${created.body.id}`).expect(200);
    expect(after.body.items[0]).toMatchObject({
      short: true,
      shortReason: 'stock',
      fulfilledQuantity: '1.00',
      availability: null,
    });
  });
});
