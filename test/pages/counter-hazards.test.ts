import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { setItemHazards } from '../helpers/sds-factories';
import { expectAccessible, PHONE, scanBurst, screenshot, useBrowserApp, VIEWPORTS } from '../helpers/browser';

/*
 * Issue 43, on the floor: the counter shows each hazardous line's GHS pictograms (named by their
 * meaning) and signal word, asks for the COSHH assessment reference when a line needs one (the
 * refusal beside the field, the basket kept), and marks a restricted substance, whose sale by a user
 * is refused with the API's message. Scans go on arriving at scanner speed throughout.
 */

const b = useBrowserApp();

const basketRows = (page: Page) => page.getByRole('region', { name: /^Basket/ }).locator('tbody tr');
const rowOf = (page: Page, sku: string) => basketRows(page).filter({ has: page.locator('.sku', { hasText: sku }) });
const scrollsSideways = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth');

/** A person at the keyboard: a key every 90 ms or so (as test/pages/counter.test.ts types). */
const typeAsPerson = (page: Page, text: string) => page.keyboard.type(text, { delay: 90 });

/** Scans `code` as a wedge scanner does and waits for the counter's answer. */
async function scan(page: Page, code: string) {
  const answered = page.waitForResponse((res) => new URL(res.url()).pathname === '/counter/add');
  await scanBurst(page, code);
  await answered;
}

async function chooseChargeCode(page: Page, code: string) {
  const field = page.getByLabel('Charge code');
  await field.fill(code);
  await field.press('Enter');
  await page
    .getByRole('status')
    .filter({ hasText: `Charge code ${code} accepted` })
    .waitFor();
}

describe('the counter: hazardous lines and the COSHH assessment reference', () => {
  it('shows the pictograms and signal word of a scanned item; asks for the COSHH reference, refuses without it beside the field, sells with it', async () => {
    // a refused form answers 422 (src/pages/forms.ts attempt), the API 400
    b.expectHttpErrors(422);
    const stamp = Date.now();
    const acid = await buildStockedItem(b.t.db, 10, { name: 'Acetic acid glacial 2.5 L', sku: `CTR-HZ-${stamp}` });
    await setItemHazards(b.t.db, acid.id, {
      pictograms: ['GHS02', 'GHS05'],
      hStatements: ['H226', 'H314'],
      signalWord: 'Danger',
    });
    await b.t.db('items').where({ id: acid.id }).update({ coshh_required: true });
    const tips = await buildStockedItem(b.t.db, 10, { name: 'Pipette tips', sku: `CTR-TIP-${stamp}` });
    const code = await buildChargeCode(b.t.db);
    const clerk = await buildUser(b.t.db);

    const page = await b.openAs(clerk, '/counter');
    await page.setViewportSize(VIEWPORTS[0]);
    const coshh = page.getByLabel('COSHH assessment reference');
    // nothing asks for it while no line needs it
    await page.getByLabel('Scan or type SKU').focus();
    await scan(page, tips.sku);
    expect(await coshh.isVisible()).toBe(false);
    await scan(page, acid.sku);

    const acidRow = rowOf(page, acid.sku);
    await expect.poll(() => acidRow.getByRole('img').count()).toBe(2);
    await acidRow.getByRole('img', { name: 'GHS02 Flammable' }).waitFor();
    await acidRow.getByRole('img', { name: 'GHS05 Corrosive' }).waitFor();
    expect((await acidRow.locator('.signal-word').textContent())?.trim()).toBe('Danger');
    expect(await rowOf(page, tips.sku).getByRole('img').count()).toBe(0);
    expect(await coshh.isVisible()).toBe(true);

    await chooseChargeCode(page, code.code);
    const refused = page.waitForResponse((res) => new URL(res.url()).pathname === '/counter/process');
    await page.getByRole('button', { name: 'Process sale' }).click();
    const refusedAnswer = await refused;
    expect(refusedAnswer.status()).toBe(422);
    const error = page.locator('#coshh-reference-error');
    await expect
      .poll(async () => (await error.textContent())?.trim())
      .toBe(`A COSHH assessment reference is required for ${acid.sku}`);
    expect(await coshh.getAttribute('aria-invalid')).toBe('true');
    // the message is part of the field's description, and the basket is as it was
    expect(await coshh.getAttribute('aria-describedby')).toContain('coshh-reference-error');
    expect(await basketRows(page).count()).toBe(2);
    await expectAccessible(page);
    await screenshot(page, 'counter-coshh-refused', [VIEWPORTS[0], PHONE]);

    // the same at a phone's width (the proof at 390 px): the line's pictograms and signal word,
    // the field asking for the reference and its refusal are on screen, nothing to scroll sideways
    await page.setViewportSize(PHONE);
    expect(await acidRow.getByRole('img', { name: 'GHS05 Corrosive' }).isVisible()).toBe(true);
    expect(await acidRow.locator('.signal-word').isVisible()).toBe(true);
    expect(await coshh.isVisible()).toBe(true);
    expect(await error.isVisible()).toBe(true);
    expect(await scrollsSideways(page)).toBe(false);
    await expectAccessible(page);
    await page.setViewportSize(VIEWPORTS[0]);

    // typing the reference by hand, a scan at scanner speed goes to the basket and leaves the field's text alone
    await coshh.click();
    await typeAsPerson(page, 'RA-2026');
    await scan(page, tips.sku);
    await expect.poll(() => page.getByLabel(`Quantity of ${tips.name}`).inputValue()).toBe('2');
    expect(await coshh.inputValue()).toBe('RA-2026');
    await typeAsPerson(page, '-17');
    expect(await coshh.inputValue()).toBe('RA-2026-17');

    await page.getByRole('button', { name: 'Process sale' }).click();
    const heading = page.getByRole('heading', { name: /^Sale SALE-\d{8}-\d+ processed$/ });
    await heading.waitFor();
    const saleNumber = (await heading.textContent())!.match(/SALE-\d{8}-\d+/)![0];
    const manager = await b.t.loginAs(await buildUser(b.t.db, { role: 'manager' }));
    const found = await manager.get('/api/sales').query({ search: 'RA-2026-17' }).expect(200);
    const sale = found.body.sales.find((s: { saleId: string }) => s.saleId === saleNumber);
    expect(sale).toMatchObject({ saleId: saleNumber, coshhReference: 'RA-2026-17' });
    // the new basket asks for nothing
    expect(await page.getByLabel('COSHH assessment reference').isVisible()).toBe(false);
  });

  it('a phone: a restricted line is marked; a user processing it hears the 403 and keeps the basket', async () => {
    b.expectHttpErrors(403);
    const stamp = Date.now();
    const gas = await buildStockedItem(b.t.db, 5, { name: 'Hydrogen sulfide lecture bottle', sku: `CTR-RS-${stamp}` });
    await setItemHazards(b.t.db, gas.id, {
      pictograms: ['GHS02', 'GHS04', 'GHS06', 'GHS09'],
      hStatements: ['H220', 'H280', 'H330', 'H400'],
      signalWord: 'Danger',
    });
    await b.t.db('items').where({ id: gas.id }).update({ restricted: true });
    const code = await buildChargeCode(b.t.db);

    const page = await b.openAs(await buildUser(b.t.db), '/counter');
    await page.setViewportSize(PHONE);
    await page.getByLabel('Scan or type SKU').focus();
    await scan(page, gas.sku);
    const row = rowOf(page, gas.sku);
    await expect.poll(() => row.getByRole('img').count()).toBe(4);
    await row.getByRole('img', { name: 'GHS06 Acute toxicity' }).waitFor();
    expect(await row.getByText('Restricted: a manager processes this sale').isVisible()).toBe(true);
    expect(await page.getByLabel('COSHH assessment reference').isVisible()).toBe(false);
    expect(await scrollsSideways(page)).toBe(false);
    await expectAccessible(page);
    await screenshot(page, 'counter-restricted-line', [PHONE, VIEWPORTS[0]]);

    await chooseChargeCode(page, code.code);
    const refused = page.waitForResponse((res) => new URL(res.url()).pathname === '/counter/process');
    await page.getByRole('button', { name: 'Process sale' }).click();
    expect((await refused).status()).toBe(403);
    await page
      .getByRole('alert')
      .filter({ hasText: `${gas.sku} is a restricted substance: a manager must process this sale` })
      .waitFor();
    expect(await basketRows(page).count()).toBe(1);
  });
});
