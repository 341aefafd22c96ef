import { beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildUser } from '../helpers/factories';

const b = useBrowserApp({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1' });

let admin: UserRow;
beforeAll(async () => {
  admin = await buildUser(b.t.db, { role: 'admin' });
});

describe('/outbound-webhooks', () => {
  it('an admin adds an endpoint and sees its secret once; a private address is refused beside the URL', async () => {
    b.expectHttpErrors(422);
    const page = await b.openAs(admin, '/outbound-webhooks');
    await page.getByText('No outbound webhooks yet.').waitFor();

    await page.getByLabel('URL').fill('https://10.0.0.5/hook');
    await page.getByLabel('ping').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('#url-error').waitFor();
    expect(await page.locator('#url-error').innerText()).toContain('private address');
    expect(await b.t.db('outbound_webhooks')).toEqual([]);

    await page.getByLabel('URL').fill('http://127.0.0.1:9/finance');
    await page.getByLabel('sale.created').check();
    await page.getByLabel('Description').fill('Finance system');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { level: 1, name: 'Outbound webhook created' }).waitFor();
    const secret = await page.getByLabel('Signing secret').inputValue();
    const [row] = await b.t.db('outbound_webhooks');
    expect(row).toMatchObject({ url: 'http://127.0.0.1:9/finance', events: ['sale.created', 'ping'], secret });
    await expectAccessible(page);
    await screenshot(page, 'outbound-webhook-created');

    await page.getByRole('link', { name: 'Done: to the endpoint' }).click();
    await page.getByRole('heading', { level: 1, name: 'Outbound webhook' }).waitFor();
    expect(await page.content()).not.toContain(secret);
    await page.getByRole('button', { name: 'Send a ping' }).click();
    await page.getByRole('status').filter({ hasText: 'Ping queued' }).waitFor();
    expect(await page.getByRole('region', { name: 'Deliveries' }).innerText()).toContain('ping');
    await expectAccessible(page);

    await page.getByRole('link', { name: '← Outbound webhooks' }).click();
    await page.getByRole('link', { name: 'http://127.0.0.1:9/finance' }).waitFor();
    expect(await page.content()).not.toContain(secret);
    await expectAccessible(page);
  });
});

describe('/outbox', () => {
  it('lists messages with attempts and the last error; Retry now sends a failed one again', async () => {
    const [failed] = await b.t
      .db('outbox_messages')
      .insert({
        channel: 'webhook',
        kind: 'sale.created',
        destination: '00000000-0000-4000-8000-000000000001',
        payload: { id: 'e1', type: 'sale.created', createdAt: new Date().toISOString(), data: {} },
        status: 'failed',
        attempts: 9,
        last_error: 'HTTP 503: down for maintenance',
        failed_at: new Date(),
      })
      .returning('id');
    await b.t.db('outbox_messages').insert({
      channel: 'email',
      kind: 'order_received',
      destination: 'buyer@example.ac.uk',
      payload: { subject: 'Order O1 received', template: 'order_received', data: {} },
      status: 'sent',
      attempts: 1,
      sent_at: new Date(),
    });
    const page = await b.openAs(admin, '/outbox');
    const table = page.getByRole('table');
    await table.getByRole('row').filter({ hasText: 'buyer@example.ac.uk' }).waitFor();
    const failedRow = table.getByRole('row').filter({ hasText: 'HTTP 503: down for maintenance' });
    expect(await failedRow.innerText()).toMatch(/sale\.created[\s\S]*failed[\s\S]*9/);
    await expectAccessible(page);
    await screenshot(page, 'outbox');

    await failedRow.getByRole('button', { name: /Retry now/ }).click();
    await page.getByRole('status').filter({ hasText: 'Sent again now' }).waitFor();
    expect(await b.t.db('outbox_messages').where({ id: failed.id }).first('status', 'failed_at')).toEqual({
      status: 'pending',
      failed_at: null,
    });
    expect(await page.getByRole('row').filter({ hasText: 'HTTP 503' }).getByRole('button').count()).toBe(0);

    await page.getByLabel('Status').selectOption('sent');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=sent/);
    expect(await page.getByRole('table').innerText()).toContain('buyer@example.ac.uk');
    expect(await page.getByRole('table').innerText()).not.toContain('HTTP 503');
  });
});
