import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/modules/audit/audit.actor';
import { stocktakesService } from '../../src/modules/stocktakes/stocktakes.service';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, markupWithoutCsrfTokens, scanBurst, screenshot, useBrowserApp } from '../helpers/browser';
import { gs1CheckDigit } from '../../src/lib/gs1';
import { buildCategory, buildUser } from '../helpers/factories';
import { buildStockedItem, stockOf } from '../helpers/inventory-factories';

const b = useBrowserApp();

let manager: UserRow;
let clerk: UserRow;
beforeAll(async () => {
  [manager, clerk] = await Promise.all([
    buildUser(b.t.db, { role: 'manager', firstName: 'Morgan', lastName: 'Manager' }),
    buildUser(b.t.db, { firstName: 'Sam', lastName: 'Counter' }),
  ]);
});

const actorOf = (user: UserRow): Actor => ({
  kind: 'session',
  userId: user.id,
  email: user.email,
  mcpKeyId: null,
  ip: null,
});
const isFocused = (locator: Locator) => locator.evaluate((el) => el === el.ownerDocument.activeElement);
const scanEntries = (page: Page) => page.getByRole('region', { name: 'Your last scans' }).getByRole('listitem');
const lineOf = (stocktakeId: number, itemId: number) =>
  b.t.db('stocktake_lines').where({ stocktake_id: stocktakeId, item_id: itemId }).first();
/** No part of the page wider than a 390 px phone: nothing to scroll sideways. */
const scrollsSideways = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth');

/** Scanner bursts: each code typed into the focused scan box and Enter, one after another without waiting for answers. */
async function scanAll(page: Page, codes: string[]) {
  for (const code of codes) {
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
  }
}

/** Until every scan sent has its answer in the list. */
const settled = async (page: Page, entries: number) => {
  await expect.poll(() => scanEntries(page).count()).toBe(entries);
  await expect.poll(() => page.locator('#scan-entries li.pending').count()).toBe(0);
};

describe('GET /stocktakes and the count page', () => {
  it('a full stocktake by keyboard scanner: create, scan fast, an unknown code, undo, a box quantity, review, recount, post; stock and movements after', async () => {
    b.expectHttpErrors(422);
    const category = await buildCategory(b.t.db, { name: 'Stationery' });
    const pens = await buildStockedItem(b.t.db, 10, { name: 'Ballpoint pens', price: '1.20', categoryId: category.id });
    const paper = await buildStockedItem(b.t.db, 5, { name: 'A4 paper ream', price: '4.50', categoryId: category.id });
    const glue = await buildStockedItem(b.t.db, 2, { name: 'Glue stick', price: '0.80', categoryId: category.id });

    const page = await b.openAs(manager, '/stocktakes');
    await page.getByRole('link', { name: 'New stocktake' }).click();
    await page.getByLabel('Name').fill('Year end stationery');
    await page.getByLabel('The items of these categories').check();
    await page.getByRole('group', { name: 'Categories' }).getByLabel(category.name).check();
    await expectAccessible(page);
    await screenshot(page, 'stocktake-new');
    await page.getByRole('button', { name: 'Start stocktake' }).click();
    await page.waitForURL(/\/stocktakes\/\d+\/count$/);
    const stocktakeId = Number(/\/stocktakes\/(\d+)\/count/.exec(page.url())![1]);
    const { reference } = await b.t.db('stocktakes').where({ id: stocktakeId }).first();
    await page.getByRole('heading', { name: `Count ${reference}` }).waitFor();
    await expect.poll(() => page.getByText('0 of 3 lines counted').count()).toBe(1);

    // the scanner types as soon as the page is there: five scans in a row, none waiting for the last
    const scanBox = page.getByLabel('Scan or type code');
    expect(await isFocused(scanBox)).toBe(true);
    await scanAll(page, [pens.sku, pens.sku, pens.sku, paper.sku, 'NO-SUCH-CODE']);
    await settled(page, 5);
    expect(await scanBox.inputValue()).toBe('');
    expect(await isFocused(scanBox)).toBe(true);
    // newest first; the unknown code announced and nothing counted for it
    expect(await scanEntries(page).allInnerTexts()).toEqual([
      expect.stringMatching(/Not counted\s+NO-SUCH-CODE\s+No item with code 'NO-SUCH-CODE'/),
      expect.stringMatching(/\+1\s+A4 paper ream.*1 counted/s),
      expect.stringMatching(/\+1\s+Ballpoint pens.*3 counted/s),
      expect.stringMatching(/\+1\s+Ballpoint pens.*2 counted/s),
      expect.stringMatching(/\+1\s+Ballpoint pens.*1 counted/s),
    ]);
    await page.getByRole('alert').filter({ hasText: "No item with code 'NO-SUCH-CODE'" }).waitFor();
    expect(Number((await lineOf(stocktakeId, pens.id)).counted)).toBe(3);
    expect(Number((await lineOf(stocktakeId, paper.id)).counted)).toBe(1);
    await expect.poll(() => page.getByText('2 of 3 lines counted').count()).toBe(1);

    // one pen too many: its Undo, and the focus is back in the scan box for the next scan
    await page.getByRole('button', { name: 'Undo 1 of Ballpoint pens' }).first().click();
    await expect.poll(() => scanEntries(page).filter({ hasText: 'Undone' }).count()).toBe(1);
    await page.getByRole('status').filter({ hasText: 'Undone: Ballpoint pens, 2 counted' }).waitFor();
    expect(await isFocused(scanBox)).toBe(true);
    expect(Number((await lineOf(stocktakeId, pens.id)).counted)).toBe(2);

    // the paper was a pack of 4 scanned once: the last scan's quantity
    await page.getByRole('heading', { name: 'Last scan: A4 paper ream' }).waitFor();
    await page.getByLabel('Quantity of this scan').fill('4');
    await page.keyboard.press('Enter');
    await expect.poll(async () => Number((await lineOf(stocktakeId, paper.id)).counted)).toBe(4);
    await scanEntries(page)
      .filter({ hasText: /\+4\s+A4 paper ream/ })
      .waitFor();
    await expect.poll(() => isFocused(scanBox)).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'stocktake-count');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await scrollsSideways(page)).toBe(false);
    await page.setViewportSize({ width: 1280, height: 800 });

    // the review: largest variance value first, the uncounted line last; a recount of the pens
    await page.getByRole('link', { name: 'Review and post' }).click();
    await page.getByRole('heading', { name: `Stocktake ${reference}` }).waitFor();
    const rows = page.getByRole('table').locator('tbody tr');
    expect(await rows.allInnerTexts()).toEqual([
      expect.stringMatching(/Ballpoint pens.*10\s+2\s+−8\s+−£9\.60/s),
      expect.stringMatching(/A4 paper ream.*5\s+4\s+−1\s+−£4\.50/s),
      expect.stringMatching(/Glue stick.*—/s),
    ]);
    await page.getByLabel('Recount of Ballpoint pens').fill('3');
    await page.getByLabel('Recount of Ballpoint pens').press('Enter');
    await page.getByRole('status').filter({ hasText: 'Ballpoint pens: recounted 3' }).waitFor();
    expect(await rows.first().innerText()).toMatch(/Ballpoint pens.*10\s+3\s+−7\s+−£8\.40/s);
    await expectAccessible(page);
    await screenshot(page, 'stocktake-review');

    // Post stocktake: a confirmation with the totals, the uncounted glue counted as zero, by keyboard
    await page.getByRole('link', { name: 'Post stocktake' }).click();
    await page.getByRole('heading', { name: `Post stocktake ${reference}?` }).waitFor();
    const totals = await page.getByLabel('Totals').innerText();
    expect(totals).toMatch(/Lines counted\s+2 of 3/);
    expect(totals).toMatch(/Variance value\s+−£12\.90/);
    await page.getByLabel('Count them as zero (their stock is set to 0)').check();
    await expectAccessible(page);
    await screenshot(page, 'stocktake-post');
    await page.getByRole('button', { name: 'Post stocktake' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/stocktakes/${stocktakeId}$`));
    await page
      .getByRole('status')
      .filter({ hasText: `Stocktake ${reference} posted` })
      .waitFor();
    const report = await page.request.get(
      (await page.getByRole('link', { name: 'Download the report (CSV)' }).getAttribute('href'))!,
    );
    expect(report.status()).toBe(200);
    expect(report.headers()['content-type']).toMatch(/^text\/csv/);
    expect(await report.text()).toContain(`${reference},${pens.sku},Ballpoint pens`);
    await expectAccessible(page);
    await screenshot(page, 'stocktake-posted');

    // stock is what was counted, each change an adjustment movement naming the stocktake
    expect(Number(await stockOf(b.t.db, pens.id))).toBe(3);
    expect(Number(await stockOf(b.t.db, paper.id))).toBe(4);
    expect(Number(await stockOf(b.t.db, glue.id))).toBe(0);
    const movements = await b.t
      .db('stock_movements')
      .whereIn('item_id', [pens.id, paper.id, glue.id])
      .where({ type: 'adjustment' })
      .orderBy('item_id');
    expect(movements.map((m) => [m.item_id, m.reason])).toEqual(
      [pens.id, paper.id, glue.id].sort((x, y) => x - y).map((id) => [id, `Stocktake ${reference}`]),
    );
    expect((await b.t.db('stocktakes').where({ id: stocktakeId }).first()).status).toBe('posted');

    // the list shows it posted, newest first
    await page.goto('/stocktakes');
    expect(await page.getByRole('table').locator('tbody tr').first().innerText()).toMatch(
      new RegExp(`${reference}.*Year end stationery.*Posted.*Stationery.*3 / 3`, 's'),
    );
    await expectAccessible(page);
    await screenshot(page, 'stocktakes-list');
  });

  it('a blind count seen by a user holds no expected stock in its HTML; the manager pages answer the user 403', async () => {
    b.expectHttpErrors(403);
    const category = await buildCategory(b.t.db);
    const beakers = await buildStockedItem(b.t.db, 4321, { name: 'Glass beakers', categoryId: category.id });
    const created = await stocktakesService(b.t.db).create(
      { name: 'Blind beakers', scope: { itemIds: [beakers.id] }, blind: true },
      actorOf(manager),
    );
    const id = created.stocktake.id;

    const page = await b.openAs(clerk, '/stocktakes');
    await page.getByRole('link', { name: created.stocktake.reference }).click();
    await page.waitForURL(`**/stocktakes/${id}/count`);
    expect(await page.getByRole('link', { name: 'New stocktake' }).count()).toBe(0);
    // "Ask how many after each scan": the scan counts one and the focus goes to its quantity; Enter, and back to the scan box
    await page.getByLabel('Ask how many after each scan').check();
    expect(await isFocused(page.getByLabel('Scan or type code'))).toBe(true);
    await scanAll(page, [beakers.sku]);
    await settled(page, 1);
    await page.getByRole('heading', { name: 'Last scan: Glass beakers' }).waitFor();
    await expect.poll(() => isFocused(page.getByLabel('Quantity of this scan'))).toBe(true);
    await page.keyboard.type('12');
    await page.keyboard.press('Enter');
    await scanEntries(page)
      .filter({ hasText: /\+12\s+Glass beakers/ })
      .waitFor();
    await expect.poll(() => isFocused(page.getByLabel('Scan or type code'))).toBe(true);
    expect(Number((await lineOf(id, beakers.id)).counted)).toBe(12);

    // a scan while the quantity field has the focus is a scan of its own, not typed into the quantity
    await page.getByLabel('Ask how many after each scan').uncheck();
    await page.getByLabel('Quantity of this scan').focus();
    await scanBurst(page, beakers.sku);
    await settled(page, 2);
    expect(Number((await lineOf(id, beakers.id)).counted)).toBe(13);
    await scanEntries(page)
      .filter({ hasText: /\+1\s+Glass beakers.*13 counted/s })
      .waitFor();
    expect(await page.getByLabel('Quantity of this scan').inputValue()).toBe('1');
    expect(await isFocused(page.getByLabel('Scan or type code'))).toBe(true);
    const markup = await markupWithoutCsrfTokens(page);
    expect(markup).not.toMatch(/4,?321/);
    expect(markup).not.toMatch(/Expected/i);
    await page.reload();
    expect(await markupWithoutCsrfTokens(page)).not.toMatch(/4,?321|Expected/i);
    await expectAccessible(page);
    await screenshot(page, 'stocktake-count-blind');

    for (const path of [`/stocktakes/new`, `/stocktakes/${id}`, `/stocktakes/${id}/post`, `/stocktakes/${id}/cancel`]) {
      const answer = await page.goto(path);
      expect(answer?.status(), path).toBe(403);
    }
  });

  it('New stocktake of categories on a phone: a box to tick for each category, no Ctrl or Shift; none ticked is refused, two ticked count both', async () => {
    b.expectHttpErrors(422);
    const [solvents, glassware, paper] = await Promise.all(
      ['Solvents', 'Glassware', 'Paper'].map((name) => buildCategory(b.t.db, { name: `${name} ${Date.now()}` })),
    );
    const acetone = await buildStockedItem(b.t.db, 4, { name: 'Acetone 1L', categoryId: solvents.id });
    const flask = await buildStockedItem(b.t.db, 6, { name: 'Flask 250 ml', categoryId: glassware.id });
    await buildStockedItem(b.t.db, 9, { name: 'A4 ream', categoryId: paper.id });
    const page = await b.openAs(manager, '/stocktakes/new');
    await page.setViewportSize({ width: 390, height: 844 });
    const categories = page.getByRole('group', { name: 'Categories' });
    expect(await page.getByText(/Ctrl|Shift/).count()).toBe(0);
    expect(await categories.getByRole('checkbox').count()).toBeGreaterThanOrEqual(3);
    await page.getByLabel('The items of these categories').check();
    await page.getByRole('button', { name: 'Start stocktake' }).click();
    await categories.getByText('choose a category').waitFor();
    expect(await page.getByLabel('The items of these categories').isChecked()).toBe(true);

    // a tap on the name ticks the box (the label is the target)
    await categories.getByText(solvents.name).click();
    await categories.getByText(glassware.name).click();
    expect(await categories.getByLabel(solvents.name).isChecked()).toBe(true);
    expect(await categories.getByLabel(glassware.name).isChecked()).toBe(true);
    expect(await categories.getByLabel(paper.name).isChecked()).toBe(false);
    expect(await page.locator('html').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'stocktake-new-categories');
    await page.getByRole('button', { name: 'Start stocktake' }).click();
    await page.waitForURL(/\/stocktakes\/\d+\/count$/);
    const id = Number(/\/stocktakes\/(\d+)\/count/.exec(page.url())![1]);
    const lines = await b.t.db('stocktake_lines').where({ stocktake_id: id }).orderBy('item_id').pluck('item_id');
    expect(lines).toEqual([acetone.id, flask.id].sort((x, y) => x - y));
  });

  it('New stocktake of items by SKU: a code no item has is named beside the field; Cancel stocktake after its confirmation', async () => {
    b.expectHttpErrors(422);
    const tape = await buildStockedItem(b.t.db, 7, { name: 'Parcel tape' });
    const labels = await buildStockedItem(b.t.db, 3, { name: 'Address labels' });
    const page = await b.openAs(manager, '/stocktakes/new');
    await page.getByLabel('These items').check();
    await page.getByLabel('Items', { exact: true }).fill(`${tape.sku}\nNOT-A-SKU\n`);
    await page.getByRole('button', { name: 'Start stocktake' }).click();
    await page.getByText("No item with code 'NOT-A-SKU'").waitFor();
    expect(await page.getByLabel('Items', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('These items').isChecked()).toBe(true);
    await expectAccessible(page);

    await page.getByLabel('Items', { exact: true }).fill(`${tape.sku}\n${labels.sku.toLowerCase()}`);
    await page.getByRole('button', { name: 'Start stocktake' }).click();
    await page.waitForURL(/\/stocktakes\/\d+\/count$/);
    const id = Number(/\/stocktakes\/(\d+)\/count/.exec(page.url())![1]);
    const lines = await b.t.db('stocktake_lines').where({ stocktake_id: id }).orderBy('item_id').pluck('item_id');
    expect(lines).toEqual([tape.id, labels.id].sort((x, y) => x - y));

    await page.goto(`/stocktakes/${id}`);
    await page.getByRole('link', { name: 'Cancel stocktake' }).click();
    await page.getByRole('heading', { name: /^Cancel stocktake ST-/ }).waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Cancel stocktake' }).click();
    await page.getByRole('status').filter({ hasText: 'Stocktake cancelled' }).waitFor();
    expect((await b.t.db('stocktakes').where({ id }).first()).status).toBe('cancelled');
    await page.goto(`/stocktakes/${id}/count`);
    await page.getByText('This stocktake is cancelled: no more counts can be taken.').waitFor();
    expect(await page.getByLabel('Scan or type code').count()).toBe(0);
    expect(Number(await stockOf(b.t.db, tape.id))).toBe(7);

    // the cycle-count suggestions: one button starts a stocktake of the items due
    await page.goto('/stocktakes');
    const due = page.getByRole('region', { name: 'Due for a count' });
    const start = due.getByRole('button', { name: /^New stocktake of (this item|these \d+ items)$/ });
    const shown = /these (\d+) items/.exec((await start.textContent())!)?.[1] ?? '1';
    await start.click();
    await page.waitForURL(/\/stocktakes\/\d+\/count$/);
    await page.getByText(`0 of ${shown} ${shown === '1' ? 'line' : 'lines'} counted`).waitFor();
    await page.getByText('Cycle count ·').waitFor();
  });

  it('303 works without JavaScript: a scan, an unknown code refused, the quantity of the last scan and an Undo are form posts back to the count page', async () => {
    b.expectHttpErrors(422);
    const rulers = await buildStockedItem(b.t.db, 9, { name: 'Steel rulers' });
    const { stocktake } = await stocktakesService(b.t.db).create(
      { name: null, scope: { itemIds: [rulers.id] }, blind: false },
      actorOf(manager),
    );
    const browser = (await b.newPage()).context().browser()!;
    const context = await browser.newContext({ baseURL: b.baseUrl, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await b.signIn(page, clerk);
      await page.goto(`/stocktakes/${stocktake.id}/count`);
      await page.getByLabel('Scan or type code').fill(rulers.sku);
      await page.getByRole('button', { name: 'Count', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Steel rulers: 1 counted' }).waitFor();

      await page.getByLabel('Scan or type code').fill('NOPE');
      const refused = page.waitForResponse(
        (res) => new URL(res.url()).pathname === `/stocktakes/${stocktake.id}/count`,
      );
      await page.getByRole('button', { name: 'Count', exact: true }).click();
      expect((await refused).status()).toBe(422);
      await page.getByRole('alert').filter({ hasText: "No item with code 'NOPE'" }).waitFor();

      await page.getByLabel('Quantity of this scan').fill('6');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByRole('status').filter({ hasText: 'Steel rulers: 6 counted' }).waitFor();
      expect(Number((await lineOf(stocktake.id, rulers.id)).counted)).toBe(6);

      await page.getByRole('button', { name: 'Undo 6 of Steel rulers' }).click();
      await page.getByRole('status').filter({ hasText: 'Undone: Steel rulers, not counted' }).waitFor();
      expect((await lineOf(stocktake.id, rulers.id)).counted).toBeNull();
    } finally {
      await context.close();
    }
  });

  it('a lot-tracked item: a GS1 scan with its GS separators at scanner speed counts its lot; a SKU scan asks for the lot, typed or scanned', async () => {
    b.expectHttpErrors(422);
    const agent = await b.t.loginAs(manager);
    const category = await buildCategory(b.t.db);
    const sku = `ACN-${Date.now()}`;
    const created = await agent
      .post('/api/items')
      .send({ name: 'Acetonitrile 1L', sku, categoryId: category.id, price: '9.00', tracking: 'lot' })
      .expect(201);
    const itemId = created.body.id as number;
    const digits = `0${String(Date.now() % 1e12).padStart(12, '0')}`;
    const gtin = `${digits}${gs1CheckDigit(digits)}`;
    await agent.post(`/api/items/${itemId}/barcodes`).send({ code: gtin }).expect(201);
    const expiry = new Date(Date.now() + 200 * 86_400_000).toISOString().slice(0, 10);
    for (const [lotNumber, quantity] of [
      ['LOT-A', 3],
      ['LOT-B', 2],
    ] as const)
      await agent
        .post(`/api/items/${itemId}/stock`)
        .send({ type: 'in', quantity, lotNumber, expiresOn: expiry })
        .expect(200);
    const { stocktake } = await stocktakesService(b.t.db).create(
      { name: null, scope: { itemIds: [itemId] }, blind: false },
      actorOf(manager),
    );
    const lotLine = (lotNumber: string) =>
      b.t.db('stocktake_lines').where({ stocktake_id: stocktake.id, item_id: itemId, lot_number: lotNumber }).first();
    // the bottle's DataMatrix: GTIN, expiry, the lot ended by GS, then a serial (a dropped GS would run them together)
    const bottle = (lotNumber: string) =>
      `01${gtin}17${expiry.slice(2).replaceAll('-', '')}10${lotNumber}\x1d21SN${Date.now() % 1000}`;

    const page = await b.openAs(clerk, `/stocktakes/${stocktake.id}/count`);
    const scanBox = page.getByLabel('Scan or type code');
    expect(await isFocused(scanBox)).toBe(true);
    await scanBurst(page, bottle('LOT-A'));
    await scanEntries(page)
      .filter({ hasText: /\+1\s+Acetonitrile 1L.*lot LOT-A\s+1 counted/s })
      .waitFor();
    expect(await lotLine('LOT-A')).toMatchObject({ counted: '1.00', expected: '3.00' });

    // the SKU scanned: the lot is asked for, its field has the focus; typed, Enter counts it
    await scanBurst(page, sku);
    await scanEntries(page)
      .filter({ hasText: `Lot number is required for ${sku}` })
      .waitFor();
    const lotField = page.getByLabel(`Lot number of ${sku}`);
    await expect.poll(() => isFocused(lotField)).toBe(true);
    await expectAccessible(page);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await scrollsSideways(page)).toBe(false);
    await page.setViewportSize({ width: 1280, height: 800 });
    // typed as a person types (keyboard.type's keys come as fast as a scanner's)
    await lotField.fill('LOT-B');
    await page.keyboard.press('Enter');
    await scanEntries(page)
      .filter({ hasText: /\+1\s+Acetonitrile 1L.*lot LOT-B\s+1 counted/s })
      .waitFor();
    expect(await lotLine('LOT-B')).toMatchObject({ counted: '1.00', expected: '2.00' });
    await expect.poll(() => isFocused(scanBox)).toBe(true);

    // asked again, the bottle is scanned into the lot field: the scan counts its lot, the field keeps nothing
    await scanBurst(page, sku);
    await expect.poll(() => isFocused(page.getByLabel(`Lot number of ${sku}`))).toBe(true);
    await scanBurst(page, bottle('LOT-A'));
    await scanEntries(page)
      .filter({ hasText: /\+1\s+Acetonitrile 1L.*lot LOT-A\s+2 counted/s })
      .waitFor();
    expect(await lotLine('LOT-A')).toMatchObject({ counted: '2.00' });
    expect(await page.getByLabel(`Lot number of ${sku}`).inputValue()).toBe('');
    await screenshot(page, 'stocktake-count-lots');

    // the review: a line per lot, each recounted on its own
    const review = await b.openAs(manager, `/stocktakes/${stocktake.id}`);
    const rows = review.getByRole('table').locator('tbody tr');
    expect(await rows.allInnerTexts()).toEqual([
      expect.stringMatching(/Acetonitrile 1L.*Lot LOT-A.*3\s+2\s+−1/s),
      expect.stringMatching(/Acetonitrile 1L.*Lot LOT-B.*2\s+1\s+−1/s),
    ]);
    await review.getByLabel('Recount of Acetonitrile 1L lot LOT-B').fill('2');
    await review.keyboard.press('Enter');
    await review.getByText('Acetonitrile 1L: recounted 2').waitFor();
    expect(await lotLine('LOT-B')).toMatchObject({ counted: '2.00', expected: '2.00' });
    expect(await lotLine('LOT-A')).toMatchObject({ counted: '2.00' });
    await expectAccessible(review);
  });
});
