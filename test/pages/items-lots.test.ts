import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildItem, buildUser } from '../helpers/factories';
import { stockOf } from '../helpers/inventory-factories';
import { expectAccessible, PHONE, screenshot, useBrowserApp, VIEWPORTS } from '../helpers/browser';
import { day } from '../helpers/lots-factories';

/*
 * Issue 42 on the item's page: a manager turns tracking by lot on (and is refused turning it off
 * while lots hold stock, beside the field), adds stock into lots with their expiry by the stock
 * form, and sees the lots first expiry first with their status badges, at a desk's and a phone's width.
 */

const b = useBrowserApp();

async function signedIn(role: 'user' | 'manager'): Promise<Page> {
  const user = await buildUser(b.t.db, { role, firstName: role === 'user' ? 'Uma' : 'Max', lastName: 'Chemist' });
  const page = await b.newPage();
  await b.signIn(page, user);
  return page;
}

/** The lots table as read: [lot, expiry, quantity, status] per row, in order. */
const lotRows = (page: Page) =>
  page
    .getByRole('region', { name: 'Lots' })
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) =>
        ['.lot-number', '.lot-expiry', '.lot-quantity', '.lot-status'].map(
          (cell) => row.querySelector(cell)?.textContent?.trim() ?? '',
        ),
      ),
    );

/** The element that has the focus, by its id. */
const focusedId = (page: Page) => page.evaluate('document.activeElement && document.activeElement.id');

/** 23 Nov 2026, as the pages show a date. */
const shown = (isoDay: string) =>
  new Intl.DateTimeFormat('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    timeZone: 'Europe/London',
  }).format(new Date(`${isoDay}T12:00:00Z`));

/** Fills the stock form by keyboard: Tab from field to field, the type's select by arrow keys, Enter sends it. */
async function recordByKeyboard(
  page: Page,
  {
    quantity,
    type = 'in',
    lotNumber,
    expiresOn,
  }: { quantity: string; type?: 'in' | 'out'; lotNumber: string; expiresOn?: string },
) {
  await page.getByLabel('Quantity').focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(quantity);
  await page.keyboard.press('Tab');
  expect(await focusedId(page)).toBe('type');
  if (type === 'out') await page.getByLabel('Type').selectOption('out');
  await page.keyboard.press('Tab');
  expect(await focusedId(page)).toBe('lotNumber');
  await page.keyboard.press('Control+A');
  await page.keyboard.type(lotNumber);
  await page.keyboard.press('Tab');
  expect(await focusedId(page)).toBe('expiresOn');
  // a date control takes its day by keyboard in the browser's own format; the value is what matters here
  if (expiresOn !== undefined) await page.getByLabel('Expiry date').fill(expiresOn);
  // Tab steps through the date's day, month and year before it leaves the control
  for (let n = 0; n < 4 && (await focusedId(page)) === 'expiresOn'; n += 1) await page.keyboard.press('Tab');
  expect(await focusedId(page)).toBe('reason');
  await page.keyboard.type('Delivered to the chemical store');
  await page.keyboard.press('Enter');
}

describe('the item page: lots', () => {
  it('a manager turns tracking on, adds stock into lots with expiry, and sees the lots first expiry first with their badges', async () => {
    const item = await buildItem(b.t.db, { name: 'Acetone 2.5 L', sku: 'ACE-25', currentStock: 6 });
    const page = await signedIn('manager');
    await page.goto(`/items/${item.id}`);
    expect(await page.getByRole('region', { name: 'Lots' }).count()).toBe(0);
    expect(await page.getByLabel('Lot number').count()).toBe(0);

    // the edit form: Tracking and Shelf life, by keyboard
    await page.getByRole('link', { name: 'Edit item' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Edit Acetone 2.5 L' }).waitFor();
    expect(await page.getByLabel('Tracking').inputValue()).toBe('none');
    await expectAccessible(page);
    await page.getByLabel('Tracking').focus();
    await page.getByLabel('Tracking').selectOption('lot');
    await page.keyboard.press('Tab');
    expect(await focusedId(page)).toBe('shelfLifeDays');
    await page.keyboard.type('365');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: "Item 'Acetone 2.5 L' saved" }).waitFor();
    expect(await b.t.db('items').where({ id: item.id }).first()).toMatchObject({
      tracking: 'lot',
      shelf_life_days: 365,
      current_stock: '6.00',
    });
    const details = page.getByRole('region', { name: 'Details' });
    expect(await details.textContent()).toMatch(/Tracking\s*By lot/);
    expect(await details.textContent()).toMatch(/Shelf life\s*365 days/);
    expect(await lotRows(page)).toEqual([['UNLOTTED', 'No expiry', '6', 'Available']]);

    // stock into a new lot with its expiry, within the warning days: expiring
    await recordByKeyboard(page, { quantity: '4', lotNumber: 'B2417', expiresOn: day(10) });
    await page.getByRole('status').filter({ hasText: 'Stock changed from 6 to 10' }).waitFor();
    expect(await lotRows(page)).toEqual([
      ['B2417', shown(day(10)), '4', 'Expiring'],
      ['UNLOTTED', 'No expiry', '6', 'Available'],
    ]);
    // a bottle found on the shelf past its date: expired at once
    await recordByKeyboard(page, { quantity: '2', lotNumber: 'OLD-7', expiresOn: day(-5) });
    await page.getByRole('status').filter({ hasText: 'Stock changed from 10 to 12' }).waitFor();
    // no expiry given: the shelf life from today
    await recordByKeyboard(page, { quantity: '3', lotNumber: 'Q-1' });
    await page.getByRole('status').filter({ hasText: 'Stock changed from 12 to 15' }).waitFor();
    expect(await stockOf(b.t.db, item.id)).toBe('15.00');
    const lots = await b.t.db('stock_lots').where({ item_id: item.id }).orderBy('lot_number');
    expect(lots.map((lot) => [lot.lot_number, lot.quantity])).toEqual([
      ['B2417', '4.00'],
      ['OLD-7', '2.00'],
      ['Q-1', '3.00'],
      ['UNLOTTED', '6.00'],
    ]);

    // quarantined by hand here: the quarantine endpoint is not this page's yet
    await b.t.db('stock_lots').where({ item_id: item.id, lot_number: 'Q-1' }).update({ quarantined_at: new Date() });
    await page.reload();
    expect(await lotRows(page)).toEqual([
      ['OLD-7', shown(day(-5)), '2', 'Expired'],
      ['B2417', shown(day(10)), '4', 'Expiring'],
      ['Q-1', shown(day(365)), '3', 'Quarantined'],
      ['UNLOTTED', 'No expiry', '6', 'Available'],
    ]);
    await expectAccessible(page);
    await screenshot(page, 'items-lots-manager', [VIEWPORTS[0], PHONE]);
    await page.setViewportSize(PHONE);
    await page.getByRole('region', { name: 'Lots' }).scrollIntoViewIfNeeded();
    expect(await page.locator('html').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    expect(await lotRows(page)).toHaveLength(4);
    await expectAccessible(page);
  });

  it('the stock form refuses an out without a lot, and turning tracking off while lots hold stock is refused beside the field', async () => {
    const item = await buildItem(b.t.db, { name: 'Ethanol absolute 1 L', sku: 'ETH-1L', currentStock: 5 });
    const page = await signedIn('manager');
    await page.goto(`/items/${item.id}/edit`);
    await page.getByLabel('Tracking').selectOption('lot');
    await page.getByRole('button', { name: 'Save item' }).click();
    await page.getByRole('status').filter({ hasText: "Item 'Ethanol absolute 1 L' saved" }).waitFor();
    await recordByKeyboard(page, { quantity: '2', lotNumber: 'E-55', expiresOn: day(200) });
    await page.getByRole('status').filter({ hasText: 'Stock changed from 5 to 7' }).waitFor();

    b.expectHttpErrors(422, 409);
    await page.getByLabel('Quantity').fill('1');
    await page.getByLabel('Type').selectOption('out');
    await page.getByRole('button', { name: 'Record stock change' }).click();
    await page.getByRole('alert').filter({ hasText: 'Lot number is required for ETH-1L' }).waitFor();
    expect(await page.getByLabel('Quantity').inputValue()).toBe('1');
    expect(await stockOf(b.t.db, item.id)).toBe('7.00');

    await page.getByRole('link', { name: 'Edit item' }).click();
    await page.getByLabel('Tracking').selectOption('none');
    await page.getByRole('button', { name: 'Save item' }).click();
    const error = page.locator('#tracking-error');
    await error.waitFor();
    expect(await error.textContent()).toContain('Tracking by lot cannot be turned off for ETH-1L: 2 lots hold stock');
    expect(await page.getByLabel('Tracking').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Tracking').inputValue()).toBe('none');
    await expectAccessible(page);
    await screenshot(page, 'items-tracking-off-refused', [VIEWPORTS[0], PHONE]);
    expect((await b.t.db('items').where({ id: item.id }).first()).tracking).toBe('lot');
  });

  it('a user sees the lots, without the stock form', async () => {
    const item = await buildItem(b.t.db, { name: 'Agar 500 g', sku: 'AGAR-500', currentStock: 3 });
    const manager = await signedIn('manager');
    await manager.goto(`/items/${item.id}/edit`);
    await manager.getByLabel('Tracking').selectOption('lot');
    await manager.getByRole('button', { name: 'Save item' }).click();
    await manager.getByRole('status').filter({ hasText: "Item 'Agar 500 g' saved" }).waitFor();

    const page = await signedIn('user');
    await page.goto(`/items/${item.id}`);
    expect(await lotRows(page)).toEqual([['UNLOTTED', 'No expiry', '3', 'Available']]);
    expect(await page.getByRole('button', { name: 'Record stock change' }).count()).toBe(0);
    await expectAccessible(page);
  });
});
