import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { buildCategory, buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { expectAccessible, htmxSettled, screenshot, useBrowserApp } from '../helpers/browser';

const b = useBrowserApp();

const itemCard = (page: Page, name: string) =>
  page.getByRole('listitem').filter({ has: page.getByRole('heading', { name }) });
const basket = (page: Page) => page.getByRole('complementary', { name: 'Your request' });
const inBasket = (page: Page, name: string) => basket(page).locator('.basket-line-name', { hasText: name });

/** A catalogue of its own: a word no other test's items carry, so a search finds only these. */
async function catalogue() {
  const word = `Zq${Math.random().toString(36).slice(2, 8)}`;
  const category = await buildCategory(b.t.db, { name: `Glassware ${word}` });
  const other = await buildCategory(b.t.db, { name: `Solvents ${word}` });
  const beakers = await buildStockedItem(b.t.db, 40, {
    name: `${word} beaker 250 ml`,
    price: '3.20',
    categoryId: category.id,
    minimumStock: 5,
  });
  const flasks = await buildStockedItem(b.t.db, 2, {
    name: `${word} conical flask`,
    price: '6.75',
    categoryId: category.id,
    minimumStock: 5,
  });
  const acetone = await buildStockedItem(b.t.db, 0, {
    name: `${word} acetone 1 l`,
    price: '9.99',
    categoryId: other.id,
    minimumStock: 1,
  });
  return { word, category, other, beakers, flasks, acetone };
}

describe('GET /catalogue', () => {
  it('200 finds items as one types and by category, shows availability as words, never the count', async () => {
    const { word, category, beakers, flasks, acetone } = await catalogue();
    const requester = await buildUser(b.t.db, { role: 'requester' });
    const page = await b.openAs(requester, '/catalogue');
    await page.getByRole('heading', { level: 1, name: 'Catalogue' }).waitFor();

    await page.getByLabel('Search the catalogue').pressSequentially(word, { delay: 30 });
    await page.getByRole('heading', { name: acetone.name }).waitFor();
    await expect.poll(() => page.locator('#catalogue-count').textContent()).toContain(`3 items matching “${word}”`);
    expect(await itemCard(page, beakers.name).locator('.availability').textContent()).toBe('In stock');
    expect(await itemCard(page, flasks.name).locator('.availability').textContent()).toBe('Low');
    expect(await itemCard(page, acetone.name).locator('.availability').textContent()).toBe('Out of stock');
    expect(await itemCard(page, beakers.name).textContent()).toContain('£3.20');
    // 40 in stock: the figure is nowhere on the card
    expect(await itemCard(page, beakers.name).textContent()).not.toMatch(/\b40\b/);
    expect(new URL(page.url()).searchParams.get('search')).toBe(word);

    await page.getByLabel('Category').selectOption({ label: category.name });
    await page.getByRole('heading', { name: acetone.name }).waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: beakers.name }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'catalogue-search');

    await page.getByLabel('Search the catalogue').fill(`${word} nothing like it`);
    await page.getByText('No items match').waitFor();
  });

  it('200 keeps the basket across pages, checks the charge code as it is chosen and submits the request', async () => {
    b.expectHttpErrors(422);
    const { word, other, beakers, acetone } = await catalogue();
    const requester = await buildUser(b.t.db, { role: 'requester', firstName: 'Ada', lastName: 'Researcher' });
    const authorisedEmails = [requester.email];
    const good = await buildChargeCode(b.t.db, { title: 'Crystal growth grant', authorisedEmails });
    const held = await buildChargeCode(b.t.db, {
      title: 'Frozen grant',
      onHold: true,
      holdReason: 'Audit in progress',
      authorisedEmails,
    });
    const noSolvents = await buildChargeCode(b.t.db, {
      title: 'No solvents',
      excludedCategoryIds: [other.id],
      authorisedEmails,
    });
    const page = await b.openAs(requester, `/catalogue?search=${word}`);

    // a requester's header: the catalogue and their requests, nothing else
    const nav = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { includeHidden: true });
    expect(await nav.allTextContents()).toEqual(['Catalogue', 'Requests']);

    await itemCard(page, beakers.name).getByLabel(`Quantity of ${beakers.name}`).fill('3');
    await itemCard(page, beakers.name)
      .getByRole('button', { name: `Add to request ${beakers.name}` })
      .click();
    // a second add straight after the first: the page sends them one after the other, so neither is lost
    await itemCard(page, acetone.name)
      .getByRole('button', { name: `Add to request ${acetone.name}` })
      .click();
    await inBasket(page, acetone.name).waitFor();
    await inBasket(page, beakers.name).waitFor();
    await expect.poll(() => basket(page).locator('.basket-total').textContent()).toContain('£19.59');

    // the basket is the session's: it is there after another page
    const header = page.getByRole('navigation', { name: 'Main' });
    await header.getByRole('link', { name: 'Requests' }).click();
    await page.waitForURL('**/requests');
    await header.getByRole('link', { name: 'Catalogue' }).click();
    await inBasket(page, beakers.name).waitFor();
    expect(await basket(page).getByLabel(`Quantity of ${beakers.name} in your request`).inputValue()).toBe('3');

    const chargeCode = basket(page).getByLabel('Charge code');
    await chargeCode.selectOption(held.code);
    await basket(page).getByText(`Charge code '${held.code}' is on hold: Audit in progress`).waitFor();
    expect(await basket(page).getByLabel('Charge code').getAttribute('aria-invalid')).toBe('true');
    await htmxSettled(page);
    await basket(page).getByLabel('Charge code').selectOption(noSolvents.code);
    await basket(page).getByText(`Charge code '${noSolvents.code}' cannot be used for some items`).waitFor();
    await htmxSettled(page);
    await basket(page).getByLabel('Charge code').selectOption(good.code);
    await basket(page).getByText(`Charge code ${good.code} can be used for this request`).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'catalogue-basket');

    // the basket's line changed and removed
    await basket(page).getByLabel(`Quantity of ${beakers.name} in your request`).fill('4');
    await basket(page)
      .getByRole('button', { name: `Update ${beakers.name}` })
      .click();
    await expect.poll(() => basket(page).locator('.basket-total').textContent()).toContain('£22.79');
    await basket(page)
      .getByRole('button', { name: `Remove ${acetone.name}` })
      .click();
    await inBasket(page, acetone.name).waitFor({ state: 'detached' });

    await basket(page).getByLabel('Notes for the stores (optional)').fill('For the Tuesday practical');
    await basket(page).getByRole('button', { name: 'Submit request' }).click();
    await page.waitForURL(/\/requests\/\d+$/);
    await page.getByRole('heading', { level: 1, name: /^Request RQ-\d{8}-\d+$/ }).waitFor();
    await page.getByText(`Request RQ-`).first().waitFor();
    expect(await page.locator('.request-lines tbody').textContent()).toContain(beakers.name);
    expect(await page.locator('#request-status').textContent()).toContain('Submitted');

    // the basket is empty once the request is made, and the request is listed on the catalogue
    await page.goto('/catalogue');
    await basket(page).getByText('Nothing in it yet').waitFor();
    await page.getByRole('region', { name: 'Your recent requests' }).getByRole('link', { name: /^RQ-/ }).waitFor();
  });

  it('422 refuses a request without a charge code, beside the field, keeping the basket', async () => {
    b.expectHttpErrors(422);
    const { word, beakers } = await catalogue();
    const requester = await buildUser(b.t.db, { role: 'requester' });
    await buildChargeCode(b.t.db, { authorisedEmails: [requester.email] });
    const page = await b.openAs(requester, `/catalogue?search=${word}`);
    await itemCard(page, beakers.name)
      .getByRole('button', { name: `Add to request ${beakers.name}` })
      .click();
    await inBasket(page, beakers.name).waitFor();
    await basket(page).getByRole('button', { name: 'Submit request' }).click();
    await basket(page).getByText('Choose a charge code').last().waitFor();
    expect(await basket(page).getByLabel('Charge code').getAttribute('aria-invalid')).toBe('true');
    expect(await inBasket(page, beakers.name).count()).toBe(1);
  });

  it('200 is a requester’s home page, at a phone’s width too', async () => {
    await catalogue();
    const requester = await buildUser(b.t.db, { role: 'requester' });
    const page = await b.openAs(requester, '/');
    await page.getByRole('heading', { level: 1, name: 'Catalogue' }).waitFor();
    await page.getByRole('region', { name: 'Your recent requests' }).waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    // nothing wider than the phone's screen
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible(page);
    await screenshot(page, 'catalogue-home');
  });
});
