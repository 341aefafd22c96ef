import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { outboxMessages } from '../../src/modules/outbox/outbox.queries';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildCategory, buildUser } from '../helpers/factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { buildChargeCode } from '../helpers/sales-factories';

const b = useBrowserApp();

async function openAccount(user: UserRow): Promise<Page> {
  const page = await b.newPage();
  await b.signIn(page, user);
  await page.goto('/account');
  await page.getByRole('heading', { level: 1, name: 'My account' }).waitFor();
  return page;
}

describe('/account emails', () => {
  it("shows the switches of the person's role with their defaults, and keeps a change", async () => {
    const manager = await buildUser(b.t.db, { role: 'manager' });
    const page = await openAccount(manager);
    const emails = page.getByRole('region', { name: 'Emails' });
    expect(await emails.getByLabel('Low-stock digest').isChecked()).toBe(true);
    expect(await emails.getByLabel('Order received').isChecked()).toBe(true);
    expect(await emails.getByLabel('Backup failed or overdue').count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'account-emails');

    await emails.getByLabel('Low-stock digest').uncheck();
    await emails.getByRole('button', { name: 'Save email preferences' }).click();
    await page.getByRole('status').filter({ hasText: 'Email preferences saved' }).waitFor();
    expect(await page.getByRole('region', { name: 'Emails' }).getByLabel('Low-stock digest').isChecked()).toBe(false);
    expect(await page.getByRole('region', { name: 'Emails' }).getByLabel('Order received').isChecked()).toBe(true);
    expect(await b.t.db('email_preferences').where({ user_id: manager.id }).first()).toMatchObject({
      low_stock_digest: false,
      order_received: true,
    });

    const admin = await openAccount(await buildUser(b.t.db, { role: 'admin' }));
    expect(await admin.getByRole('region', { name: 'Emails' }).getByLabel('Backup failed or overdue').isChecked()).toBe(
      true,
    );
  });
});

describe('/counter Email a receipt', () => {
  it('is off by default; ticked with the recipient after the sale, it queues the receipt to their address', async () => {
    const item = await buildStockedItem(b.t.db, 5, { name: 'Safety goggles', price: '7.50' });
    const code = await buildChargeCode(b.t.db);
    const page = await b.newPage();
    await b.signIn(page, await buildUser(b.t.db));
    await page.goto('/counter');
    await page.getByLabel('Scan or type SKU').fill(item.sku);
    await page.getByRole('button', { name: 'Add' }).click();
    await page
      .getByRole('region', { name: /^Basket/ })
      .locator('tbody tr')
      .filter({ hasText: 'Safety goggles' })
      .waitFor();
    await page.getByLabel('Charge code').fill(code.code);
    await page.getByLabel('Charge code').press('Tab');
    await page
      .getByRole('status')
      .filter({ hasText: `Charge code ${code.code} accepted` })
      .first()
      .waitFor();
    await page.getByRole('button', { name: 'Process sale' }).click();
    await page.getByRole('heading', { name: /^Sale SALE-\S+ processed$/ }).waitFor();

    const receipt = page.getByLabel('Email a receipt');
    expect(await receipt.isChecked()).toBe(false);
    await page.getByLabel('Delivered to').fill('Dr Lin');
    await page.getByLabel('Email', { exact: true }).fill('lin@example.ac.uk');
    await receipt.check();
    await page.getByRole('button', { name: 'Record recipient' }).click();
    await page.getByText('A receipt is on its way to lin@example.ac.uk').waitFor();
    await expectAccessible(page);

    const [message] = await outboxMessages(b.t.db, { destination: 'lin@example.ac.uk' });
    expect(message).toMatchObject({ kind: 'sale-receipt', channel: 'email' });
    expect(message.payload).toMatchObject({ template: 'sale-receipt', data: { deliveredTo: 'Dr Lin' } });
  });
});

describe('/settings low-stock digest', () => {
  it("an admin sets the digest's time and each category's buyers; a bad address is named beside its field", async () => {
    b.expectHttpErrors(422);
    const category = await buildCategory(b.t.db, { name: 'Gloves' });
    const page = await b.newPage();
    await b.signIn(page, await buildUser(b.t.db, { role: 'admin' }));
    await page.goto('/settings');
    const digest = page.getByRole('region', { name: 'Low-stock digest' });
    expect(await digest.getByLabel('Digest time').inputValue()).toBe('07:00');
    await digest.getByLabel('Digest time').fill('06:30');
    await digest.getByLabel('Buyers of Gloves').fill('Buyer@Example.ac.uk, not-an-address');
    await digest.getByRole('button', { name: 'Save low-stock digest' }).click();
    await page.getByText('must be an email address').waitFor();
    await expectAccessible(page);

    await page
      .getByRole('region', { name: 'Low-stock digest' })
      .getByLabel('Buyers of Gloves')
      .fill('Buyer@Example.ac.uk');
    await page
      .getByRole('region', { name: 'Low-stock digest' })
      .getByRole('button', { name: 'Save low-stock digest' })
      .click();
    await page.getByRole('status').filter({ hasText: 'Low-stock digest saved' }).waitFor();
    expect((await b.t.db('categories').where({ id: category.id }).first()).buyer_emails).toEqual([
      'buyer@example.ac.uk',
    ]);
    expect((await b.t.db('settings').where({ key: 'notifications.digestTime' }).first()).value).toEqual({
      time: '06:30',
    });
    expect(await page.getByRole('region', { name: 'Low-stock digest' }).getByLabel('Digest time').inputValue()).toBe(
      '06:30',
    );
  });
});
