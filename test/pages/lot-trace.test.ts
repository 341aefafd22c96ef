import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, PHONE, screenshot, useBrowserApp, VIEWPORTS } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { buildOrder, buildSupplier } from '../helpers/purchasing-factories';
import { buildChargeCode } from '../helpers/sales-factories';

/*
 * Issue 42: a lot's trace page. A manager sees the lot, the order it came in on and the sale that
 * took it with its recipient, downloads the CSV, and recalls the lot with a message after a
 * confirmation page: the lot is quarantined and its recipient has one email queued. A user gets the 403 page.
 */

const b = useBrowserApp();

let manager: UserRow;
let clerk: UserRow;
beforeAll(async () => {
  manager = await buildUser(b.t.db, { role: 'manager', firstName: 'Tess', lastName: 'Tracer' });
  clerk = await buildUser(b.t.db, { role: 'user', firstName: 'Uma', lastName: 'Counter' });
});

/** YYYY-MM-DD, `days` from today (UK). */
const day = (days: number) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date(Date.now() + days * 86_400_000));

/** A tracked item received into lot `lotNumber` on an order from Reagents & Co, 3 of it sold to Dr Ada: the lot's id and the rest. */
async function tracedLot(lotNumber: string) {
  const sku = `TR-${Date.now()}`;
  const item = await buildItem(b.t.db, { name: `Sodium azide ${sku}`, sku });
  // tracked from the start, as receive-lots.test.ts makes one: it holds nothing yet
  await b.t.db('items').where({ id: item.id }).update({ tracking: 'lot' });
  const managerApi = await b.t.loginAs(manager);
  const supplier = await buildSupplier(b.t.db, { name: 'Reagents & Co' });
  const { order, lines } = await buildOrder(b.t.db, supplier.id, [
    { itemId: item.id, name: item.name, quantity: '10', unitCost: '1.00' },
  ]);
  await managerApi
    .post(`/api/orders/${order.id}/receive`)
    .send({
      receivedItems: [
        { orderItemId: lines[0].id, receivedQuantity: 10, lots: [{ lotNumber, expiresOn: day(90), quantity: 10 }] },
      ],
    })
    .expect(200);
  const code = (await buildChargeCode(b.t.db)).code;
  const sold = await (
    await b.t.loginAs(clerk)
  )
    .post('/api/sales')
    .send({
      chargeCode: code,
      items: [{ itemId: item.id, quantity: 3 }],
      vatApplied: false,
      recipient: { deliveredTo: 'Dr Ada Lovelace', deliveredToEmail: 'ada.trace@example.ac.uk' },
    })
    .expect(201);
  const lot = await b.t.db('stock_lots').where({ item_id: item.id, lot_number: lotNumber }).first('id');
  return {
    item,
    order,
    code,
    sale: sold.body.sale as { id: number; saleId: string },
    lotId: lot.id as number,
    managerApi,
  };
}

/** A table's rows as read, each cell's text. */
const rowsOf = (page: Page, region: string) =>
  page
    .getByRole('region', { name: region })
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent?.replace(/\s+/g, ' ').trim() ?? '')),
    );

describe('/lots/:id/trace', () => {
  it('a manager sees the receipt and the sale with its recipient, and recalls the lot with a message after confirming', async () => {
    const { item, order, code, sale, lotId, managerApi } = await tracedLot('AZ-77');
    const page = await b.openAs(manager, `/lots/${lotId}/trace`);
    await page.getByRole('heading', { level: 1, name: 'Trace of lot AZ-77' }).waitFor();

    const lot = page.getByRole('region', { name: 'Lot' });
    expect(await lot.getByRole('link', { name: item.name }).getAttribute('href')).toBe(`/items/${item.id}`);
    expect(await lot.locator('.lot-number').textContent()).toBe('AZ-77');
    expect(await lot.locator('.lot-status').textContent()).toContain('Available');
    expect(await lot.locator('.lot-remaining').textContent()).toBe('7');

    const received = page.getByRole('region', { name: 'Received' });
    const orderRow = await rowsOf(page, 'Received');
    expect(orderRow).toHaveLength(1);
    expect(orderRow[0].slice(0, 3)).toEqual([order.order_id, 'Reagents & Co', '10']);
    expect(await received.getByRole('link', { name: order.order_id }).getAttribute('href')).toBe(`/orders/${order.id}`);

    const sales = page.getByRole('region', { name: 'Sales' });
    const saleRows = await rowsOf(page, 'Sales');
    expect(saleRows).toHaveLength(1);
    expect(saleRows[0].slice(0, 4)).toEqual([sale.saleId, code, 'Dr Ada Lovelace <ada.trace@example.ac.uk>', '3']);
    expect(await sales.getByRole('link', { name: sale.saleId }).getAttribute('href')).toBe(`/sales/${sale.id}`);
    expect((await rowsOf(page, 'Movements')).length).toBe(2);

    // the CSV: the API's, a row per sale
    const href = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
    expect(href).toBe(`/api/lots/${lotId}/trace?format=csv`);
    const csv = await page.request.get(href!);
    expect(csv.status()).toBe(200);
    expect(await csv.text()).toContain('ada.trace@example.ac.uk');

    await expectAccessible(page);
    await screenshot(page, 'lot-trace', [VIEWPORTS[0], PHONE]);

    // Recall without a message: refused beside the field, nothing recalled
    b.expectHttpErrors(422);
    await page.getByRole('button', { name: 'Recall lot…' }).click();
    await page.locator('#message-error').waitFor();
    expect(await page.locator('#message-error').textContent()).toBe('is required');
    expect(await page.getByLabel('Message to the recipients').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);

    // with a message: the confirmation page first, by keyboard
    const message = 'Supplier recall: stop using the bottle and bring it back to the stores.';
    await page.getByLabel('Message to the recipients').fill(message);
    await page.getByRole('button', { name: 'Recall lot…' }).click();
    await page.getByRole('heading', { level: 1, name: 'Recall lot AZ-77?' }).waitFor();
    expect(await page.locator('blockquote').textContent()).toBe(message);
    expect(await b.t.db('outbox_messages').where({ kind: 'lot-recall' }).select('destination')).toEqual([]);
    expect((await managerApi.get(`/api/items/${item.id}/lots`).expect(200)).body[0].status).toBe('available');
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Recall lot AZ-77' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Lot AZ-77 recalled: 1 person emailed' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/lots/${lotId}/trace`);
    expect(await page.getByRole('region', { name: 'Lot' }).locator('.lot-status').textContent()).toContain(
      'Quarantined',
    );

    const lots = (await managerApi.get(`/api/items/${item.id}/lots`).expect(200)).body;
    expect(lots).toEqual([
      expect.objectContaining({ id: lotId, lotNumber: 'AZ-77', status: 'quarantined', quantity: 7 }),
    ]);
    const queued = await b.t.db('outbox_messages').where({ kind: 'lot-recall' }).select('destination');
    expect(queued.map((q) => q.destination)).toEqual(['ada.trace@example.ac.uk']);

    // at a phone's width: no sideways scrolling of the page
    await page.setViewportSize(PHONE);
    expect(await page.locator('html').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await expectAccessible(page);
  });

  it('a user gets the 403 page (the recall post is refused in test/authorization-matrix.test.ts)', async () => {
    b.expectHttpErrors(403);
    const { lotId } = await tracedLot('AZ-403');
    const page = await b.openAs(clerk, `/lots/${lotId}/trace`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).not.toContain('Trace');
    const userApi = await b.t.loginAs(clerk);
    await userApi.get(`/lots/${lotId}/trace`).expect(403);
    expect((await b.t.db('stock_lots').where({ id: lotId }).first()).quarantined_at).toBeNull();
    await expectAccessible(page);
  });
});
