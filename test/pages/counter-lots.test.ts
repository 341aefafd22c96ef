import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { buildCategory, buildUser } from '../helpers/factories';
import { PHONE, useBrowserApp } from '../helpers/browser';
import { day } from '../helpers/lots-factories';

/*
 * Issue 42: the counter shows the lot(s) each basket line of an item tracked by lot will take,
 * first expiry first, and marks a lot expiring within the warning days.
 */

const b = useBrowserApp();

/** An item tracked by lot with three lots: one expiring (within the default 30 days), one later, one expired. */
async function trackedItem() {
  const manager = await b.t.loginAs(await buildUser(b.t.db, { role: 'manager' }));
  const category = await buildCategory(b.t.db);
  const sku = `CTR-LOT-${Date.now()}`;
  const name = 'Acetone 2.5 L';
  const created = await manager
    .post('/api/items')
    .send({ name, sku, categoryId: category.id, price: '12.00', tracking: 'lot' })
    .expect(201);
  for (const [lotNumber, quantity, expiresOn] of [
    ['SOON7', 2, day(10)],
    ['LATER9', 5, day(200)],
    ['PAST1', 3, day(-1)],
  ] as const) {
    await manager
      .post(`/api/items/${created.body.id}/stock`)
      .send({ type: 'in', quantity, lotNumber, expiresOn })
      .expect(200);
  }
  return { sku, name };
}

const lotsShown = (page: Page, name: string) =>
  page
    .getByRole('list', { name: `Lots ${name} will take` })
    .getByRole('listitem')
    .allTextContents();

describe('the counter: lots of a tracked line', () => {
  it('shows the lots a line will take, first expiry first, never the expired one, and marks the one expiring', async () => {
    const item = await trackedItem();
    const page = await b.openAs(await buildUser(b.t.db), '/counter');
    await page.setViewportSize(PHONE);
    await page.getByLabel('Scan or type SKU').focus();
    const answered = page.waitForResponse((res) => new URL(res.url()).pathname === '/counter/add');
    await page.keyboard.type(item.sku);
    await page.keyboard.press('Enter');
    await answered;

    await expect.poll(() => lotsShown(page, item.name)).toEqual([`Lot SOON7 × 1, expires ${day(10)} Expiring soon`]);

    // four: the two of the expiring lot, then two of the later one; the expired lot is never offered
    const quantity = page.getByLabel(`Quantity of ${item.name}`);
    await quantity.focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('4');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => lotsShown(page, item.name))
      .toEqual([`Lot SOON7 × 2, expires ${day(10)} Expiring soon`, `Lot LATER9 × 2, expires ${day(200)}`]);
    const marked = page.locator('.line-lots li.expiring');
    expect(await marked.count()).toBe(1);
    expect(await marked.locator('.badge.warn').isVisible()).toBe(true);
  });
});
