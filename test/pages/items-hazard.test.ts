import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildItem, buildUser } from '../helpers/factories';
import { expectAccessible, PHONE, screenshot, useBrowserApp, VIEWPORTS } from '../helpers/browser';

/*
 * Issue 43 on the item's page: a manager sets the hazard data in the item form (signal word,
 * pictograms, H and P statements, CAS, UN, storage), is refused an unknown statement beside its
 * field, and the item page shows the pictograms by their meaning and the statements with their
 * texts, at a desk's and a phone's width; a user sees them without the form.
 */

const b = useBrowserApp();

async function signedIn(role: 'user' | 'manager'): Promise<Page> {
  const user = await buildUser(b.t.db, { role, firstName: role === 'user' ? 'Uma' : 'Max', lastName: 'Chemist' });
  const page = await b.newPage();
  await b.signIn(page, user);
  return page;
}

const hazards = (page: Page) => page.getByRole('region', { name: 'Hazards' });

describe('the item page: hazards', () => {
  it('a manager sets the hazard data in the item form; the page shows pictograms by meaning and statements with texts', async () => {
    const item = await buildItem(b.t.db, { name: 'Ethanol absolute 2.5 L', sku: 'ETH-25' });
    const page = await signedIn('manager');
    await page.goto(`/items/${item.id}`);
    expect(await hazards(page).textContent()).toContain('No hazard data');

    await page.getByRole('link', { name: 'Edit item' }).click();
    await page.getByRole('heading', { level: 1, name: 'Edit Ethanol absolute 2.5 L' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Signal word').selectOption('Danger');
    await page.getByLabel('GHS02 Flammable').check();
    await page.getByLabel('GHS07 Harmful/irritant').check();
    await page.getByLabel('Hazard statements (H and EUH codes)').fill('H225, H319');
    await page.getByLabel('Precautionary statements (P codes)').fill('P210, P233, P303 + P361 + P353');
    await page.getByLabel('CAS number').fill('64-17-5');
    await page.getByLabel('UN number').fill('1170');
    await page.getByLabel('Storage').fill('Flammables cabinet');

    // an unknown statement: refused beside its field, with what was typed kept
    b.expectHttpErrors(422);
    await page.getByLabel('Hazard statements (H and EUH codes)').fill('H225, H999');
    await page.getByRole('button', { name: 'Save item' }).click();
    await page.locator('#hStatements-error').waitFor();
    expect(await page.locator('#hStatements-error').textContent()).toContain("Unknown hazard statement 'H999'");
    expect(await page.getByLabel('Hazard statements (H and EUH codes)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('GHS02 Flammable').isChecked()).toBe(true);
    expect(await page.getByLabel('CAS number').inputValue()).toBe('64-17-5');
    await expectAccessible(page);
    expect((await b.t.db('items').where({ id: item.id }).first()).hazardous).toBe(false);

    await page.getByLabel('Hazard statements (H and EUH codes)').fill('H225, H319');
    await page.getByRole('button', { name: 'Save item' }).click();
    await page.getByRole('status').filter({ hasText: "Item 'Ethanol absolute 2.5 L' saved" }).waitFor();
    expect(await b.t.db('items').where({ id: item.id }).first()).toMatchObject({
      hazard_signal_word: 'Danger',
      hazard_pictograms: ['GHS02', 'GHS07'],
      hazard_statements: ['H225', 'H319'],
      precautionary_statements: ['P210', 'P233', 'P303+P361+P353'],
      cas_number: '64-17-5',
      un_number: '1170',
      hazard_storage: 'Flammables cabinet',
      hazardous: true,
    });

    const region = hazards(page);
    await region.getByRole('img', { name: 'GHS02 Flammable' }).waitFor();
    await region.getByRole('img', { name: 'GHS07 Harmful/irritant' }).waitFor();
    const text = (await region.textContent())!.replace(/\s+/g, ' ');
    expect(text).toMatch(/Signal word\s*Danger/);
    expect(text).toContain('H225 Highly flammable liquid and vapour');
    expect(text).toContain('H319 Causes serious eye irritation');
    expect(text).toContain(
      'P303+P361+P353 IF ON SKIN (or hair): Take off immediately all contaminated clothing. Rinse skin with water [or shower].',
    );
    expect(text).toMatch(/CAS number\s*64-17-5/);
    expect(text).toMatch(/UN number\s*UN 1170/);
    expect(text).toMatch(/Storage\s*Flammables cabinet/);
    // the pictograms' images load (served by the stores)
    type Loaded = { complete: boolean; naturalWidth: number };
    const loaded = await region
      .locator('img')
      .evaluateAll((imgs) =>
        imgs.map((img) => (img as unknown as Loaded).complete && (img as unknown as Loaded).naturalWidth > 0),
      );
    expect(loaded).toEqual([true, true]);
    await expectAccessible(page);
    await screenshot(page, 'items-hazard-manager', [VIEWPORTS[0], PHONE]);

    // the form shows the data again as saved
    await page.getByRole('link', { name: 'Edit item' }).click();
    expect(await page.getByLabel('Precautionary statements (P codes)').inputValue()).toBe('P210, P233, P303+P361+P353');
    expect(await page.getByLabel('GHS07 Harmful/irritant').isChecked()).toBe(true);
    expect(await page.getByLabel('GHS05 Corrosive').isChecked()).toBe(false);
    await page.setViewportSize(PHONE);
    expect(await page.locator('html').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await expectAccessible(page);
  });

  it("a user sees the hazards at a phone's width, without the form", async () => {
    const item = await buildItem(b.t.db, { name: 'Hydrochloric acid 37%', sku: 'HCL-37' });
    await b.t
      .db('items')
      .where({ id: item.id })
      .update({
        hazard_signal_word: 'Danger',
        hazard_pictograms: ['GHS05', 'GHS07'],
        hazard_statements: ['H290', 'H314', 'H335'],
        precautionary_statements: ['P280', 'P305+P351+P338'],
        cas_number: '7647-01-0',
      });
    const page = await signedIn('user');
    await page.setViewportSize(PHONE);
    await page.goto(`/items/${item.id}`);
    const region = hazards(page);
    await region.getByRole('img', { name: 'GHS05 Corrosive' }).waitFor();
    expect((await region.textContent())!.replace(/\s+/g, ' ')).toContain(
      'H314 Causes severe skin burns and eye damage',
    );
    expect(await page.getByRole('link', { name: 'Edit item' }).count()).toBe(0);
    expect(await page.locator('html').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'items-hazard-user', [PHONE]);
  });
});
