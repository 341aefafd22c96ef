import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/transaction';
import { sendLowStockDigest } from '../src/modules/notifications/notifications.digest';
import { changeStock } from '../src/modules/stock-movements/stock-movements.ledger';
import { itemStock } from '../src/modules/items/items.queries';
import { outboxMessages } from '../src/modules/outbox/outbox.queries';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildStockedItem } from './helpers/inventory-factories';
import { TestSmtp } from './helpers/smtp';
import { until } from './helpers/poll';

// http: over https the session cookie is Secure, and supertest's agent speaks http
const PUBLIC_URL = 'http://stores.example.ac.uk';
const DAY = 86_400_000;
let smtp: TestSmtp;
let t: TestApp;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  t = await testApp({ SMTP_URL: smtp.url, PUBLIC_URL, OUTBOX_RETRY_BASE_MS: '100' }, { deliverOutbox: true });
});
afterAll(async () => {
  await t.close();
  await smtp.stop();
});

const digest = (now: Date) => transaction(t.db, (trx) => sendLowStockDigest(trx, now));
const sell = (itemId: number, quantity: number) =>
  changeStock(t.db, itemStock, { itemId, type: 'out', quantity, reason: 'Sold', performedBy: null });

describe('the low-stock digest', () => {
  it('sends the items that crossed their minimum to their category buyers, else the managers; once a day; none when nothing crossed', async () => {
    const [, quietManager, admin] = await Promise.all([
      buildUser(t.db, { role: 'manager', email: 'manager@example.ac.uk' }),
      buildUser(t.db, { role: 'manager', email: 'quiet-manager@example.ac.uk' }),
      buildUser(t.db, { role: 'admin', email: 'admin@example.ac.uk' }),
      buildUser(t.db, { role: 'user', email: 'user@example.ac.uk' }),
    ]);
    const adminAgent = await t.loginAs(admin);
    await (await t.loginAs(quietManager)).patch('/api/email-preferences').send({ lowStockDigest: false }).expect(200);

    // buyers through the categories API: kept lower case, each once; a bad address is a 400 naming it
    const bad = await adminAgent
      .post('/api/categories')
      .send({ name: 'Gloves', buyerEmails: ['not an address'] })
      .expect(400);
    expect(bad.body.errors).toContainEqual(expect.objectContaining({ field: 'buyerEmails.0' }));
    const gloves = await adminAgent
      .post('/api/categories')
      .send({ name: 'Gloves', buyerEmails: ['Buyer@Example.ac.uk', 'buyer@example.ac.uk'] })
      .expect(201);
    expect(gloves.body.buyerEmails).toEqual(['buyer@example.ac.uk']);
    const glass = await adminAgent.post('/api/categories').send({ name: 'Glassware' }).expect(201);
    expect(glass.body.buyerEmails).toEqual([]);
    const updated = await adminAgent
      .put(`/api/categories/${glass.body.id}`)
      .send({ buyerEmails: ['glass@example.ac.uk'] })
      .expect(200);
    expect(updated.body.buyerEmails).toEqual(['glass@example.ac.uk']);
    await adminAgent.put(`/api/categories/${glass.body.id}`).send({ buyerEmails: [] }).expect(200);
    const listed = await adminAgent.get('/api/categories').expect(200);
    expect(listed.body.find((c: { id: number }) => c.id === gloves.body.id).buyerEmails).toEqual([
      'buyer@example.ac.uk',
    ]);

    // due every day at 00:00 UK time, so "now" is always past it
    await adminAgent
      .put('/api/settings/notifications.digestTime')
      .send({ value: { time: '25:00' } })
      .expect(400);
    await adminAgent
      .put('/api/settings/notifications.digestTime')
      .send({ value: { time: '00:00' } })
      .expect(200);

    const nitrile = await buildStockedItem(t.db, 10, {
      name: 'Nitrile gloves',
      minimumStock: 5,
      categoryId: gloves.body.id,
    });
    const latex = await buildStockedItem(t.db, 10, {
      name: 'Latex gloves',
      minimumStock: 5,
      categoryId: gloves.body.id,
    });
    const beaker = await buildStockedItem(t.db, 10, {
      name: 'Beaker 250 ml',
      minimumStock: 5,
      categoryId: glass.body.id,
    });
    const flask = await buildStockedItem(t.db, 3, { name: 'Flask', minimumStock: 5, categoryId: glass.body.id });
    await sell(nitrile.id, 6); // 10 -> 4: crossed
    await sell(beaker.id, 5); // 10 -> 5: crossed (at the minimum is low)
    await sell(latex.id, 4); // 10 -> 6: still above
    await sell(flask.id, 1); // 3 -> 2: was low already, no crossing

    const first = await digest(new Date());
    expect(first).toMatchObject({ outcome: 'queued', items: 2 });
    expect(first.recipients.sort()).toEqual(['admin@example.ac.uk', 'buyer@example.ac.uk', 'manager@example.ac.uk']);

    const [toBuyer] = await until(
      () => smtp.to('buyer@example.ac.uk'),
      (m) => m.length === 1,
    );
    expect(toBuyer.subject).toBe('Low stock: 1 item reached its minimum');
    expect(toBuyer.text).toContain('Nitrile gloves');
    expect(toBuyer.text).not.toContain('Beaker');
    expect(toBuyer.text).toContain(`${PUBLIC_URL}/replenishment`);
    expect(toBuyer.html).toContain(`href="${PUBLIC_URL}/replenishment"`);
    const [toManager] = await until(
      () => smtp.to('manager@example.ac.uk'),
      (m) => m.length === 1,
    );
    expect(toManager.text).toContain('Beaker 250 ml');
    expect(toManager.text).not.toContain('Nitrile');
    expect(toManager.text).not.toContain('Flask');
    expect(toManager.text).toContain(`${PUBLIC_URL}/account#emails`);
    expect(await outboxMessages(t.db, { destination: 'quiet-manager@example.ac.uk' })).toEqual([]);
    expect(await outboxMessages(t.db, { destination: 'user@example.ac.uk' })).toEqual([]);

    // once a day
    expect(await digest(new Date())).toMatchObject({ outcome: 'already sent today' });
    // the next day: nothing crossed since, no digest
    expect(await digest(new Date(Date.now() + DAY))).toMatchObject({ outcome: 'nothing crossed' });
    // the day after: only what crossed since the last digest
    await sell(latex.id, 2); // 6 -> 4: crossed
    const third = await digest(new Date(Date.now() + 2 * DAY));
    expect(third).toMatchObject({ outcome: 'queued', items: 1, recipients: ['buyer@example.ac.uk'] });
    const toBuyerAgain = await until(
      () => smtp.to('buyer@example.ac.uk'),
      (m) => m.length === 2,
    );
    expect(toBuyerAgain[1].text).toContain('Latex gloves');
    expect(toBuyerAgain[1].text).not.toContain('Nitrile');
  });

  it('is not sent before the time set in Settings', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const now = new Date();
    const later = new Date(now.getTime() + 2 * 3_600_000);
    // a time two hours ahead on the UK clock (unless that runs past midnight: then the check is moot)
    const ukTime = (d: Date) =>
      new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'Europe/London' }).format(d);
    if (ukTime(later) < ukTime(now)) return;
    await admin
      .put('/api/settings/notifications.digestTime')
      .send({ value: { time: ukTime(later) } })
      .expect(200);
    expect(await digest(new Date(now.getTime() + 3 * DAY))).toMatchObject({ outcome: 'not due' });
  });
});
