import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { sdsPdf, setItemHazards } from '../helpers/sds-factories';
import { expectAccessible, htmxSettled, PHONE, screenshot, useBrowserApp, VIEWPORTS } from '../helpers/browser';

/*
 * Issue 43, on the floor: the catalogue shows each item's GHS pictograms and a link to its safety data
 * sheet; the requester's basket shows a hazardous item's SDS link and asks them to tick "I have read the
 * safety data sheet" before submitting (refused without it, beside the tick), and the COSHH assessment
 * reference when an item needs one. The tick is recorded on the request's line.
 */

const b = useBrowserApp();

const itemCard = (page: Page, name: string) =>
  page.getByRole('listitem').filter({ has: page.getByRole('heading', { name }) });
const basket = (page: Page) => page.getByRole('complementary', { name: 'Your request' });
const inBasket = (page: Page, name: string) => basket(page).locator('.basket-line-name', { hasText: name });
const scrollsSideways = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth');

async function giveSds(itemId: number, title: string) {
  const pdf = await sdsPdf(title);
  await b.t.db('safety_data_sheets').insert({
    item_id: itemId,
    revision_date: '2025-03-01',
    filename: 'sds.pdf',
    size_bytes: pdf.length,
    sha256: 'x',
    data: pdf,
  });
}

async function addToRequest(page: Page, name: string) {
  await itemCard(page, name)
    .getByRole('button', { name: `Add to request ${name}` })
    .click();
  await inBasket(page, name).waitFor();
  await htmxSettled(page);
}

describe('the catalogue and the request basket: hazards and safety data sheets', () => {
  it('shows pictograms and the SDS link; submitting refuses a hazardous line without the tick (beside it), then records it', async () => {
    b.expectHttpErrors(422);
    const word = `Hz${Math.random().toString(36).slice(2, 8)}`;
    const acid = await buildStockedItem(b.t.db, 20, { name: `${word} hydrochloric acid 37%`, sku: `CAT-HCL-${word}` });
    await setItemHazards(b.t.db, acid.id, {
      pictograms: ['GHS05', 'GHS07'],
      hStatements: ['H290', 'H314', 'H335'],
      signalWord: 'Danger',
    });
    await b.t.db('items').where({ id: acid.id }).update({ coshh_required: true });
    await giveSds(acid.id, 'Hydrochloric acid 37%');
    const beaker = await buildStockedItem(b.t.db, 20, { name: `${word} beaker 250 ml`, sku: `CAT-BKR-${word}` });
    const requester = await buildUser(b.t.db, { role: 'requester' });
    const code = await buildChargeCode(b.t.db, { authorisedEmails: [requester.email] });

    const page = await b.openAs(requester, `/catalogue?search=${word}`);
    await page.setViewportSize(VIEWPORTS[0]);
    const acidCard = itemCard(page, acid.name);
    await acidCard.getByRole('img', { name: 'GHS05 Corrosive' }).waitFor();
    await acidCard.getByRole('img', { name: 'GHS07 Harmful/irritant' }).waitFor();
    expect((await acidCard.locator('.signal-word').textContent())?.trim()).toBe('Danger');
    const sdsLink = acidCard.getByRole('link', { name: `Safety data sheet of ${acid.name} (PDF)` });
    expect(await sdsLink.getAttribute('href')).toBe(`/items/${acid.id}/sds`);
    const beakerCard = itemCard(page, beaker.name);
    expect(await beakerCard.getByRole('img').count()).toBe(0);
    expect(await beakerCard.getByRole('link', { name: /Safety data sheet/ }).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'catalogue-hazards', [VIEWPORTS[0], PHONE]);

    await addToRequest(page, acid.name);
    await addToRequest(page, beaker.name);
    const tick = basket(page).getByLabel(`I have read the safety data sheet of ${acid.name}`);
    expect(await tick.isChecked()).toBe(false);
    expect(
      await basket(page)
        .getByLabel(/I have read the safety data sheet/)
        .count(),
    ).toBe(1);
    expect(
      await basket(page)
        .getByRole('link', { name: `Safety data sheet of ${acid.name} (PDF)` })
        .getAttribute('href'),
    ).toBe(`/items/${acid.id}/sds`);
    await htmxSettled(page);
    await basket(page).getByLabel('Charge code').selectOption(code.code);
    await basket(page).getByText(`Charge code ${code.code} can be used for this request`).waitFor();

    // without the COSHH reference: said beside its field
    await basket(page).getByRole('button', { name: 'Submit request' }).click();
    await basket(page).locator('#request-coshh-reference-error').waitFor();
    expect(await basket(page).locator('#request-coshh-reference-error').textContent()).toBe(
      `A COSHH assessment reference is required for ${acid.sku}`,
    );

    // with it, but without the tick: said beside the tick, what was typed kept
    await basket(page).getByLabel('COSHH assessment reference').fill('RA-CHEM-12');
    await basket(page).getByRole('button', { name: 'Submit request' }).click();
    const tickError = basket(page).locator(`#sds-read-${acid.id}-error`);
    await tickError.waitFor();
    expect(await tickError.textContent()).toBe(
      `Confirm you have read the safety data sheet of ${acid.sku} before submitting`,
    );
    expect(await tick.getAttribute('aria-invalid')).toBe('true');
    expect(await basket(page).getByLabel('COSHH assessment reference').inputValue()).toBe('RA-CHEM-12');
    const [{ n: submitted }] = await b.t
      .db('stock_requests')
      .where({ requested_by: requester.id })
      .count<{ n: string }[]>('* as n');
    expect(Number(submitted)).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'request-sds-refused', [VIEWPORTS[0], PHONE]);

    await tick.check();
    await basket(page).getByRole('button', { name: 'Submit request' }).click();
    await page.waitForURL(/\/requests\/\d+$/);
    // the request's page marks the line whose sheet was confirmed read
    const requestLines = page.locator('.request-lines tbody tr');
    await requestLines.filter({ hasText: acid.name }).getByText('SDS read').waitFor();
    expect(await requestLines.filter({ hasText: beaker.name }).getByText('SDS read').count()).toBe(0);
    await expectAccessible(page);
    const id = Number(new URL(page.url()).pathname.split('/').pop());
    const asRequester = await b.t.loginAs(requester);
    const request = (await asRequester.get(`/api/requests/${id}`).expect(200)).body;
    expect(request.coshhReference).toBe('RA-CHEM-12');
    expect(
      request.items.map((l: { itemSku: string; sdsAcknowledged: boolean }) => [l.itemSku, l.sdsAcknowledged]),
    ).toEqual([
      [acid.sku, true],
      [beaker.sku, false],
    ]);
  });

  it('a phone: a hazardous item without a safety data sheet says so, and the ticked request is submitted', async () => {
    const word = `Hp${Math.random().toString(36).slice(2, 8)}`;
    const ethanol = await buildStockedItem(b.t.db, 20, { name: `${word} ethanol absolute`, sku: `CAT-ETH-${word}` });
    await setItemHazards(b.t.db, ethanol.id, { pictograms: ['GHS02'], hStatements: ['H225'], signalWord: 'Danger' });
    const requester = await buildUser(b.t.db, { role: 'requester' });
    const code = await buildChargeCode(b.t.db, { authorisedEmails: [requester.email] });

    const page = await b.openAs(requester, `/catalogue?search=${word}`);
    await page.setViewportSize(PHONE);
    const card = itemCard(page, ethanol.name);
    await card.getByRole('img', { name: 'GHS02 Flammable' }).waitFor();
    expect(await card.getByRole('link', { name: /Safety data sheet/ }).count()).toBe(0);
    await addToRequest(page, ethanol.name);
    await basket(page).getByText('No safety data sheet on file yet: ask the stores for it.').waitFor();
    expect(await basket(page).getByLabel('COSHH assessment reference').count()).toBe(0);
    await htmxSettled(page);
    await basket(page).getByLabel('Charge code').selectOption(code.code);
    await basket(page).getByText(`Charge code ${code.code} can be used for this request`).waitFor();
    await basket(page).getByLabel(`I have read the safety data sheet of ${ethanol.name}`).check();
    expect(await scrollsSideways(page)).toBe(false);
    await expectAccessible(page);
    await screenshot(page, 'request-sds-ticked', [PHONE]);
    await basket(page).getByRole('button', { name: 'Submit request' }).click();
    await page.waitForURL(/\/requests\/\d+$/);
    const id = Number(new URL(page.url()).pathname.split('/').pop());
    const line = await b.t.db('stock_request_items').where({ request_id: id }).first('sds_acknowledged');
    expect(line.sds_acknowledged).toBe(true);
  });
});
