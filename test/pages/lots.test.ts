import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type supertest from 'supertest';
import { buildCategory, buildUser } from '../helpers/factories';
import { expectAccessible, PHONE, screenshot, useBrowserApp, VIEWPORTS } from '../helpers/browser';

/*
 * Issue 42, /lots: the lots expiring, expired and quarantined, a tab each; a manager quarantines a
 * lot with a reason, releases it and writes one off there, and does the same from the item's page;
 * a user sees the list without the actions. At a desk's and a phone's width.
 */

const b = useBrowserApp();

/** YYYY-MM-DD, `days` from today (UK). */
const day = (days: number) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date(Date.now() + days * 86_400_000));

let api: supertest.Agent;
let categoryId: number;
let managerEmail: string;

beforeAll(async () => {
  const manager = await buildUser(b.t.db, { role: 'manager', firstName: 'Max', lastName: 'Chemist' });
  managerEmail = manager.email;
  api = await b.t.loginAs(manager);
  categoryId = (await buildCategory(b.t.db)).id;
});

let skus = 0;
/** A lot-tracked item with lots [lotNumber, quantity, expiresOn in days from today] put in by manual stock. */
async function trackedItem(name: string, lots: [string, number, number][]): Promise<{ id: number; sku: string }> {
  const sku = `LOTPG-${Date.now()}-${++skus}`;
  const res = await api.post('/api/items').send({ name, sku, categoryId, price: '5.00', tracking: 'lot' }).expect(201);
  for (const [lotNumber, quantity, days] of lots)
    await api
      .post(`/api/items/${res.body.id}/stock`)
      .send({ type: 'in', quantity, lotNumber, expiresOn: day(days), reason: 'Delivered' })
      .expect(200);
  return { id: res.body.id, sku };
}

const lotsOf = async (id: number) =>
  (await api.get(`/api/items/${id}/lots?includeEmpty=true`).expect(200)).body as {
    id: number;
    lotNumber: string;
    quantity: number;
    status: string;
  }[];

/** The lots table as read: [item, lot, quantity, status] per row, in order. */
const listRows = (page: Page) =>
  page
    .locator('table.lot-list tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) =>
        ['.lot-item a', '.lot-number', '.lot-quantity', '.lot-status .badge'].map(
          (cell) => row.querySelector(cell)?.textContent?.trim() ?? '',
        ),
      ),
    );

const rowOf = (page: Page, lotNumber: string) => page.locator(`tr[data-lot="${lotNumber}"]`);

describe('/lots', () => {
  it('a manager lists expiring and expired lots, quarantines one with a reason, releases it and writes one off', async () => {
    const item = await trackedItem('Diethyl ether 500 ml', [
      ['DE-OLD', 3, -4],
      ['DE-SOON', 5, 7],
      ['DE-LATE', 8, 400],
    ]);
    const page = await b.openAs({ email: managerEmail }, '/');
    // the navigation leads there, beside Stocktakes
    await page.goto('/lots?status=expiring');
    await page.getByRole('heading', { level: 1, name: 'Lots' }).waitFor();
    expect(await page.getByRole('link', { name: 'Expiring' }).getAttribute('aria-current')).toBe('page');
    const expiring = (await listRows(page)).filter(([name]) => name === 'Diethyl ether 500 ml');
    expect(expiring).toEqual([['Diethyl ether 500 ml', 'DE-SOON', '5', 'Expiring']]);
    expect(await rowOf(page, 'DE-SOON').getByRole('link', { name: 'Diethyl ether 500 ml' }).getAttribute('href')).toBe(
      `/items/${item.id}`,
    );
    await expectAccessible(page);

    await page.getByRole('link', { name: 'Expired' }).click();
    await page.waitForURL(/status=expired/);
    expect((await listRows(page)).filter(([name]) => name === 'Diethyl ether 500 ml')).toEqual([
      ['Diethyl ether 500 ml', 'DE-OLD', '3', 'Expired'],
    ]);

    // quarantine the expiring lot with a reason, from the expiring tab
    await page.goto('/lots?status=expiring');
    await rowOf(page, 'DE-SOON').getByLabel('Reason to quarantine lot DE-SOON').fill('Peroxide test failed');
    await rowOf(page, 'DE-SOON').getByRole('button', { name: 'Quarantine lot DE-SOON' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Lot DE-SOON of ${item.sku} quarantined: Peroxide test failed` })
      .waitFor();
    expect(page.url()).toMatch(/\/lots\?status=expiring$/);
    expect((await lotsOf(item.id)).find((lot) => lot.lotNumber === 'DE-SOON')?.status).toBe('quarantined');

    await page.getByRole('link', { name: 'Quarantined' }).click();
    await page.waitForURL(/status=quarantined/);
    const held = rowOf(page, 'DE-SOON');
    expect(await held.locator('.lot-status').textContent()).toContain('Peroxide test failed');
    await expectAccessible(page);
    await screenshot(page, 'lots-quarantined-manager', [VIEWPORTS[0], PHONE]);
    await held.getByRole('button', { name: 'Release lot DE-SOON' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Lot DE-SOON of ${item.sku} released` })
      .waitFor();
    expect((await lotsOf(item.id)).find((lot) => lot.lotNumber === 'DE-SOON')?.status).toBe('expiring');
    expect(await rowOf(page, 'DE-SOON').count()).toBe(0);

    // write off the expired lot: the browser asks first
    await page.goto('/lots?status=expired');
    page.once('dialog', (dialog) => void dialog.accept());
    await rowOf(page, 'DE-OLD').getByRole('button', { name: 'Write off lot DE-OLD' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Lot DE-OLD of ${item.sku} written off` })
      .waitFor();
    expect(await rowOf(page, 'DE-OLD').count()).toBe(0);
    const old = (await lotsOf(item.id)).find((lot) => lot.lotNumber === 'DE-OLD');
    expect(old).toMatchObject({ quantity: 0, status: 'empty' });
    const movements = await b.t.db('stock_movements').where({ item_id: item.id }).orderBy('id');
    expect(movements.at(-1)).toMatchObject({ type: 'adjustment', reason: 'Expired lot DE-OLD', quantity: '-3.00' });
    expect((await b.t.db('items').where({ id: item.id }).first()).current_stock).toBe('13.00');

    // a reason is required: the form does not go without one
    await page.goto('/lots?status=expiring');
    await rowOf(page, 'DE-SOON').getByRole('button', { name: 'Quarantine lot DE-SOON' }).click();
    expect(
      await rowOf(page, 'DE-SOON').getByLabel('Reason to quarantine lot DE-SOON').getAttribute('required'),
    ).not.toBeNull();
    expect((await lotsOf(item.id)).find((lot) => lot.lotNumber === 'DE-SOON')?.status).toBe('expiring');

    // at a phone's width: nothing scrolls sideways, and the actions are still there
    await page.setViewportSize(PHONE);
    await page.goto('/lots');
    expect(await page.locator('html').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    expect(await rowOf(page, 'DE-SOON').getByRole('button', { name: 'Quarantine lot DE-SOON' }).isVisible()).toBe(true);
    await expectAccessible(page);
  });

  it("the item's page has the same actions and a Trace link for a manager", async () => {
    const item = await trackedItem('Sodium azide 100 g', [
      ['AZ-1', 2, 5],
      ['AZ-2', 4, 300],
    ]);
    const page = await b.openAs({ email: managerEmail }, `/items/${item.id}`);
    const lots = page.getByRole('region', { name: 'Lots' });
    const [first, second] = await lotsOf(item.id);
    expect(await lots.getByRole('link', { name: 'Trace lot AZ-1' }).getAttribute('href')).toBe(
      `/lots/${first.id}/trace`,
    );
    expect(await lots.getByRole('link', { name: 'Trace lot AZ-2' }).getAttribute('href')).toBe(
      `/lots/${second.id}/trace`,
    );
    await lots.getByLabel('Reason to quarantine lot AZ-2').fill('Supplier recall notice');
    await lots.getByRole('button', { name: 'Quarantine lot AZ-2' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Lot AZ-2 of ${item.sku} quarantined: Supplier recall notice` })
      .waitFor();
    expect(new URL(page.url()).pathname).toBe(`/items/${item.id}`);
    expect(await rowOf(page, 'AZ-2').locator('.lot-status').textContent()).toContain('Quarantined');
    await rowOf(page, 'AZ-2').getByRole('button', { name: 'Release lot AZ-2' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Lot AZ-2 of ${item.sku} released` })
      .waitFor();
    // Write off asks first, as on /lots: cancelled, nothing is posted and the lot keeps its stock
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await rowOf(page, 'AZ-1').getByRole('button', { name: 'Write off lot AZ-1' }).click();
    await expect.poll(() => asked).toEqual([`Write off lot AZ-1 of ${item.sku}: all 2 in it?`]);
    expect(new URL(page.url()).pathname).toBe(`/items/${item.id}`);
    expect(await rowOf(page, 'AZ-1').locator('.lot-quantity').textContent()).toBe('2');
    expect((await lotsOf(item.id)).find((lot) => lot.lotNumber === 'AZ-1')).toMatchObject({ quantity: 2 });
    // confirmed, it is written off
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await rowOf(page, 'AZ-1').getByRole('button', { name: 'Write off lot AZ-1' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Lot AZ-1 of ${item.sku} written off` })
      .waitFor();
    expect(asked).toHaveLength(2);
    expect((await lotsOf(item.id)).map((lot) => [lot.lotNumber, lot.quantity, lot.status])).toEqual([
      ['AZ-1', 0, 'empty'],
      ['AZ-2', 4, 'available'],
    ]);
    await expectAccessible(page);
    await page.setViewportSize(PHONE);
    await page.getByRole('region', { name: 'Lots' }).scrollIntoViewIfNeeded();
    expect(await page.locator('html').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  });

  it('a user sees the list and the navigation link, without the actions', async () => {
    await trackedItem('Chloroform 1 L', [['CF-9', 2, 3]]);
    const user = await buildUser(b.t.db, { role: 'user', firstName: 'Uma', lastName: 'Chemist' });
    const page = await b.openAs(user, '/');
    expect(await page.locator('a[href="/lots"]').count()).toBeGreaterThan(0);
    await page.goto('/lots');
    expect((await listRows(page)).filter(([name]) => name === 'Chloroform 1 L')).toEqual([
      ['Chloroform 1 L', 'CF-9', '2', 'Expiring'],
    ]);
    expect(
      await page
        .getByRole('button')
        .filter({ hasText: /Write off|Quarantine|Release/ })
        .count(),
    ).toBe(0);
    await expectAccessible(page);
    await page.setViewportSize(PHONE);
    await page.reload();
    expect(await page.locator('html').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await expectAccessible(page);
  });
});
