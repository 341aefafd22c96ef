import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { salesService } from '../../src/modules/sales/sales.service';
import { changeStock } from '../../src/modules/stock-movements/stock-movements.ledger';
import { itemStock } from '../../src/modules/items/items.queries';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';

const b = useBrowserApp();

let clerk: UserRow;
beforeAll(async () => {
  clerk = await buildUser(b.t.db, { firstName: 'Sam', lastName: 'Clerk' });
});

/** The ledger's rows (not its header) as their text. */
const rowTexts = (page: Page) => page.getByRole('table').locator('tbody tr').allInnerTexts();

describe('GET /stock-movements', () => {
  it('200 lists the ledger linking to items, sales and orders; filters by type and item (SKU or name) narrow it, with and without htmx', async () => {
    const beaker = await buildItem(b.t.db, { name: 'Glass beaker', sku: 'LEDGER-BKR' });
    const flask = await buildItem(b.t.db, { name: 'Glass flask', sku: 'LEDGER-FLK' });
    for (const item of [beaker, flask]) {
      await changeStock(b.t.db, itemStock, {
        itemId: item.id,
        type: 'in',
        quantity: '20',
        reason: 'Delivery counted in',
        performedBy: clerk.id,
      });
    }
    await changeStock(b.t.db, itemStock, {
      itemId: flask.id,
      type: 'adjustment',
      quantity: '15',
      reason: 'Stocktake',
      performedBy: clerk.id,
    });
    await changeStock(b.t.db, itemStock, {
      itemId: beaker.id,
      type: 'in',
      quantity: '5',
      reason: 'Received on order O9001',
      performedBy: clerk.id,
      reference: { type: 'order', id: 'O9001' },
    });
    const code = await buildChargeCode(b.t.db);
    const { sale } = await salesService(b.t.db).create(clerk, {
      chargeCode: code.code,
      items: [{ itemId: beaker.id, quantity: '3' }],
      vatApplied: true,
    });

    const page = await b.openAs(clerk, '/stock-movements');
    expect(await rowTexts(page)).toHaveLength(5);
    // one page of newest movements, no total counted and no page links
    expect(await page.getByRole('navigation', { name: 'Stock movement pages' }).count()).toBe(0);
    const saleRow = page
      .getByRole('row')
      .filter({ hasText: `Sale ${sale.sale_id}` })
      .first();
    expect(await saleRow.innerText()).toMatch(/Glass beaker \(LEDGER-BKR\)\s+Out\s+-3\s+25\s+22/);
    expect(await page.getByRole('link', { name: 'Order O9001' }).getAttribute('href')).toBe('/orders/O9001');
    await expectAccessible(page);
    await screenshot(page, 'stock-movements-list');

    // htmx swaps the list in place (the marker on this document survives) and keeps the filter in the address
    await page.evaluate("document.body.setAttribute('data-loaded-once', 'yes')");
    await page.getByLabel('Type').selectOption({ label: 'In' });
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('type') === 'in');
    await expect.poll(async () => (await rowTexts(page)).length).toBe(3);
    expect((await rowTexts(page)).every((row) => /\sIn\s/.test(row))).toBe(true);
    await page.getByLabel('Item (SKU or name)').fill('ledger-flk');
    await page.getByLabel('Item (SKU or name)').press('Enter');
    await expect.poll(async () => (await rowTexts(page)).length).toBe(1);
    expect(await rowTexts(page)).toEqual([
      expect.stringMatching(/^.*Glass flask \(LEDGER-FLK\)\s+In\s+\+20\s+0\s+20\s+Delivery counted in/),
    ]);
    expect(await page.locator('body').getAttribute('data-loaded-once')).toBe('yes');

    // a part of a name that several items share: the page offers them, and one is chosen
    await page.goto('/stock-movements?item=glass');
    await page.getByRole('heading', { name: 'Several items match “glass”' }).waitFor();
    await page.getByRole('link', { name: 'Glass flask' }).click();
    await page.waitForURL((url) => url.searchParams.get('item') === 'LEDGER-FLK');
    expect(await rowTexts(page)).toHaveLength(2);
    expect(page.url()).toContain('item=LEDGER-FLK');
    expect(await page.getByLabel('Item (SKU or name)').inputValue()).toBe('LEDGER-FLK');

    // the item by its full name, as a plain GET (no JavaScript needed), paged by one: keyset pages
    // (older than the last row shown, newer than the first), so no total is counted
    await page.goto('/stock-movements?item=Glass+beaker&limit=1');
    const nav = page.getByRole('navigation', { name: 'Stock movement pages' });
    expect(await nav.getByRole('link').allInnerTexts()).toEqual(['Next page']);
    expect(await rowTexts(page)).toEqual([expect.stringContaining(`Sale ${sale.sale_id}`)]);
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL((url) => url.searchParams.has('before'));
    await expect.poll(() => rowTexts(page)).toEqual([expect.stringContaining('Received on order O9001')]);
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect.poll(() => rowTexts(page)).toEqual([expect.stringContaining('Delivery counted in')]);
    // the oldest: nothing older to offer
    expect(await nav.getByRole('link').allInnerTexts()).toEqual(['Previous page']);
    await page.getByRole('link', { name: 'Previous page' }).click();
    await page.waitForURL((url) => url.searchParams.has('after'));
    await expect.poll(() => rowTexts(page)).toEqual([expect.stringContaining('Received on order O9001')]);
    await page.getByRole('link', { name: 'Previous page' }).click();
    await expect.poll(() => rowTexts(page)).toEqual([expect.stringContaining(`Sale ${sale.sale_id}`)]);
    // back at the newest: nothing newer to offer
    expect(await nav.getByRole('link').allInnerTexts()).toEqual(['Next page']);
    // a numbered page of an older link still opens, with keyset links on from it
    await page.goto('/stock-movements?item=Glass+beaker&limit=1&page=2');
    expect(await rowTexts(page)).toEqual([expect.stringContaining('Received on order O9001')]);
    expect(await nav.getByRole('link').allInnerTexts()).toEqual(['Previous page', 'Next page']);
    await page.getByRole('link', { name: 'Glass beaker' }).click();
    await page.waitForURL(`**/items/${beaker.id}`);

    await page.goto('/stock-movements?type=out');
    await page.getByRole('link', { name: `Sale ${sale.sale_id}` }).click();
    await page.waitForURL(`**/sales/${sale.id}`);
    await page.getByRole('heading', { level: 1, name: `Sale ${sale.sale_id}` }).waitFor();
  });

  it('200 says when no item has the SKU or name typed, and 422 names a bad date typed into the address', async () => {
    b.expectHttpErrors(422);
    const page = await b.openAs(clerk, '/stock-movements?item=no-such-thing');
    await page.getByText('No item has the SKU or name “no-such-thing”.').waitFor();
    await page.goto('/stock-movements?startDate=yesterday');
    await page.getByText('must be a date (YYYY-MM-DD) or an ISO 8601 timestamp').waitFor();
    expect(await page.getByLabel('From').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);
  });
});
