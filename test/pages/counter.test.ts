import type { Locator, Page, Route } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords';
import { TEST_PASSWORD_HASH_COST } from '../../src/config';
import { buildCategory, buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { buildStockedItem, stockOf } from '../helpers/inventory-factories';
import { expectAccessible, PHONE, scanBurst, screenshot, useBrowserApp } from '../helpers/browser';

const b = useBrowserApp();

const isFocused = (locator: Locator) => locator.evaluate((el) => el === el.ownerDocument.activeElement);

async function openCounter(options: { showPickingList?: boolean } = {}) {
  const user = await buildUser(b.t.db, { firstName: 'Sam', lastName: 'Counter' });
  if (options.showPickingList) await b.t.db('users').where({ id: user.id }).update({ show_picking_list: true });
  const page = await b.newPage();
  await b.signIn(page, user);
  await page.goto('/counter');
  // the scanner types as soon as the page is there: the scan box has the focus by then
  expect(await isFocused(page.getByLabel('Scan or type SKU'))).toBe(true);
  return { page, user };
}

/** Presses Tab until `locator` has the focus, as a keyboard user does; fails when it never gets it. */
async function tabTo(page: Page, locator: Locator, most = 20) {
  for (let presses = 0; presses < most; presses += 1) {
    await page.keyboard.press('Tab');
    if (await isFocused(locator)) return;
  }
  throw new Error(`Tab never reached ${locator}`);
}

/** A scan: the scanner types the SKU into the focused scan box and presses Enter. */
async function scan(page: Page, sku: string) {
  const answered = page.waitForResponse((res) => new URL(res.url()).pathname === '/counter/add');
  await page.keyboard.type(sku);
  await page.keyboard.press('Enter');
  await answered;
}

/** A person at the keyboard: a key every 90 ms or so. */
const typeAsPerson = (page: Page, text: string) => page.keyboard.type(text, { delay: 90 });

const scanLog = (page: Page) => page.getByRole('log', { name: 'Scans' }).getByRole('listitem');

const basketRows = (page: Page) => page.getByRole('region', { name: /^Basket/ }).locator('tbody tr');
const totals = (page: Page) =>
  page
    .getByRole('region', { name: /^Basket/ })
    .locator('.totals')
    .textContent();
const draftsOf = (userId: string) => b.t.db('quotes').where({ user_id: userId });

describe('GET /counter', () => {
  it('200 sells by keyboard alone: scans, a refused SKU, a refused and an accepted charge code, process, recipient', async () => {
    b.expectHttpErrors(422);
    const category = await buildCategory(b.t.db);
    const pens = await buildStockedItem(b.t.db, 10, {
      name: 'Ballpoint pens',
      price: '1.20',
      vatRate: '0.2',
      categoryId: category.id,
    });
    const paper = await buildStockedItem(b.t.db, 5, {
      name: 'A4 paper ream',
      price: '4.50',
      vatRate: '0.2',
      categoryId: category.id,
    });
    const held = await buildChargeCode(b.t.db, { onHold: true, holdReason: 'Budget frozen' });
    const code = await buildChargeCode(b.t.db);
    const { page, user } = await openCounter();
    const scanBox = page.getByLabel('Scan or type SKU');

    await scan(page, pens.sku);
    await basketRows(page).filter({ hasText: pens.name }).waitFor();
    await scan(page, paper.sku);
    await basketRows(page).filter({ hasText: paper.name }).waitFor();
    await scan(page, pens.sku);
    await expect.poll(() => page.getByLabel(`Quantity of ${pens.name}`).inputValue()).toBe('2');
    await scan(page, 'NO-SUCH-SKU');
    await page.getByRole('alert').filter({ hasText: "No item with code 'NO-SUCH-SKU'" }).waitFor();
    expect(await scanBox.inputValue()).toBe('');
    expect(await isFocused(scanBox)).toBe(true);
    expect(await basketRows(page).count()).toBe(2);
    // 2 x 1.20 + 4.50 = 6.90, VAT 0.48 + 0.90
    expect(await totals(page)).toMatch(/Subtotal\s*£6\.90\s*VAT\s*£1\.38\s*Total\s*£8\.28/);
    await expectAccessible(page);
    await screenshot(page, 'counter-basket');

    const chargeCode = page.getByLabel('Charge code');
    await tabTo(page, chargeCode);
    await typeAsPerson(page, held.code);
    await page.keyboard.press('Enter');
    await page
      .getByRole('alert')
      .filter({ hasText: `Charge code '${held.code}' is on hold: Budget frozen` })
      .waitFor();
    await screenshot(page, 'counter-charge-code-refused');
    await page.keyboard.press('Control+A');
    await typeAsPerson(page, code.code);
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Charge code ${code.code} accepted` })
      .waitFor();
    expect((await draftsOf(user.id).first()).charge_code).toBe(code.code);

    await tabTo(page, page.getByRole('button', { name: 'Process sale' }));
    await page.keyboard.press('Enter');
    const heading = page.getByRole('heading', { name: /^Sale SALE-\d{8}-\d+ processed$/ });
    await heading.waitFor();
    const saleId = (await heading.textContent())!.replace(/^Sale (\S+) processed$/, '$1');
    const sale = await b.t.db('sales').where({ sale_id: saleId }).first();
    expect(sale).toMatchObject({ charge_code: code.code, total_amount: '8.28', processed_by: user.id });
    expect(await stockOf(b.t.db, pens.id)).toBe('8.00');
    expect(await stockOf(b.t.db, paper.id)).toBe('4.00');
    expect(await draftsOf(user.id)).toEqual([]);
    expect(await page.getByRole('heading', { name: 'Picking list' }).count()).toBe(0);
    await page.getByText('The basket is empty').waitFor();
    expect(await isFocused(scanBox)).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'counter-sale-processed');

    await tabTo(page, page.getByLabel('Delivered to'));
    await page.keyboard.type('Dr Ada Lovelace');
    await page.keyboard.press('Tab');
    await typeAsPerson(page, 'ada@example.ac.uk');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Delivered to Dr Ada Lovelace (ada@example.ac.uk)' }).waitFor();
    expect(await b.t.db('sales').where({ sale_id: saleId }).first()).toMatchObject({
      delivered_to: 'Dr Ada Lovelace',
      delivered_to_email: 'ada@example.ac.uk',
    });
  });

  it('200 keeps the basket over a reload and in another tab of the session; Clear deletes the draft', async () => {
    const item = await buildStockedItem(b.t.db, 3, { name: 'Stapler' });
    const { page, user } = await openCounter();
    await scan(page, item.sku);
    await basketRows(page).filter({ hasText: 'Stapler' }).waitFor();

    await page.reload();
    await basketRows(page).filter({ hasText: 'Stapler' }).waitFor();
    const otherTab = await page.context().newPage();
    await otherTab.goto('/counter');
    await basketRows(otherTab).filter({ hasText: 'Stapler' }).waitFor();
    expect(await draftsOf(user.id)).toHaveLength(1);

    await page.getByRole('button', { name: 'Clear' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('The basket is empty').waitFor();
    expect(await draftsOf(user.id)).toEqual([]);
    await otherTab.reload();
    await otherTab.getByText('The basket is empty').waitFor();
  });

  it('200 offers items matching a typed name, chosen with the arrow keys and Enter', async () => {
    const item = await buildStockedItem(b.t.db, 4, { name: 'Whiteboard marker, blue' });
    await buildStockedItem(b.t.db, 4, { name: 'Whiteboard eraser' });
    const { page } = await openCounter();
    await page.keyboard.type('Whiteboard');
    const matches = page.getByRole('listbox', { name: 'Matching items' });
    await matches.getByRole('option').nth(1).waitFor();
    expect(await page.getByLabel('Scan or type SKU').getAttribute('aria-expanded')).toBe('true');
    await screenshot(page, 'counter-matches');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await matches.getByRole('option', { selected: true }).textContent()).toContain('Whiteboard marker, blue');
    await page.keyboard.press('Enter');
    await basketRows(page).filter({ hasText: item.name }).waitFor();
    expect(await matches.isHidden()).toBe(true);
  });

  it('422 refuses an inactive item as it refuses an unknown SKU', async () => {
    b.expectHttpErrors(422);
    const retired = await buildStockedItem(b.t.db, 4, { name: 'Retired label maker', isActive: false });
    const { page, user } = await openCounter();
    await scan(page, retired.sku);
    await page.getByRole('alert').filter({ hasText: "Item 'Retired label maker' is inactive" }).waitFor();
    expect(await page.getByLabel('Scan or type SKU').inputValue()).toBe('');
    expect(await draftsOf(user.id)).toEqual([]);
  });

  it('200 recomputes the totals for a fractional quantity', async () => {
    const cable = await buildStockedItem(b.t.db, 10, { name: 'Cable by the metre', price: '4.00', vatRate: '0.2' });
    const { page } = await openCounter();
    await scan(page, cable.sku);
    const quantity = page.getByLabel('Quantity of Cable by the metre');
    await quantity.waitFor();
    await quantity.focus();
    await page.keyboard.press('Control+A');
    await typeAsPerson(page, '2.5');
    await page.keyboard.press('Enter');
    await expect.poll(() => totals(page)).toMatch(/Subtotal\s*£10\.00\s*VAT\s*£2\.00\s*Total\s*£12\.00/);
    expect(await isFocused(page.getByLabel('Quantity of Cable by the metre'))).toBe(true);

    await page.getByLabel('VAT applied').focus();
    await page.keyboard.press('Space');
    await expect
      .poll(() => totals(page))
      .toMatch(/Subtotal\s*£10\.00\s*VAT \(not applied\)\s*£0\.00\s*Total\s*£10\.00/);
  });

  it('422 keeps the basket when processing finds too little stock, with the spec message', async () => {
    b.expectHttpErrors(422);
    const toner = await buildStockedItem(b.t.db, 1, { name: 'Toner cartridge' });
    const code = await buildChargeCode(b.t.db);
    const { page, user } = await openCounter();
    await scan(page, toner.sku);
    await basketRows(page).filter({ hasText: 'Toner cartridge' }).waitFor();
    await scan(page, toner.sku);
    await page.getByText('Not enough stock for Toner cartridge').waitFor();
    await tabTo(page, page.getByLabel('Charge code'));
    await typeAsPerson(page, code.code);
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Charge code ${code.code} accepted` })
      .waitFor();
    await tabTo(page, page.getByRole('button', { name: 'Process sale' }));
    await page.keyboard.press('Enter');
    await page
      .getByRole('alert')
      .filter({ hasText: "Insufficient stock for item 'Toner cartridge'. Current stock: 1, Required: 2" })
      .waitFor();
    expect(await basketRows(page).count()).toBe(1);
    expect(await draftsOf(user.id)).toHaveLength(1);
    expect(await stockOf(b.t.db, toner.id)).toBe('1.00');
    await expectAccessible(page);
    await screenshot(page, 'counter-insufficient-stock');
  });

  it('422 asks for the PIN and an authorised recipient while the charge-code policies are on, then sells with them', async () => {
    b.expectHttpErrors(422);
    const admin = await b.t.loginAs(await buildUser(b.t.db, { role: 'admin' }));
    for (const key of ['chargeCodes.requirePin', 'chargeCodes.requireAuthorisedUser']) {
      await admin
        .put(`/api/settings/${key}`)
        .send({ value: { enabled: true } })
        .expect(200);
    }
    try {
      const pens = await buildStockedItem(b.t.db, 10, { name: 'Ballpoint pens' });
      const code = await buildChargeCode(b.t.db);
      await b.t
        .db('charge_codes')
        .where({ id: code.id })
        .update({ pin_hash: await hashPassword('2468', TEST_PASSWORD_HASH_COST) });
      await b.t.db('charge_code_authorised_users').insert({
        charge_code_id: code.id,
        user_name: 'Dr Grace',
        email: 'grace@example.ac.uk',
        department: 'Chemistry',
      });
      const { page, user } = await openCounter();
      await scan(page, pens.sku);
      await basketRows(page).filter({ hasText: pens.name }).waitFor();
      await page.getByLabel('Charge code', { exact: true }).fill(code.code);
      await page.keyboard.press('Enter');
      await page
        .getByRole('status')
        .filter({ hasText: `Charge code ${code.code} accepted` })
        .waitFor();

      await page.getByLabel('PIN', { exact: true }).fill('1357');
      await page.getByRole('button', { name: 'Process sale' }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: `Incorrect PIN for charge code '${code.code}'` })
        .waitFor();
      await page.getByLabel('PIN', { exact: true }).fill('2468');
      await page.getByLabel("Recipient's name").fill('Dr Grace');
      await page.getByLabel("Recipient's email").fill('mallory@example.ac.uk');
      await page.getByRole('button', { name: 'Process sale' }).click();
      await page
        .getByRole('alert')
        .filter({
          hasText: `Recipient 'mallory@example.ac.uk' is not an authorised user of charge code '${code.code}'`,
        })
        .waitFor();
      expect(await stockOf(b.t.db, pens.id)).toBe('10.00');
      await expectAccessible(page);

      await page.getByLabel("Recipient's email").fill('Grace@example.ac.uk');
      await page.getByRole('button', { name: 'Process sale' }).click();
      await page.getByRole('heading', { name: /^Sale SALE-\d{8}-\d+ processed$/ }).waitFor();
      expect(await b.t.db('sales').where({ processed_by: user.id }).first()).toMatchObject({
        charge_code: code.code,
        delivered_to: 'Dr Grace',
        delivered_to_email: 'Grace@example.ac.uk',
      });
      expect(await stockOf(b.t.db, pens.id)).toBe('9.00');
    } finally {
      for (const key of ['chargeCodes.requirePin', 'chargeCodes.requireAuthorisedUser']) {
        await admin
          .put(`/api/settings/${key}`)
          .send({ value: { enabled: false } })
          .expect(200);
      }
    }
  });

  it('200 shows the picking list when the preference is on', async () => {
    const tape = await buildStockedItem(b.t.db, 6, { name: 'Parcel tape' });
    const code = await buildChargeCode(b.t.db);
    const { page } = await openCounter({ showPickingList: true });
    await scan(page, tape.sku);
    await scan(page, tape.sku);
    await expect.poll(() => page.getByLabel('Quantity of Parcel tape').inputValue()).toBe('2');
    await tabTo(page, page.getByLabel('Charge code'));
    await typeAsPerson(page, code.code);
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Charge code ${code.code} accepted` })
      .waitFor();
    await tabTo(page, page.getByRole('button', { name: 'Process sale' }));
    await page.keyboard.press('Enter');
    const picking = page.getByRole('table', { name: 'Picking list' });
    await picking.waitFor();
    expect(await picking.locator('tbody').textContent()).toMatch(/Parcel tape\s*\S+\s*2/);
    await expectAccessible(page);
    await screenshot(page, 'counter-picking-list');
  });

  it('303 works without JavaScript: every action a form post that comes back to /counter', async () => {
    const glue = await buildStockedItem(b.t.db, 5, { name: 'Glue stick', price: '2.00', vatRate: '0.2' });
    const code = await buildChargeCode(b.t.db);
    const user = await buildUser(b.t.db);
    const browser = (await b.newPage()).context().browser()!;
    const context = await browser.newContext({ baseURL: b.baseUrl, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await b.signIn(page, user);
      await page.goto('/counter');
      await page.getByLabel('Scan or type SKU').fill(glue.sku);
      await page.getByRole('button', { name: 'Add' }).click();
      await basketRows(page).filter({ hasText: 'Glue stick' }).waitFor();

      await page.getByLabel('Scan or type SKU').fill('NOPE');
      const refused = page.waitForResponse((res) => new URL(res.url()).pathname === '/counter/add');
      await page.getByRole('button', { name: 'Add' }).click();
      expect((await refused).status()).toBe(422);
      await page.getByRole('alert').filter({ hasText: "No item with code 'NOPE'" }).waitFor();

      await page.getByLabel('Quantity of Glue stick').fill('3');
      await page.getByRole('button', { name: 'Update' }).click();
      await expect.poll(() => totals(page)).toMatch(/Subtotal\s*£6\.00\s*VAT\s*£1\.20\s*Total\s*£7\.20/);
      await page.getByLabel('VAT applied').uncheck();
      await page.getByLabel('Customer notes').fill('For the chemistry open day');
      await page.getByRole('button', { name: 'Save details' }).click();
      await expect.poll(() => totals(page)).toMatch(/Total\s*£6\.00/);
      expect(await page.getByLabel('Customer notes').inputValue()).toBe('For the chemistry open day');

      await page.getByLabel('Charge code').fill(code.code);
      await page.getByRole('button', { name: 'Check code' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Charge code ${code.code} accepted` })
        .first()
        .waitFor();
      await page.getByRole('button', { name: 'Process sale' }).click();
      await page.getByRole('heading', { name: /^Sale SALE-\S+ processed$/ }).waitFor();
      expect(new URL(page.url()).searchParams.get('sale')).toMatch(/^\d+$/);
      expect(await stockOf(b.t.db, glue.id)).toBe('2.00');
      const sale = await b.t.db('sales').where({ processed_by: user.id }).first();
      expect(sale).toMatchObject({
        total_amount: '6.00',
        vat_applied: false,
        customer_notes: 'For the chemistry open day',
      });

      await page.getByLabel('Delivered to').fill('Lab technician');
      await page.getByRole('button', { name: 'Record recipient' }).click();
      await page.getByText('Recipient recorded').waitFor();
      expect((await b.t.db('sales').where({ id: sale.id }).first()).delivered_to).toBe('Lab technician');

      await page.getByLabel('Scan or type SKU').fill(glue.sku);
      await page.getByRole('button', { name: 'Add' }).click();
      await basketRows(page).filter({ hasText: 'Glue stick' }).waitFor();
      await page.getByRole('button', { name: 'Remove Glue stick' }).click();
      await page.getByText('The basket is empty').waitFor();
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.getByText('Basket cleared').waitFor();
      expect(await draftsOf(user.id)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('GET /counter under a scanner', () => {
  it("200 a manufacturer's EAN-13, its UPC-A form and a GS1 DataMatrix string (bracketed, or with GS separators) add the item", async () => {
    const category = await buildCategory(b.t.db);
    const acetone = await buildStockedItem(b.t.db, 20, { name: 'Acetone 1L', price: '3.00', categoryId: category.id });
    // the UPC-A 036000291452 is the EAN-13 0036000291452 and the GTIN-14 00036000291452
    await b.t.db('item_barcodes').insert({
      item_id: acetone.id,
      code: '0036000291452',
      lookup_key: '00036000291452',
      kind: 'ean13',
    });
    const { page } = await openCounter();
    const quantity = () => page.getByLabel(`Quantity of ${acetone.name}`).inputValue();
    await scanBurst(page, '0036000291452');
    await basketRows(page).filter({ hasText: acetone.name }).waitFor();
    await scanBurst(page, '036000291452');
    await expect.poll(quantity).toBe('2');
    await scanBurst(page, '(01)00036000291452(17)271231(10)LOT-7');
    await expect.poll(quantity).toBe('3');
    // a DataMatrix read without parentheses: the GTIN first, then the expiry, the lot and the FNC1 a
    // wedge scanner sends as GS (a control character a text box may drop: the GTIN is read either way)
    await scanBurst(page, '01000360002914521727123110LOT-7\x1d21SN42');
    await expect.poll(quantity).toBe('4');
    await scanBurst(page, '010003600029145217271231');
    await expect.poll(quantity).toBe('5');
    expect(await basketRows(page).count()).toBe(1);
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('200 a scan typed while Process sale is answering goes whole into the next basket', async () => {
    const pens = await buildStockedItem(b.t.db, 10, { name: 'Ballpoint pens' });
    const beaker = await buildStockedItem(b.t.db, 10, { name: 'Glass beaker 250 ml', sku: `GLS-BK-${Date.now()}` });
    const code = await buildChargeCode(b.t.db);
    const { page, user } = await openCounter();
    await scan(page, pens.sku);
    await basketRows(page).filter({ hasText: pens.name }).waitFor();
    await page.getByLabel('Charge code', { exact: true }).fill(code.code);
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Charge code ${code.code} accepted` })
      .waitFor();

    // the sale's answer is held back until the whole scan was typed
    let holdBack!: (route: Route) => void;
    const processing = new Promise<Route>((resolve) => (holdBack = resolve));
    await page.route('**/counter/process', (route) => holdBack(route));
    await page.getByRole('button', { name: 'Process sale' }).click();
    const held = await processing;
    await scanBurst(page, beaker.sku);
    await held.continue();

    // the sale took the basket as it was; the scan started the next one
    await basketRows(page).filter({ hasText: beaker.name }).waitFor();
    expect(await page.getByLabel(`Quantity of ${beaker.name}`).inputValue()).toBe('1');
    expect(await basketRows(page).count()).toBe(1);
    const sale = await b.t.db('sales').where({ processed_by: user.id }).first();
    expect(await b.t.db('sale_items').where({ sale_id: sale.id }).pluck('item_name')).toEqual([pens.name]);
    expect(await stockOf(b.t.db, beaker.id)).toBe('10.00');
    expect(
      await b.t
        .db('quote_items')
        .join('quotes', 'quotes.id', 'quote_items.quote_id')
        .where('quotes.user_id', user.id)
        .pluck('item_sku'),
    ).toEqual([beaker.sku]);
    expect(await scanLog(page).first().textContent()).toContain(beaker.sku);
  });

  it("200 a scan queued behind Process sale's answer leaves the sale's number, total and link in the scan log until the next sale", async () => {
    const pens = await buildStockedItem(b.t.db, 10, { name: 'Ballpoint pens', price: '1.20', vatRate: '0.2' });
    const beaker = await buildStockedItem(b.t.db, 100, {
      name: 'Glass beaker 250 ml',
      sku: `GLS-BK-${Date.now()}`,
      price: '12.00',
      vatRate: '0.2',
    });
    const code = await buildChargeCode(b.t.db);
    const { page, user } = await openCounter();
    const chargeTo = async () => {
      await page.getByLabel('Charge code', { exact: true }).fill(code.code);
      await page.keyboard.press('Enter');
      await page
        .getByRole('status')
        .filter({ hasText: `Charge code ${code.code} accepted` })
        .waitFor();
    };
    await scan(page, pens.sku);
    await basketRows(page).filter({ hasText: pens.name }).waitFor();
    await chargeTo();

    // the sale is recorded, but its answer is held back until a scan is queued behind it
    let answered!: () => void;
    const saleRecorded = new Promise<void>((resolve) => (answered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/counter/process', async (route) => {
      const response = await route.fetch();
      answered();
      await released;
      await route.fulfill({ response });
    });
    await page.getByRole('button', { name: 'Process sale' }).click();
    await saleRecorded;
    await scanBurst(page, beaker.sku);
    release();

    await basketRows(page).filter({ hasText: beaker.name }).waitFor();
    const sale = await b.t.db('sales').where({ processed_by: user.id }).first();
    const saleLine = scanLog(page).filter({ hasText: `Sale ${sale.sale_id} ` });
    await saleLine.waitFor();
    // 1.20 + 20% VAT
    expect(await saleLine.textContent()).toBe(`Sold Sale ${sale.sale_id} £1.44 processed`);
    expect(await scanLog(page).first().textContent()).toContain(beaker.sku);
    expect(await scanLog(page).count()).toBe(3);

    // a full log of later scans keeps it; the next sale takes its place as the last
    for (let n = 0; n < 31; n += 1) await scan(page, beaker.sku);
    await expect.poll(() => page.getByLabel(`Quantity of ${beaker.name}`).inputValue()).toBe('32');
    expect(await saleLine.count()).toBe(1);
    await chargeTo();
    await page.getByRole('button', { name: 'Process sale' }).click();
    const next = scanLog(page).first();
    await next.filter({ hasText: /^Sold Sale SALE-/ }).waitFor();
    const nextSale = await b.t.db('sales').where({ processed_by: user.id }).whereNot({ id: sale.id }).first();
    // 32 x 12.00 + 20% VAT; the first sale, no longer the last, was the oldest entry
    expect(await next.textContent()).toBe(`Sold Sale ${nextSale.sale_id} £460.80 processed`);
    expect(await saleLine.count()).toBe(0);
    expect(await scanLog(page).count()).toBe(30);

    await next.getByRole('link', { name: `Sale ${nextSale.sale_id} £460.80 processed` }).click();
    await page.getByRole('heading', { level: 1, name: `Sale ${nextSale.sale_id}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/sales/${nextSale.id}`);
  });

  it('200 a scan with the focus in Charge code adds the item and leaves the code as it was; people typing there are not affected', async () => {
    const wipes = await buildStockedItem(b.t.db, 10, { name: 'Cleaning wipes', sku: `CON-WIPE-${Date.now()}` });
    const gloves = await buildStockedItem(b.t.db, 10, { name: 'Nitrile gloves' });
    const code = await buildChargeCode(b.t.db);
    const { page, user } = await openCounter();
    const chargeCode = page.getByLabel('Charge code', { exact: true });
    await chargeCode.focus();
    await typeAsPerson(page, code.code);
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Charge code ${code.code} accepted` })
      .waitFor();
    expect(await isFocused(chargeCode)).toBe(true);

    await scanBurst(page, wipes.sku);
    await basketRows(page).filter({ hasText: wipes.name }).waitFor();
    expect(await chargeCode.inputValue()).toBe(code.code);
    expect(await isFocused(chargeCode)).toBe(true);
    expect((await draftsOf(user.id).first()).charge_code).toBe(code.code);
    expect(await chargeCode.inputValue()).toBe(code.code);

    // a person typing in the notes, then a scan there, then a quantity typed by hand
    await page.getByLabel('Customer notes').focus();
    await typeAsPerson(page, 'For lab 3');
    await page.keyboard.press('Enter');
    await typeAsPerson(page, 'bench 2');
    await scanBurst(page, gloves.sku);
    await basketRows(page).filter({ hasText: gloves.name }).waitFor();
    expect(await page.getByLabel('Customer notes').inputValue()).toBe('For lab 3\nbench 2');
    await page.getByLabel(`Quantity of ${gloves.name}`).focus();
    await page.keyboard.press('Control+A');
    await typeAsPerson(page, '12');
    await page.keyboard.press('Enter');
    await expect
      .poll(() =>
        b.t
          .db('quote_items')
          .where({ item_id: gloves.id })
          .first('quantity')
          .then((row) => row?.quantity),
      )
      .toBe('12.00');
    expect(await page.getByLabel(`Quantity of ${wipes.name}`).inputValue()).toBe('1');
    expect((await draftsOf(user.id).first()).charge_code).toBe(code.code);
  });

  it('422 keeps every refused scan of a fast run in the scan log, newest first, marked refused', async () => {
    b.expectHttpErrors(422);
    const tape = await buildStockedItem(b.t.db, 10, { name: 'Parcel tape' });
    const { page } = await openCounter();
    await scanBurst(page, 'NOPE-0001');
    await scanBurst(page, 'NOPE-0002');
    await scanBurst(page, tape.sku);
    await basketRows(page).filter({ hasText: tape.name }).waitFor();
    await expect.poll(() => scanLog(page).count()).toBe(3);
    const entries = await scanLog(page).allTextContents();
    expect(entries[0]).toContain(tape.sku);
    expect(entries[0]).toContain('Parcel tape');
    expect(entries[1]).toMatch(/Refused.*NOPE-0002.*No item with code 'NOPE-0002'/s);
    expect(entries[2]).toMatch(/Refused.*NOPE-0001.*No item with code 'NOPE-0001'/s);
    expect(await page.getByLabel('Scan or type SKU').inputValue()).toBe('');
    await expectAccessible(page);
    await screenshot(page, 'counter-scan-log');
  });

  it('400 processing on a code on hold says it is on hold, with the reason; the last sale panel went with the new basket', async () => {
    b.expectHttpErrors(422, 400);
    const pens = await buildStockedItem(b.t.db, 10, { name: 'Ballpoint pens' });
    const code = await buildChargeCode(b.t.db);
    const held = await buildChargeCode(b.t.db, { onHold: true, holdReason: 'Budget frozen by finance' });
    const { page, user } = await openCounter();
    await scan(page, pens.sku);
    await page.getByLabel('Charge code', { exact: true }).fill(code.code);
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Charge code ${code.code} accepted` })
      .waitFor();
    await page.getByRole('button', { name: 'Process sale' }).click();
    const lastSale = page.getByRole('heading', { name: /^Sale SALE-\d{8}-\d+ processed$/ });
    await lastSale.waitFor();

    await page.getByLabel('Scan or type SKU').focus();
    await scan(page, pens.sku);
    await basketRows(page).filter({ hasText: pens.name }).waitFor();
    await lastSale.waitFor({ state: 'detached' });
    // the scan log outlives the counter Process sale replaced, and holds the sale
    await expect.poll(() => scanLog(page).count()).toBe(3);
    const holdMessage = `Charge code '${held.code}' is on hold: Budget frozen by finance`;
    await page.getByLabel('Charge code', { exact: true }).fill(held.code);
    await page.keyboard.press('Enter');
    await page.locator('#charge-code-error').filter({ hasText: holdMessage }).waitFor();
    await page.getByRole('button', { name: 'Process sale' }).click();
    await page.locator('#alerts').filter({ hasText: holdMessage }).waitFor();
    expect(await page.getByText('missing a charge code').count()).toBe(0);
    expect(await lastSale.count()).toBe(0);
    expect(await b.t.db('sales').where({ processed_by: user.id })).toHaveLength(1);
    expect(await stockOf(b.t.db, pens.id)).toBe('9.00');

    // a reload keeps the refusal beside the code, not an "accepted"
    await page.reload();
    await page.locator('#charge-code-error').filter({ hasText: holdMessage }).waitFor();
    expect(await page.getByText(`Charge code ${held.code} accepted`).count()).toBe(0);
  });

  it("200 the tab order is docs/workflows.md's: scan box, Add, Scan with camera, Charge code, VAT applied, Customer notes, Process sale, Clear, the basket", async () => {
    const pens = await buildStockedItem(b.t.db, 10, { name: 'Ballpoint pens' });
    const { page } = await openCounter();
    await scan(page, pens.sku);
    await basketRows(page).filter({ hasText: pens.name }).waitFor();
    const focused: string[] = [];
    for (let presses = 0; presses < 9; presses += 1) {
      await page.keyboard.press('Tab');
      focused.push(
        (await page.evaluate(
          'document.activeElement.labels?.[0]?.textContent.trim() || document.activeElement.textContent.trim()',
        )) as string,
      );
    }
    expect(focused).toEqual([
      'Add',
      // shown where the browser can use a camera (a secure origin with getUserMedia, as here)
      'Scan with camera',
      'Charge code',
      'VAT applied',
      'Customer notes',
      'Process sale',
      'Clear',
      `Quantity of ${pens.name}`,
      'Remove',
    ]);
  });

  it('200 on a 390 x 844 phone, after six scans, Process sale is on the screen in the checkout bar with the total, and sells', async () => {
    const category = await buildCategory(b.t.db);
    const items = await Promise.all(
      Array.from({ length: 6 }, (_, n) =>
        buildStockedItem(b.t.db, 50, { name: `Phone scan item ${n + 1}`, price: '2.50', categoryId: category.id }),
      ),
    );
    const code = await buildChargeCode(b.t.db);
    const { page, user } = await openCounter();
    await page.setViewportSize(PHONE);
    await page.getByLabel('Charge code', { exact: true }).fill(code.code);
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Charge code ${code.code} accepted` })
      .waitFor();
    await page.getByLabel('Scan or type SKU').focus();
    await page.evaluate('window.scrollTo(0, 0)');

    for (const item of items) await scanBurst(page, item.sku);
    await expect.poll(() => basketRows(page).count()).toBe(6);
    const processSale = page.getByRole('button', { name: 'Process sale' });
    // on the screen as the page stands, and nothing lies over it
    const box = (await processSale.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(844);
    expect(
      await processSale.evaluate((button) => {
        const { x, y, width, height } = button.getBoundingClientRect();
        return button.contains(button.ownerDocument.elementFromPoint(x + width / 2, y + height / 2));
      }),
    ).toBe(true);
    // the total beside it, in the bar: 6 x £2.50 with VAT at the items' rate
    const total = page.locator('#basket .totals .grand');
    const totalBox = (await total.boundingBox())!;
    expect(totalBox.y + totalBox.height).toBeLessThanOrEqual(844);
    expect(await total.textContent()).toMatch(/Total\s*£\d+\.\d\d/);
    expect(await page.evaluate('window.scrollY')).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'counter-phone-checkout-bar', [PHONE], { fullPage: false });

    await processSale.click();
    // the sale's number on the page is the one recorded, with all six lines
    const saleNumber = (await page
      .getByText(/SALE-\d{8}-\d+/)
      .first()
      .textContent())!.match(/SALE-\d{8}-\d+/)![0];
    const sale = await b.t.db('sales').where({ sale_id: saleNumber }).first();
    expect(sale).toMatchObject({ charge_code: code.code, processed_by: user.id });
    expect(await b.t.db('sale_items').where({ sale_id: sale.id }).count({ n: '*' })).toEqual([{ n: 6 }]);
  });

  it('200 at 390 px the basket comes first and fits without sideways scrolling', async () => {
    const category = await buildCategory(b.t.db);
    const long = await buildStockedItem(b.t.db, 500, {
      name: 'Borosilicate glass volumetric flask, class A, 250 ml',
      sku: 'GLS-VF-250-A-BORO',
      price: '1234.56',
      vatRate: '0.2',
      categoryId: category.id,
    });
    const tips = await buildStockedItem(b.t.db, 500, {
      name: 'Pipette tips 200 µl',
      price: '12.00',
      vatRate: '0.2',
      categoryId: category.id,
    });
    const { page } = await openCounter();
    await page.setViewportSize({ width: 390, height: 844 });
    await scan(page, long.sku);
    await scan(page, tips.sku);
    await basketRows(page).nth(1).waitFor();
    await page.getByLabel(`Quantity of ${long.name}`).fill('125.5');
    await page.keyboard.press('Tab');
    await expect.poll(() => totals(page)).toMatch(/Total\s*£[\d,]+\.\d\d/);
    const fits = (selector: string) => page.locator(selector).evaluate((el) => el.scrollWidth <= el.clientWidth);
    expect(await fits('html')).toBe(true);
    expect(await fits('#basket')).toBe(true);
    expect(await fits('#basket table')).toBe(true);
    expect(await fits('#basket .table-wrap')).toBe(true);
    // a region being swapped in by htmx has no box for a moment: its box is read again until it has one
    const basketAboveCheckout = async () => {
      const basketBox = await page.getByRole('region', { name: /^Basket/ }).boundingBox();
      const checkoutBox = await page.getByRole('region', { name: 'Checkout' }).boundingBox();
      return basketBox && checkoutBox ? basketBox.y + basketBox.height <= checkoutBox.y : null;
    };
    await expect.poll(basketAboveCheckout).toBe(true);
    await expectAccessible(page);
    await page.screenshot({ path: 'test-screenshots/counter-390x844.png', fullPage: true });
  });
});
