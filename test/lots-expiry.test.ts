import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/transaction';
import { sendExpiryDigest } from '../src/modules/notifications/notifications.digest';
import { outboxMessages } from '../src/modules/outbox/outbox.queries';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { agentsByRole, type Agents } from './helpers/inventory-factories';
import { TestSmtp } from './helpers/smtp';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';
import { createItem, day, stockInLot } from './helpers/lots-factories';
import { until } from './helpers/poll';

/*
 * Issue 42, expiry on the floor: the daily expiry digest (email through the outbox, to the managers
 * who keep the low-stock digest on, with its own switch), the lot.expiring and lot.expired webhook
 * events, and the dashboard's two expiry figures. Lots with past and near expiry dates are made
 * through the API (a manual `in` may record a lot already past its date).
 */

// http: over https the session cookie is Secure, and supertest's agent speaks http
const PUBLIC_URL = 'http://stores.example.ac.uk';
const DAY = 86_400_000;
let smtp: TestSmtp;
let receiver: Receiver;
let t: TestApp;
let as: Agents;
let categoryId: number;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  receiver = await startReceiver();
  t = await testApp(
    { SMTP_URL: smtp.url, PUBLIC_URL, OUTBOX_RETRY_BASE_MS: '100', OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1' },
    { deliverOutbox: true },
  );
  as = await agentsByRole(t);
  categoryId = (await buildCategory(t.db)).id;
});
afterAll(async () => {
  await t.close();
  await receiver.close();
  await smtp.stop();
});

async function trackedItem(name: string): Promise<{ id: number; sku: string; name: string }> {
  const { id, sku } = await createItem(as.manager, { categoryId, prefix: 'EXP', name });
  return { id, sku, name };
}

const stockIn = (id: number, lotNumber: string, quantity: number, expiresOn: string | null) =>
  stockInLot(as.manager, id, lotNumber, quantity, expiresOn).expect(200);

const lotId = async (itemId: number, lotNumber: string) =>
  (
    (await as.user.get(`/api/items/${itemId}/lots?includeEmpty=true`).expect(200)).body as {
      id: number;
      lotNumber: string;
    }[]
  ).find((lot) => lot.lotNumber === lotNumber)!.id;

const digest = (now: Date) => transaction(t.db, (trx) => sendExpiryDigest(trx, now));

type LotEvent = { id: number; lotNumber: string; expiresOn: string; quantity: number; status: string; item: unknown };
const delivered = (type: string) =>
  receiver.received.filter((d) => d.body.type === type).map((d) => d.body.data as LotEvent);

describe('the daily expiry digest and the lot.expiring / lot.expired events', () => {
  it('reports the lots that became expiring or expired to the managers with both digests on, each once; nothing when nothing changed', async () => {
    const [manager, admin, quietManager, noLowStock] = await Promise.all([
      buildUser(t.db, { role: 'manager', email: 'expiry-manager@example.ac.uk' }),
      buildUser(t.db, { role: 'admin', email: 'expiry-admin@example.ac.uk' }),
      buildUser(t.db, { role: 'manager', email: 'no-expiry@example.ac.uk' }),
      buildUser(t.db, { role: 'manager', email: 'no-low-stock@example.ac.uk' }),
      buildUser(t.db, { role: 'user', email: 'expiry-user@example.ac.uk' }),
    ]);
    const adminAgent = await t.loginAs(admin);
    // the switch on My account > Emails: on by default for managers, and it can be switched off
    const quiet = await t.loginAs(quietManager);
    expect((await quiet.get('/api/email-preferences').expect(200)).body).toMatchObject({ expiryDigest: true });
    await quiet.patch('/api/email-preferences').send({ expiryDigest: false }).expect(200);
    expect((await quiet.get('/api/email-preferences').expect(200)).body).toMatchObject({
      lowStockDigest: true,
      expiryDigest: false,
    });
    // the expiry digest goes only to those who keep the low-stock digest on
    await (await t.loginAs(noLowStock)).patch('/api/email-preferences').send({ lowStockDigest: false }).expect(200);
    // a requester's role has no such switch
    const notHis = await as.user.patch('/api/email-preferences').send({ expiryDigest: true }).expect(400);
    expect(notHis.body.errors).toContainEqual(expect.objectContaining({ field: 'expiryDigest' }));

    // due every day at 00:00 UK time, so "now" is always past it
    await adminAgent
      .put('/api/settings/notifications.digestTime')
      .send({ value: { time: '00:00' } })
      .expect(200);
    const hook = await adminAgent
      .post('/api/outbound-webhooks')
      .send({ url: receiver.url('/lots'), events: ['lot.expiring', 'lot.expired'] })
      .expect(201);
    receiver.useSecret(hook.body.secret);

    const acetone = await trackedItem('Acetone <HPLC>');
    const ethanol = await trackedItem('Ethanol absolute');
    await stockIn(acetone.id, 'OLD-1', 5, day(-3)); // a bottle found on the shelf past its date: expired at once
    await stockIn(acetone.id, 'SOON-1', 2, day(10)); // within the 30 warning days: expiring
    await stockIn(acetone.id, 'LATER-1', 4, day(200)); // available
    await stockIn(ethanol.id, 'GONE-1', 1, day(-5)); // expired, but taken out: empty, not reported
    await as.manager
      .post(`/api/items/${ethanol.id}/stock`)
      .send({ type: 'out', quantity: 1, lotNumber: 'GONE-1', reason: 'Disposed' })
      .expect(200);
    await stockIn(ethanol.id, 'NODATE', 3, null); // no expiry: never reported

    // before the day's digest time: not due
    await adminAgent
      .put('/api/settings/notifications.digestTime')
      .send({ value: { time: '23:59' } })
      .expect(200);
    const londonNow = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/London',
      hour: '2-digit',
      minute: '2-digit',
    }).format(new Date());
    if (londonNow < '23:59') expect(await digest(new Date())).toMatchObject({ outcome: 'not due' });
    await adminAgent
      .put('/api/settings/notifications.digestTime')
      .send({ value: { time: '00:00' } })
      .expect(200);

    const first = await digest(new Date());
    expect(first).toMatchObject({ outcome: 'queued', lots: 2 });
    expect(first.recipients).toEqual(
      expect.arrayContaining(['expiry-admin@example.ac.uk', 'expiry-manager@example.ac.uk']),
    );
    expect(first.recipients).not.toContain('no-expiry@example.ac.uk');
    expect(first.recipients).not.toContain('no-low-stock@example.ac.uk');
    expect(first.recipients).not.toContain('expiry-user@example.ac.uk');

    const [toManager] = await until(
      () => smtp.to(manager.email),
      (m) => m.length === 1,
    );
    expect(toManager.subject).toBe('Lot expiry: 1 lot expired, 1 lot expiring');
    expect(toManager.text).toContain(`Acetone <HPLC> (${acetone.sku}), lot OLD-1`);
    expect(toManager.text).toContain(`Acetone <HPLC> (${acetone.sku}), lot SOON-1`);
    expect(toManager.text).not.toContain('LATER-1');
    expect(toManager.text).not.toContain('GONE-1');
    expect(toManager.text).not.toContain('NODATE');
    expect(toManager.text).toContain(`${PUBLIC_URL}/lots?status=expired`);
    expect(toManager.text).toContain(`${PUBLIC_URL}/lots?status=expiring`);
    expect(toManager.html).toContain(`href="${PUBLIC_URL}/lots?status=expiring"`);
    expect(toManager.html).toContain('Acetone &lt;HPLC&gt;');
    expect(toManager.text).toContain(`${PUBLIC_URL}/account#emails`);
    await until(
      () => smtp.to(admin.email),
      (m) => m.length === 1,
    );
    for (const address of ['no-expiry@example.ac.uk', 'no-low-stock@example.ac.uk', 'expiry-user@example.ac.uk'])
      expect(await outboxMessages(t.db, { destination: address })).toEqual([]);

    // one event per lot, signed, with the lot and its item
    await until(
      () => receiver.received.filter((d) => d.path === '/lots'),
      (list) => list.length === 2,
    );
    expect(receiver.received.every((d) => d.signed)).toBe(true);
    expect(delivered('lot.expired')).toEqual([
      expect.objectContaining({
        id: await lotId(acetone.id, 'OLD-1'),
        lotNumber: 'OLD-1',
        expiresOn: day(-3),
        quantity: 5,
        status: 'expired',
        item: { id: acetone.id, sku: acetone.sku, name: acetone.name },
      }),
    ]);
    expect(delivered('lot.expiring')).toEqual([
      expect.objectContaining({ lotNumber: 'SOON-1', expiresOn: day(10), quantity: 2, status: 'expiring' }),
    ]);

    // once a day
    expect(await digest(new Date())).toMatchObject({ outcome: 'already sent today' });
    // the next day nothing changed: no email, no event
    expect(await digest(new Date(Date.now() + DAY))).toMatchObject({ outcome: 'nothing changed' });

    // twelve days on, SOON-1 is past its date: reported again, as expired; OLD-1 not again
    const later = await digest(new Date(Date.now() + 12 * DAY));
    expect(later).toMatchObject({ outcome: 'queued', lots: 1 });
    const mails = await until(
      () => smtp.to(manager.email),
      (m) => m.length === 2,
    );
    expect(mails).toHaveLength(2);
    expect(mails[1].subject).toBe('Lot expiry: 1 lot expired');
    expect(mails[1].text).toContain('lot SOON-1');
    expect(mails[1].text).not.toContain('OLD-1');
    expect(mails[1].text).not.toContain('status=expiring');
    await until(
      () => delivered('lot.expired'),
      (list) => list.length === 2,
    );
    expect(delivered('lot.expired').map((lot) => lot.lotNumber)).toEqual(['OLD-1', 'SOON-1']);
    expect(delivered('lot.expiring').map((lot) => lot.lotNumber)).toEqual(['SOON-1']);
    expect(smtp.to('no-expiry@example.ac.uk')).toEqual([]);
    expect(smtp.to('no-low-stock@example.ac.uk')).toEqual([]);
  });
});

describe('GET /api/dashboard/lot-expiry', () => {
  it('401 without a session', () => t.request.get('/api/dashboard/lot-expiry').expect(401));

  it('counts the lots expiring within the warning days and the expired lots still holding stock; the dashboard links to their lists', async () => {
    const before = (await as.user.get('/api/dashboard/lot-expiry').expect(200)).body;
    expect(before).toMatchObject({ warningDays: 30 });

    const item = await trackedItem('Agar powder');
    await stockIn(item.id, 'A-PAST', 2, day(-1)); // expired, holding stock
    await stockIn(item.id, 'A-EMPTY', 1, day(-2)); // expired, then emptied: not counted
    await as.manager
      .post(`/api/items/${item.id}/stock`)
      .send({ type: 'out', quantity: 1, lotNumber: 'A-EMPTY', reason: 'Disposed' })
      .expect(200);
    await stockIn(item.id, 'A-TODAY', 1, day(0)); // expires today: still expiring
    await stockIn(item.id, 'A-EDGE', 1, day(30)); // the last of the warning days: expiring
    await stockIn(item.id, 'A-LATER', 1, day(31)); // beyond: available
    await stockIn(item.id, 'A-NONE', 1, null);

    const after = (await as.user.get('/api/dashboard/lot-expiry').expect(200)).body;
    expect(after).toEqual({
      warningDays: 30,
      expiringLots: before.expiringLots + 2,
      expiredLots: before.expiredLots + 1,
    });

    // the lists behind the figures (GET /api/lots?status=, which the scale bench times) count the same
    const listed = async (status: string) =>
      (await as.user.get(`/api/lots?status=${status}&limit=100`).expect(200)).body as {
        lots: { lotNumber: string; quantity: number }[];
        pagination: { total: number };
      };
    for (const [status, figure] of [
      ['expiring', after.expiringLots],
      ['expired', after.expiredLots],
    ] as const) {
      const list = await listed(status);
      expect(list.pagination.total, status).toBe(figure);
      expect(list.lots.every((lot) => lot.quantity > 0)).toBe(true);
    }
    const expiredNumbers = (await listed('expired')).lots.map((lot) => lot.lotNumber);
    expect(expiredNumbers).toContain('A-PAST');
    expect(expiredNumbers).not.toContain('A-EMPTY');

    // a shorter warning (the setting) moves the edge
    await as.admin
      .put('/api/settings/lots.expiryWarningDays')
      .send({ value: { days: 7 } })
      .expect(200);
    const shorter = (await as.user.get('/api/dashboard/lot-expiry').expect(200)).body;
    expect(shorter).toMatchObject({ warningDays: 7, expiredLots: after.expiredLots });
    expect(shorter.expiringLots).toBeLessThan(after.expiringLots);
    await as.admin
      .put('/api/settings/lots.expiryWarningDays')
      .send({ value: { days: 30 } })
      .expect(200);

    // the dashboard page shows both, linking to the lists
    const page = await as.manager.get('/').expect(200);
    const figures = (await as.user.get('/api/dashboard/lot-expiry').expect(200)).body;
    expect(page.text).toContain(
      `<a href="/lots?status=expiring" aria-label="Lots expiring within ${figures.warningDays} days: ${figures.expiringLots}">`,
    );
    expect(page.text).toContain(
      `<a href="/lots?status=expired" aria-label="Expired lots still holding stock: ${figures.expiredLots}">`,
    );
  });
});
