import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxMessages } from '../src/modules/outbox/outbox.queries';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import { TestSmtp } from './helpers/smtp';
import { until } from './helpers/poll';

/**
 * Issue 40, finding 1: the service is not a mail relay. A receipt goes only to the recipient domains
 * (the setting email.recipientDomains, else the active users' domains: the factories' example.ac.uk),
 * a person has at most 20 emailed an hour, and a receipt opens with the service's own words.
 */

const PUBLIC_URL = 'http://stores.example.ac.uk';
const PHISH = 'Your account is locked. Verify at https://evil.example';
let smtp: TestSmtp;
let t: TestApp;
let code: string;
let itemId: number;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  t = await testApp(
    { SMTP_URL: smtp.url, PUBLIC_URL, OUTBOX_RETRY_BASE_MS: '100', MAIL_FROM: 'Stores <stores@example.ac.uk>' },
    { deliverOutbox: true },
  );
  code = (await buildChargeCode(t.db)).code;
  itemId = (await buildItem(t.db, { name: 'Wash bottle', sku: 'WB-500', price: '2.50', currentStock: 1000 })).id;
});
afterAll(async () => {
  await t.close();
  await smtp.stop();
});

const newSale = async (agent: supertest.Agent) =>
  (
    await agent
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId, quantity: 1 }] })
      .expect(201)
  ).body.sale as { id: number; saleId: string };

const setRecipient = (agent: supertest.Agent, id: number, deliveredToEmail: string, deliveredTo = 'Dr Who') =>
  agent.patch(`/api/sales/${id}/recipient`).send({ deliveredTo, deliveredToEmail, emailReceipt: true });

const errorFields = (res: supertest.Response) => (res.body.errors as { field: string }[]).map((e) => e.field);

describe('a receipt to an address outside the recipient domains', () => {
  it('400 naming deliveredToEmail on every path; nothing is recorded or queued, and the SMTP server receives nothing', async () => {
    const user = await t.loginAs(await buildUser(t.db));
    const victim = 'victim@external.example';

    const patched = await newSale(user);
    const refused = await setRecipient(user, patched.id, victim, PHISH).expect(400);
    expect(errorFields(refused)).toEqual(['deliveredToEmail']);
    expect(refused.body.errors[0].message).toContain('example.ac.uk');
    const after = await t.db('sales').where({ id: patched.id }).first();
    expect([after.delivered_to, after.delivered_to_email]).toEqual([null, null]);

    const salesBefore = Number((await t.db('sales').count<{ n: string }[]>('* as n'))[0].n);
    const direct = await user
      .post('/api/sales')
      .send({
        chargeCode: code,
        items: [{ itemId, quantity: 1 }],
        recipient: { deliveredTo: PHISH, deliveredToEmail: victim },
        emailReceipt: true,
      })
      .expect(400);
    expect(errorFields(direct)).toEqual(['recipient.deliveredToEmail']);

    const draft = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code, sessionId: 'relay-session', items: [{ itemId, quantity: 1 }] })
      .expect(200);
    const processed = await user
      .post(`/api/sales/quotes/${draft.body.quote.id}/process`)
      .send({ recipient: { deliveredTo: PHISH, deliveredToEmail: victim }, emailReceipt: true })
      .expect(400);
    expect(errorFields(processed)).toEqual(['recipient.deliveredToEmail']);
    expect(Number((await t.db('sales').count<{ n: string }[]>('* as n'))[0].n)).toBe(salesBefore);

    // a look-alike domain is outside too; recording a recipient without a receipt stays open to anyone
    await setRecipient(user, patched.id, 'ada@example.ac.uk.evil.example').expect(400);
    await setRecipient(user, patched.id, 'ada@notexample.ac.uk').expect(400);
    await user
      .patch(`/api/sales/${patched.id}/recipient`)
      .send({ deliveredTo: 'A visitor', deliveredToEmail: victim })
      .expect(200);

    // a receipt inside the domains, sent after the refusals: once it has arrived, nothing went to the outside address
    await setRecipient(user, patched.id, 'ada@example.ac.uk').expect(200);
    await until(
      () => smtp.to('ada@example.ac.uk'),
      (m) => m.length === 1,
    );
    expect(smtp.to(victim)).toEqual([]);
    expect(await outboxMessages(t.db, { destination: victim })).toEqual([]);
  });

  it("the counter page's recipient form: 422 with the message beside Email, and nothing recorded or sent", async () => {
    const user = await t.loginAs(await buildUser(t.db));
    const sale = await newSale(user);
    const page = await user.get(`/counter?sale=${sale.id}`).expect(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    const refused = await user
      .post(`/counter/sales/${sale.id}/recipient`)
      .type('form')
      .send({ _csrf: csrf, deliveredTo: PHISH, deliveredToEmail: 'victim@external.example', emailReceipt: 'true' })
      .expect(422);
    expect(refused.text).toContain('must be an address at');
    const after = await t.db('sales').where({ id: sale.id }).first();
    expect([after.delivered_to, after.delivered_to_email]).toEqual([null, null]);
    expect(await outboxMessages(t.db, { destination: 'victim@external.example' })).toEqual([]);
  });

  it('the setting email.recipientDomains replaces the default: its domains and their subdomains only', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin
      .put('/api/settings/email.recipientDomains')
      .send({ value: { domains: ['not a domain'] } })
      .expect(400);
    await admin
      .put('/api/settings/email.recipientDomains')
      .send({ value: { domains: ['Partner.example'] } })
      .expect(200);
    try {
      const user = await t.loginAs(await buildUser(t.db));
      const sale = await newSale(user);
      await setRecipient(user, sale.id, 'ada@example.ac.uk').expect(400);
      await setRecipient(user, sale.id, 'lin@partner.example').expect(200);
      await setRecipient(user, sale.id, 'lin@chem.partner.example').expect(200);
      await until(
        () => smtp.to('lin@chem.partner.example'),
        (m) => m.length === 1,
      );
    } finally {
      await t.db('settings').where({ key: 'email.recipientDomains' }).delete();
    }
  });
});

describe('receipts an hour', () => {
  it('the 21st receipt a person asks for in an hour is 429 with Retry-After, changing nothing; another person is not held back', async () => {
    const user = await t.loginAs(await buildUser(t.db));
    const sale = await newSale(user);
    for (let n = 1; n <= 20; n += 1)
      await setRecipient(user, sale.id, `r${n}@example.ac.uk`, `Person ${n}`).expect(200);
    const limited = await setRecipient(user, sale.id, 'r21@example.ac.uk', 'Person 21').expect(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(limited.body.message).toMatch(/^At most 20 receipts an hour/);
    expect((await t.db('sales').where({ id: sale.id }).first()).delivered_to_email).toBe('r20@example.ac.uk');
    // a sale asking for a receipt is refused as well, before anything is sold
    await user
      .post('/api/sales')
      .send({
        chargeCode: code,
        items: [{ itemId, quantity: 1 }],
        recipient: { deliveredTo: 'Person 22', deliveredToEmail: 'r22@example.ac.uk' },
        emailReceipt: true,
      })
      .expect(429);

    const other = await t.loginAs(await buildUser(t.db));
    await setRecipient(other, (await newSale(other)).id, 'r23@example.ac.uk').expect(200);
    await until(
      () => smtp.to('r23@example.ac.uk'),
      (m) => m.length === 1,
    );
    const delivered = await until(
      () => Promise.resolve(Array.from({ length: 22 }, (_, i) => smtp.to(`r${i + 1}@example.ac.uk`).length)),
      (counts) => counts.slice(0, 20).every((c) => c === 1),
    );
    expect(delivered.slice(20)).toEqual([0, 0]);
  });
});

describe("the receipt's words", () => {
  it("opens with the service's words; the recipient's name only in the labelled Received by field", async () => {
    const user = await t.loginAs(await buildUser(t.db));
    const sale = await newSale(user);
    await setRecipient(user, sale.id, 'grace@example.ac.uk', PHISH).expect(200);
    const [mail] = await until(
      () => smtp.to('grace@example.ac.uk'),
      (m) => m.length === 1,
    );
    const lines = mail.text!.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^Stores receipt for sale ${sale.saleId}, .+, charged to ${code}\\.$`));
    expect(lines.filter((line) => line.includes(PHISH))).toEqual([`Received by: ${PHISH}`]);
    const html = mail.html as string;
    const body = html.slice(html.indexOf('<body'));
    const text = body
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    expect(text).toMatch(new RegExp(`^Stores Receipt for sale ${sale.saleId} The receipt for sale`));
    expect(text).toContain(`Received by: ${PHISH}`);
    expect(text.indexOf(PHISH)).toBeGreaterThan(text.indexOf('Sale number:'));
  });
});

describe('the COSHH assessment reference on the receipt (issue 43)', () => {
  it('a sale made under a COSHH reference shows it in the text and HTML parts; one without, no such line', async () => {
    const user = await t.loginAs(await buildUser(t.db));
    const solvent = await buildItem(t.db, { name: 'Toluene', sku: 'TOL-1L', price: '9.00', currentStock: 50 });
    await t.db('items').where({ id: solvent.id }).update({ coshh_required: true });
    const sale = await user
      .post('/api/sales')
      .send({
        chargeCode: code,
        items: [{ itemId: solvent.id, quantity: 1 }],
        coshhReference: 'RA-CHEM-2026-031',
        recipient: { deliveredTo: 'Ada', deliveredToEmail: 'coshh-ada@example.ac.uk' },
        emailReceipt: true,
      })
      .expect(201);
    expect(sale.body.sale.coshhReference).toBe('RA-CHEM-2026-031');
    const [mail] = await until(
      () => smtp.to('coshh-ada@example.ac.uk'),
      (m) => m.length === 1,
    );
    expect(mail.text!.split('\n')).toContain('COSHH assessment: RA-CHEM-2026-031');
    expect(mail.html as string).toContain('COSHH assessment: <strong>RA-CHEM-2026-031</strong>');

    const plain = await newSale(user);
    await setRecipient(user, plain.id, 'coshh-bob@example.ac.uk', 'Bob').expect(200);
    const [other] = await until(
      () => smtp.to('coshh-bob@example.ac.uk'),
      (m) => m.length === 1,
    );
    expect(other.text).not.toContain('COSHH');
  });
});
