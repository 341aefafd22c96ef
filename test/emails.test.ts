import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/transaction';
import { outboxMessages, queueEmail } from '../src/modules/outbox/outbox.queries';
import { testApp, type TestApp } from './helpers/app';
import { TestSmtp, until } from './helpers/smtp';
import { buildItem, buildUser } from './helpers/factories';
import { agentsByRole } from './helpers/inventory-factories';
import { buildOrder, buildSupplier } from './helpers/purchasing-factories';

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
      orderReceived: true,
    });
    expect((await admin.get('/api/email-preferences').expect(200)).body).toEqual({
      lowStockDigest: true,
      orderReceived: true,
      backupAlerts: true,
    });
    const changed = await manager.patch('/api/email-preferences').send({ lowStockDigest: false }).expect(200);
    expect(changed.body).toEqual({ lowStockDigest: false, orderReceived: true });
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
