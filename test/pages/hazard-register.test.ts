import { beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, PHONE, screenshot, useBrowserApp, VIEWPORTS } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { setItemHazards } from '../helpers/sds-factories';

/*
 * Issue 43: the hazard register /reports/hazards, a manager's page linked from the header's Reports
 * menu: the hazardous items holding stock with their pictograms, statements and SDS; at a desk, on a
 * phone (no sideways scrolling) and printed (no header, the table only).
 */

const b = useBrowserApp();

let manager: UserRow;
let clerk: UserRow;
beforeAll(async () => {
  manager = await buildUser(b.t.db, { role: 'manager' });
  clerk = await buildUser(b.t.db);
});

describe('the hazard register page', () => {
  it('lists the hazardous items holding stock, reads well at 1280 and 390 px and prints without the header', async () => {
    const acetone = await buildItem(b.t.db, { name: 'Acetone 2.5 L', sku: 'REG-ACE', currentStock: '3' });
    await setItemHazards(b.t.db, acetone.id, {
      pictograms: ['GHS02', 'GHS07'],
      hStatements: ['H225', 'H319'],
      signalWord: 'Danger',
    });
    const empty = await buildItem(b.t.db, { name: 'Toluene', sku: 'REG-TOL', currentStock: '0' });
    await setItemHazards(b.t.db, empty.id, { pictograms: ['GHS02'], hStatements: ['H225'] });

    const page = await b.openAs(manager, '/');
    const link = page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Hazard register', includeHidden: true });
    expect(await link.getAttribute('href')).toBe('/reports/hazards');
    await page.goto(`${b.baseUrl}/reports/hazards`);
    await page.getByRole('heading', { level: 1, name: 'Hazard register' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/reports/hazards');

    const row = page.getByRole('row').filter({ hasText: 'REG-ACE' });
    await expect(row.getByRole('img', { name: /^GHS02 / }).count()).resolves.toBe(1);
    await expect(row.getByRole('img', { name: /^GHS07 / }).count()).resolves.toBe(1);
    const text = (await row.textContent())!.replace(/\s+/g, ' ');
    expect(text).toContain('H225 Highly flammable liquid and vapour');
    expect(text).toContain('Danger');
    expect(text).toContain('Missing');
    expect(await page.getByRole('row').filter({ hasText: 'REG-TOL' }).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'hazard-register', [VIEWPORTS[0]]);

    await page.setViewportSize(PHONE);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await expectAccessible(page);
    await screenshot(page, 'hazard-register-phone', [PHONE]);

    // printed: the header and the filter form are hidden, the table stays
    await page.setViewportSize(VIEWPORTS[0]);
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('.site-header').isVisible()).toBe(false);
    expect(await page.locator('form.filters').isVisible()).toBe(false);
    expect(await row.isVisible()).toBe(true);
    // the page is laid out for A4 paper
    const pageRules = await page.evaluate(`[...document.styleSheets].flatMap((sheet) =>
      [...sheet.cssRules].filter((rule) => rule.type === CSSRule.PAGE_RULE).map((rule) => rule.cssText))`);
    expect(pageRules).toEqual([expect.stringMatching(/size: A4 landscape/i)]);
    await screenshot(page, 'hazard-register-print', [VIEWPORTS[0]]);
    await page.emulateMedia({ media: 'screen' });
  });

  it('is refused to a user, who has no link to it', async () => {
    b.expectHttpErrors(403);
    const page = await b.openAs(clerk, '/reports/hazards');
    expect(await page.getByRole('heading', { level: 1, name: 'Hazard register' }).count()).toBe(0);
    expect(
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Hazard register', includeHidden: true })
        .count(),
    ).toBe(0);
  });
});
