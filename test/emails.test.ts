import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/transaction';
import { outboxMessages, queueEmail } from '../src/modules/outbox/outbox.queries';
import { testApp, type TestApp } from './helpers/app';
import { TestSmtp, until } from './helpers/smtp';

const PUBLIC_URL = 'https://stores.example.ac.uk';
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
