import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { gs1CheckDigit } from '../../src/lib/gs1';
import { buildCategory, buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { expectAccessible, PHONE, scanBurst, screenshot, useBrowserApp } from '../helpers/browser';
import { day, yymmdd } from '../helpers/lots-factories';

/*
 * Issue 42: the counter shows the lot(s) each basket line of an item tracked by lot will take,
 * first expiry first, and marks a lot expiring within the warning days. A wedge scanner's GS1 string
 * carrying a lot adds a line that names that lot, and processing sells from exactly that lot.
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

const scanLog = (page: Page) => page.getByRole('log', { name: 'Scans' }).getByRole('listitem');
const basketRows = (page: Page) => page.getByRole('region', { name: /^Basket/ }).locator('tbody tr');
/** No part of the page wider than a 390 px phone: nothing to scroll sideways. */
const scrollsSideways = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth');

describe('the counter: a GS1 scan naming its lot', () => {
  it('adds a line of that lot (one a lot, +1 for the same lot), refuses an expired lot, and sells from the lots scanned', async () => {
    b.expectHttpErrors(409);
    const manager = await b.t.loginAs(await buildUser(b.t.db, { role: 'manager' }));
    const category = await buildCategory(b.t.db);
    const sku = `CTR-GS1-${Date.now()}`;
    const name = 'Ethanol absolute 1 L';
    const created = await manager
      .post('/api/items')
      .send({ name, sku, categoryId: category.id, price: '8.00', tracking: 'lot' })
      .expect(201);
    const itemId = created.body.id as number;
    const body = `96${String(Date.now()).slice(-11)}`;
    const gtin = body + gs1CheckDigit(body);
    await manager.post(`/api/items/${itemId}/barcodes`).send({ code: gtin }).expect(201);
    for (const [lotNumber, quantity, expiresOn] of [
      ['SOON-3', 4, day(10)],
      ['K-21', 5, day(200)],
      ['OLD-1', 2, day(-1)],
    ] as const) {
      await manager.post(`/api/items/${itemId}/stock`).send({ type: 'in', quantity, lotNumber, expiresOn }).expect(200);
    }
    const code = await buildChargeCode(b.t.db);

    const page = await b.openAs(await buildUser(b.t.db), '/counter');
    await page.setViewportSize(PHONE);
    await page.getByLabel('Scan or type SKU').focus();
    // the bottles' DataMatrix as a wedge scanner types them: expiry, then the lot ended by GS and a
    // serial; and the lot, GS, then the expiry (a dropped GS would run the lot into what follows)
    const later = `01${gtin}17${yymmdd(day(200))}10K-21\x1d21S0001`;
    const sooner = `01${gtin}10SOON-3\x1d17${yymmdd(day(10))}`;
    const answered = () => page.waitForResponse((res) => new URL(res.url()).pathname === '/counter/add');
    for (const scan of [later, sooner, later, `01${gtin}10OLD-1\x1d17${yymmdd(day(-1))}`]) {
      const answer = answered();
      await scanBurst(page, scan);
      await answer;
    }

    await expect.poll(() => scanLog(page).count()).toBe(4);
    const entries = await scanLog(page).allTextContents();
    expect(entries[0]).toMatch(new RegExp(`Refused.*Lot OLD-1 of ${sku} is expired`, 's'));
    expect(entries[1]).toContain(`${name}, lot K-21: 2 in the basket`);
    expect(entries[2]).toContain(`${name}, lot SOON-3: 1 in the basket`);
    expect(entries[3]).toContain(`${name}, lot K-21: 1 in the basket`);

    // two lines, one a lot, each with its lot and expiry; nothing of the expired lot
    const rows = basketRows(page);
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).locator('.line-lot').textContent()).toBe(`Lot K-21, expires ${day(200)}`);
    expect(await rows.nth(1).locator('.line-lot').textContent()).toBe(`Lot SOON-3, expires ${day(10)} Expiring soon`);
    expect(await page.getByLabel(`Quantity of ${name}, lot K-21`).inputValue()).toBe('2');
    expect(await page.getByLabel(`Quantity of ${name}, lot SOON-3`).inputValue()).toBe('1');
    expect(await rows.allTextContents()).not.toContainEqual(expect.stringContaining('OLD-1'));
    expect(await scrollsSideways(page)).toBe(false);
    await expectAccessible(page);
    await screenshot(page, 'counter-gs1-lots');

    const chargeCode = page.getByLabel('Charge code');
    await chargeCode.fill(code.code);
    await chargeCode.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Charge code ${code.code} accepted` })
      .waitFor();
    await page.getByRole('button', { name: 'Process sale' }).click();
    await page.getByRole('heading', { name: /^Sale SALE-\d{8}-\d+ processed$/ }).waitFor();

    // the lots scanned, not first expiry first (which would have taken SOON-3 for all three)
    const lots = (await manager.get(`/api/items/${itemId}/lots?includeEmpty=true`).expect(200)).body as {
      lotNumber: string;
      quantity: number;
    }[];
    expect(Object.fromEntries(lots.map((lot) => [lot.lotNumber, lot.quantity]))).toEqual({
      'SOON-3': 3,
      'K-21': 3,
      'OLD-1': 2,
    });
  });

  it("refuses an unknown lot and a scan whose expiry is not the lot's; a SKU scan takes lots first expiry first; an untracked item ignores the lot", async () => {
    b.expectHttpErrors(404, 409);
    const manager = await b.t.loginAs(await buildUser(b.t.db, { role: 'manager' }));
    const category = await buildCategory(b.t.db);
    const sku = `CTR-GS2-${Date.now()}`;
    const name = 'Methanol 2.5 L';
    const created = await manager
      .post('/api/items')
      .send({ name, sku, categoryId: category.id, price: '6.00', tracking: 'lot' })
      .expect(201);
    const itemId = created.body.id as number;
    const gtinOf = (prefix: string) => {
      const digits = `${prefix}${String(Date.now()).slice(-11)}`;
      return digits + gs1CheckDigit(digits);
    };
    const gtin = gtinOf('97');
    await manager.post(`/api/items/${itemId}/barcodes`).send({ code: gtin }).expect(201);
    await manager
      .post(`/api/items/${itemId}/stock`)
      .send({ type: 'in', quantity: 3, lotNumber: 'M-7', expiresOn: day(150) })
      .expect(200);
    const plain = await buildStockedItem(b.t.db, 5, { name: 'Pipette tips', categoryId: category.id });
    const plainGtin = gtinOf('98');
    await manager.post(`/api/items/${plain.id}/barcodes`).send({ code: plainGtin }).expect(201);

    const page = await b.openAs(await buildUser(b.t.db), '/counter');
    await page.getByLabel('Scan or type SKU').focus();
    const answered = () => page.waitForResponse((res) => new URL(res.url()).pathname === '/counter/add');
    for (const scan of [
      `01${gtin}10NOPE-9\x1d17${yymmdd(day(150))}`,
      `01${gtin}17${yymmdd(day(151))}10M-7`,
      sku,
      `01${plainGtin}10TIPS-1`,
      `01${gtin}10M-7`,
    ]) {
      const answer = answered();
      await scanBurst(page, scan);
      await answer;
    }
    await expect.poll(() => scanLog(page).count()).toBe(5);
    const entries = await scanLog(page).allTextContents();
    expect(entries[4]).toMatch(new RegExp(`Refused.*Lot NOPE-9 of ${sku} not found`, 's'));
    expect(entries[3]).toMatch(new RegExp(`Refused.*Lot M-7 of ${sku} expires on ${day(150)}, not ${day(151)}`, 's'));
    expect(entries[2]).toContain(`${name}: 1 in the basket`);
    expect(entries[1]).toContain('Pipette tips: 1 in the basket');
    expect(entries[0]).toContain(`${name}, lot M-7: 1 in the basket`);

    // the SKU's line takes first expiry first (and shows what it would take); the GS1 scan's names M-7
    const rows = basketRows(page);
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(0).locator('.line-lots').textContent()).toContain(`Lot M-7 × 1, expires ${day(150)}`);
    expect(await rows.nth(1).locator('.line-lot').count()).toBe(0);
    expect(await rows.nth(2).locator('.line-lot').textContent()).toBe(`Lot M-7, expires ${day(150)}`);

    // the lot expires while it is in the basket: the line says it will not be sold
    await b.t
      .db('stock_lots')
      .where({ item_id: itemId, lot_number: 'M-7' })
      .update({ expires_on: day(-1) });
    await page.reload();
    expect(await basketRows(page).nth(2).locator('.line-lot').textContent()).toBe(
      `Lot M-7, expires ${day(-1)} Expired: not sold`,
    );
  });
});
