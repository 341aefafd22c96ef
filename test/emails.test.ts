import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/transaction';
import { outboxMessages, queueEmail } from '../src/modules/outbox/outbox.queries';
import { testApp, type TestApp } from './helpers/app';
import { TestSmtp } from './helpers/smtp';
import type { Config } from '../src/config';
import { createLogger } from '../src/logger';
import { startOutboxDelivery } from '../src/jobs/outbox-delivery';
import type { OutboxWorker } from '../src/modules/outbox/outbox.worker';
import { buildChargeCode } from './helpers/sales-factories';
import { buildItem, buildUser } from './helpers/factories';
import { agentsByRole } from './helpers/inventory-factories';
import { buildOrder, buildSupplier } from './helpers/purchasing-factories';
import { until } from './helpers/poll';

// http: over https the session cookie is Secure, and supertest's agent speaks http
const PUBLIC_URL = 'http://stores.example.ac.uk';
let smtp: TestSmtp;
let t: TestApp;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  t = await testApp(
    { SMTP_URL: smtp.url, PUBLIC_URL, OUTBOX_RETRY_BASE_MS: '100', MAIL_FROM: 'Stores <stores@example.ac.uk>' },
    { deliverOutbox: true },
  );
});
afterAll(async () => {
  await t.close();
  await smtp.stop();
});
beforeEach(() => {
  smtp.answer = () => null;
});

const orderEmail = (to: string, orderId: string) =>
  transaction(t.db, (trx) =>
    queueEmail(trx, {
      to,
      subject: `Order ${orderId} received`,
      template: 'order-received',
      data: {
        orderId,
        supplierName: 'Lab <Supplies> Ltd',
        complete: true,
        receivedBy: 'Sam Stores',
        lines: [{ name: 'Nitrile gloves', sku: 'GLV-1', quantity: '10', receivedQuantity: '10' }],
      },
    }),
  );

describe('the email sender', () => {
  it('sends a text and an HTML part from the templates, From MAIL_FROM, its Message-ID from the outbox id', async () => {
    await orderEmail('a@example.ac.uk', 'O1001');
    const [mail] = await until(
      () => smtp.to('a@example.ac.uk'),
      (m) => m.length === 1,
    );
    const [row] = await until(
      () => outboxMessages(t.db, { destination: 'a@example.ac.uk' }),
      (rows) => rows[0]?.status === 'sent',
    );
    expect(row.status).toBe('sent');
    expect(mail.messageId).toBe(`<${row.id}@stores.example.ac.uk>`);
    expect(mail.subject).toBe('Order O1001 received');
    expect(mail.from?.value[0]).toMatchObject({ name: 'Stores', address: 'stores@example.ac.uk' });
    expect(mail.text).toContain('Order O1001 from Lab <Supplies> Ltd has been received in full by Sam Stores.');
    expect(mail.text).toContain(`${PUBLIC_URL}/orders/O1001`);
    expect(mail.html).toContain('Lab &lt;Supplies&gt; Ltd');
    expect(mail.html).toContain(`href="${PUBLIC_URL}/orders/O1001"`);
    expect(mail.html).toContain(`${PUBLIC_URL}/account#emails`);
  });

  it('retries a temporary refusal (451) with the same Message-ID, and sends it once accepted', async () => {
    let refusals = 1;
    smtp.answer = () => (refusals-- > 0 ? { code: 451, message: 'Try again later' } : null);
    await orderEmail('busy@example.ac.uk', 'O1003');
    const [row] = await until(
      () => outboxMessages(t.db, { destination: 'busy@example.ac.uk' }),
      (rows) => rows[0]?.status === 'sent',
    );
    expect(row).toMatchObject({ status: 'sent', attempts: 2 });
    const messageId = `<${row.id}@stores.example.ac.uk>`;
    expect(smtp.attempts.filter((id) => id === messageId)).toHaveLength(2);
    expect(smtp.to('busy@example.ac.uk')).toHaveLength(1);
  });

  it('does not retry an address the server refuses (550): failed after one attempt', async () => {
    smtp.answer = () => ({ code: 550, message: 'No such mailbox' });
    await orderEmail('gone@example.ac.uk', 'O1002');
    const [row] = await until(
      () => outboxMessages(t.db, { destination: 'gone@example.ac.uk' }),
      (rows) => rows[0]?.status === 'failed',
    );
    expect(row).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 550 });
    expect(row.lastError).toContain('No such mailbox');
  });
});

describe('GET|PATCH /api/email-preferences', () => {
  it('401 without a session', () => t.request.get('/api/email-preferences').expect(401));

  it("answers each role's switches with their defaults, and keeps a change", async () => {
    const { user, manager, admin } = await agentsByRole(t);
    expect((await user.get('/api/email-preferences').expect(200)).body).toEqual({ orderReceived: true });
    expect((await manager.get('/api/email-preferences').expect(200)).body).toEqual({
      lowStockDigest: true,
      expiryDigest: true,
      orderReceived: true,
    });
    expect((await admin.get('/api/email-preferences').expect(200)).body).toEqual({
      lowStockDigest: true,
      expiryDigest: true,
      orderReceived: true,
      backupAlerts: true,
    });
    const changed = await manager.patch('/api/email-preferences').send({ lowStockDigest: false }).expect(200);
    expect(changed.body).toEqual({ lowStockDigest: false, expiryDigest: true, orderReceived: true });
    expect((await manager.get('/api/email-preferences').expect(200)).body).toEqual(changed.body);
  });

  it('400 names a switch that is not a boolean, or one the role does not have', async () => {
    const { user } = await agentsByRole(t);
    const notBoolean = await user.patch('/api/email-preferences').send({ orderReceived: 'yes' }).expect(400);
    expect(notBoolean.body.errors).toContainEqual(expect.objectContaining({ field: 'orderReceived' }));
    const notHis = await user.patch('/api/email-preferences').send({ backupAlerts: true }).expect(400);
    expect(notHis.body.errors).toContainEqual(expect.objectContaining({ field: 'backupAlerts' }));
  });
});

describe('the order received email', () => {
  async function receivedOrder(createdBy: string) {
    const supplier = await buildSupplier(t.db, { name: 'Lab Supplies Ltd' });
    const item = await buildItem(t.db, { name: 'Pipette tips', sku: `TIP-${Date.now()}` });
    const { order, lines } = await buildOrder(
      t.db,
      supplier.id,
      [{ itemId: item.id, name: 'Pipette tips', quantity: '5', unitCost: '2.00' }],
      { createdBy },
    );
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager', firstName: 'Sam', lastName: 'Stores' }));
    await manager
      .post(`/api/orders/${order.order_id}/receive`)
      .send({ receivedItems: [{ orderItemId: lines[0].id, receivedQuantity: 5, addToInventory: true }] })
      .expect(200);
    return order.order_id;
  }

  it('goes to whoever created the order, its subject naming the order number', async () => {
    const creator = await buildUser(t.db, { email: 'researcher@example.ac.uk' });
    const orderId = await receivedOrder(creator.id);
    const [mail] = await until(
      () => smtp.to('researcher@example.ac.uk'),
      (m) => m.length === 1,
    );
    expect(mail.subject).toBe(`Order ${orderId} received`);
    expect(mail.text).toContain(`Order ${orderId} from Lab Supplies Ltd has been received in full by Sam Stores.`);
    expect(mail.text).toContain('Pipette tips');
    expect(mail.text).toContain(`${PUBLIC_URL}/orders/${orderId}`);
    expect(mail.html).toContain(`href="${PUBLIC_URL}/orders/${orderId}"`);
  });

  it('is not sent to someone who switched it off', async () => {
    const creator = await buildUser(t.db, { email: 'quiet@example.ac.uk' });
    await (await t.loginAs(creator)).patch('/api/email-preferences').send({ orderReceived: false }).expect(200);
    await receivedOrder(creator.id);
    expect(await outboxMessages(t.db, { destination: 'quiet@example.ac.uk' })).toEqual([]);
  });
});

describe('the sale receipt', () => {
  it('goes to the recipient when the sale asks for it: lines, totals, charge code and sale number, no token', async () => {
    const code = await buildChargeCode(t.db, { code: 'CHEM-RECEIPT' });
    const item = await buildItem(t.db, { name: 'Beaker 250 ml', sku: 'BKR-250', price: '4.00', currentStock: 10 });
    const user = await t.loginAs(await buildUser(t.db));
    const res = await user
      .post('/api/sales')
      .send({
        chargeCode: code.code,
        items: [{ itemId: item.id, quantity: 3 }],
        vatApplied: false,
        recipient: { deliveredTo: 'Dr Ada Byron', deliveredToEmail: 'Ada@Example.ac.uk' },
        emailReceipt: true,
      })
      .expect(201);
    const saleId: string = res.body.sale.saleId;
    const [mail] = await until(
      () => smtp.to('ada@example.ac.uk'),
      (m) => m.length === 1,
    );
    expect(mail.subject).toBe(`Receipt for sale ${saleId}`);
    for (const part of [mail.text!, mail.html as string]) {
      expect(part).toContain(saleId);
      expect(part).toContain('CHEM-RECEIPT');
      expect(part).toContain('Beaker 250 ml');
      expect(part).toContain('£12.00');
      expect(part).toContain(`${PUBLIC_URL}/sales/${res.body.sale.id}`);
      expect(part).not.toMatch(/token|csrf|password|connect\.sid/i);
    }
    // a receipt is not a switch on My account: the footer does not send the recipient there
    expect(mail.text).not.toContain('/account');
  });

  it("goes out when a draft quote is processed with it (the counter's checkout tick box)", async () => {
    const code = await buildChargeCode(t.db);
    const item = await buildItem(t.db, { name: 'Test tube rack', currentStock: 10 });
    const user = await t.loginAs(await buildUser(t.db));
    const saved = await user
      .post('/api/sales/quotes')
      .send({ chargeCode: code.code, sessionId: 'receipt-session', items: [{ itemId: item.id, quantity: 2 }] })
      .expect(200);
    const processed = await user
      .post(`/api/sales/quotes/${saved.body.quote.id}/process`)
      .send({ recipient: { deliveredTo: 'Dr Hopper', deliveredToEmail: 'hopper@example.ac.uk' }, emailReceipt: true })
      .expect(200);
    const [mail] = await until(
      () => smtp.to('hopper@example.ac.uk'),
      (m) => m.length === 1,
    );
    expect(mail.subject).toBe(`Receipt for sale ${processed.body.sale.saleId}`);
    expect(mail.text).toContain('Test tube rack');
  });

  it('sends none unless asked, and 400 names the missing address when asked without one', async () => {
    const code = await buildChargeCode(t.db);
    const item = await buildItem(t.db, { currentStock: 10 });
    const user = await t.loginAs(await buildUser(t.db));
    const sale = (body: Record<string, unknown>) =>
      user.post('/api/sales').send({ chargeCode: code.code, items: [{ itemId: item.id, quantity: 1 }], ...body });
    await sale({ recipient: { deliveredTo: 'Bob', deliveredToEmail: 'bob@example.ac.uk' } }).expect(201);
    const refused = await sale({ recipient: { deliveredTo: 'Bob' }, emailReceipt: true }).expect(400);
    expect(refused.body.errors).toContainEqual(expect.objectContaining({ field: 'recipient.deliveredToEmail' }));
    expect(await outboxMessages(t.db, { destination: 'bob@example.ac.uk' })).toEqual([]);
  });
});

describe('PATCH /api/sales/{id}/recipient with emailReceipt', () => {
  it('emails the receipt to the recorded address; 400 names deliveredToEmail when there is none', async () => {
    const code = await buildChargeCode(t.db);
    const item = await buildItem(t.db, { name: 'Funnel', currentStock: 10 });
    const user = await t.loginAs(await buildUser(t.db));
    const created = await user
      .post('/api/sales')
      .send({ chargeCode: code.code, items: [{ itemId: item.id, quantity: 1 }] })
      .expect(201);
    const { id, saleId } = created.body.sale;
    const refused = await user
      .patch(`/api/sales/${id}/recipient`)
      .send({ deliveredTo: 'Grace', emailReceipt: true })
      .expect(400);
    expect(refused.body.errors).toContainEqual(expect.objectContaining({ field: 'deliveredToEmail' }));
    await user
      .patch(`/api/sales/${id}/recipient`)
      .send({ deliveredTo: 'Grace', deliveredToEmail: 'grace@example.ac.uk', emailReceipt: true })
      .expect(200);
    const [mail] = await until(
      () => smtp.to('grace@example.ac.uk'),
      (m) => m.length === 1,
    );
    expect(mail.subject).toBe(`Receipt for sale ${saleId}`);
    expect(mail.text).toContain('Funnel');
  });
});

describe('delivery through an SMTP outage', () => {
  it('delivers each message once, in the order of its change, once the server is back', async () => {
    smtp.down();
    try {
      for (let n = 1; n <= 4; n += 1) await orderEmail('outage@example.ac.uk', `O2${n}`);
      await until(
        () => outboxMessages(t.db, { destination: 'outage@example.ac.uk' }),
        (rows) => rows.some((r) => r.attempts > 0 && r.lastError !== null),
      );
    } finally {
      smtp.up();
    }
    const sent = await until(
      () => outboxMessages(t.db, { destination: 'outage@example.ac.uk', status: 'sent' }),
      (rows) => rows.length === 4,
    );
    expect(sent).toHaveLength(4);
    const mails = smtp.to('outage@example.ac.uk');
    expect(mails.map((m) => m.subject)).toEqual(['O21', 'O22', 'O23', 'O24'].map((o) => `Order ${o} received`));
    expect(new Set(mails.map((m) => m.messageId)).size).toBe(4);
  });
});

describe('without SMTP_URL', () => {
  it('holds the emails, and sends them when the delivery starts again with SMTP_URL set', async () => {
    const held = await testApp({ PUBLIC_URL, OUTBOX_RETRY_BASE_MS: '100' });
    const start = (config: Config) =>
      startOutboxDelivery(
        { db: held.db, databaseUrl: held.databaseUrl, config, logger: createLogger('silent') },
        { pollMs: 100 },
      );
    const first = start(held.config);
    let restarted: OutboxWorker | undefined;
    try {
      await transaction(held.db, (trx) =>
        queueEmail(trx, {
          to: 'later@example.ac.uk',
          subject: 'Held for now',
          template: 'order-received',
          data: {
            orderId: 'O3001',
            supplierName: null,
            complete: true,
            receivedBy: null,
            lines: [],
          },
        }),
      );
      const [row] = await until(
        () => outboxMessages(held.db, { destination: 'later@example.ac.uk' }),
        (rows) => rows[0]?.status === 'held',
      );
      expect(row).toMatchObject({ status: 'held', attempts: 0 });
      expect(smtp.to('later@example.ac.uk')).toEqual([]);
      // one held for more than a day would come too late: it stays held
      await transaction(held.db, (trx) =>
        queueEmail(trx, { to: 'stale@example.ac.uk', subject: 'Stale', template: 'order-received', data: {} }),
      );
      await until(
        () => outboxMessages(held.db, { destination: 'stale@example.ac.uk' }),
        (rows) => rows[0]?.status === 'held',
      );
      await held
        .db('outbox_messages')
        .where({ destination: 'stale@example.ac.uk' })
        .update({
          created_at: held.db.raw("now() - interval '25 hours'"),
        });
      await first.stop();

      // the service started again, now with SMTP_URL
      restarted = start({ ...held.config, smtpUrl: smtp.url });
      const [mail] = await until(
        () => smtp.to('later@example.ac.uk'),
        (m) => m.length === 1,
      );
      expect(mail.messageId).toBe(`<${row.id}@stores.example.ac.uk>`);
      const [sent] = await until(
        () => outboxMessages(held.db, { destination: 'later@example.ac.uk' }),
        (rows) => rows[0]?.status === 'sent',
      );
      expect(sent).toMatchObject({ status: 'sent', attempts: 1 });
      expect(await outboxMessages(held.db, { destination: 'stale@example.ac.uk' })).toMatchObject([{ status: 'held' }]);
    } finally {
      await first.stop();
      await restarted?.stop();
      await held.close();
    }
  });
});

describe('TLS', () => {
  it.each(['starttls', 'implicit'] as const)(
    'sends over TLS (%s) when SMTP_URL asks for it or the server offers it',
    async (tls) => {
      const secure = await TestSmtp.start(tls);
      const app = await testApp(
        { PUBLIC_URL, SMTP_URL: secure.url, OUTBOX_RETRY_BASE_MS: '100' },
        { deliverOutbox: true },
      );
      try {
        await transaction(app.db, (trx) =>
          queueEmail(trx, {
            to: 'tls@example.ac.uk',
            subject: 'Over TLS',
            template: 'order-received',
            data: { orderId: 'O4001', supplierName: null, complete: true, receivedBy: null, lines: [] },
          }),
        );
        const [received] = await until(
          () => secure.received,
          (r) => r.length === 1,
        );
        expect(received).toMatchObject({ secure: true, to: ['tls@example.ac.uk'] });
        expect(received.mail.subject).toBe('Over TLS');
      } finally {
        await app.close();
        await secure.stop();
      }
    },
  );
});
