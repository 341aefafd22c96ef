import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, PHONE, screenshot, useBrowserApp } from '../helpers/browser';
import { buildUser, TEST_PASSWORD } from '../helpers/factories';
import { grantPermission } from '../helpers/sales-factories';

const b = useBrowserApp();

/** Every page the header can link to, and the links a person of each kind must see. */
const REQUESTERS = ['Catalogue', 'Requests'];
const EVERYONE = [
  ...REQUESTERS,
  'Dashboard',
  'Counter',
  'Items',
  'Sales',
  'Sales report',
  'Safety data sheets due',
  'Charge codes',
  'Orders',
  'Suppliers',
  'Stock movements',
  'Stocktakes',
  'Lots',
  'API',
];
const MANAGERS = [...EVERYONE, 'Replenishment', 'Notifications', 'Hazard register'];
const ADMINS = [...MANAGERS, 'Finance', 'Users', 'Settings', 'Backups', 'Archives', 'Audit', 'Outbox', 'Webhooks'];

let requester: UserRow;
let clerk: UserRow;
let financeClerk: UserRow;
let manager: UserRow;
let admin: UserRow;
beforeAll(async () => {
  [requester, clerk, financeClerk, manager, admin] = await Promise.all([
    buildUser(b.t.db, { role: 'requester' }),
    buildUser(b.t.db),
    buildUser(b.t.db),
    buildUser(b.t.db, { role: 'manager' }),
    buildUser(b.t.db, { role: 'admin' }),
  ]);
  await grantPermission(b.t.db, financeClerk.id, 'finance.export');
});

/** The header's links as the page lists them (menus' links included, open or not): name -> href. */
async function headerLinks(page: Page): Promise<Map<string, string>> {
  const links = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { includeHidden: true });
  const found = new Map<string, string>();
  for (const link of await links.all())
    found.set((await link.textContent())!.trim(), (await link.getAttribute('href'))!);
  return found;
}

describe('the header', () => {
  it('shows each person exactly the pages they may open, and every one it shows opens', async () => {
    const cases = [
      { user: () => requester, expected: REQUESTERS },
      { user: () => clerk, expected: EVERYONE },
      { user: () => financeClerk, expected: [...EVERYONE, 'Finance'] },
      { user: () => manager, expected: MANAGERS },
      { user: () => admin, expected: ADMINS },
    ];
    let everyLink = new Map<string, string>();
    const seen: { user: UserRow; links: Map<string, string> }[] = [];
    for (const { user, expected } of cases) {
      const page = await b.newPage();
      await b.signIn(page, user());
      const links = await headerLinks(page);
      expect([...links.keys()].sort()).toEqual([...expected].sort());
      seen.push({ user: user(), links });
      if (links.size > everyLink.size) everyLink = links;
    }

    // what the header shows opens (200); what it hides is refused (403), so the two agree with the guards;
    // `/` is everyone's home (the brand's link): a requester's is the catalogue and their requests, not the dashboard;
    // the API reference is public (as /api/docs is), only left out of a requester's header
    for (const { user, links } of seen) {
      const agent = await b.t.loginAs(user);
      for (const [label, href] of everyLink) {
        const res = await agent.get(href);
        if (href === '/' && user === requester) {
          expect(res.status).toBe(200);
          expect(res.text).toContain('<h1>Catalogue</h1>');
          expect(res.text).not.toContain('<h1>Dashboard</h1>');
          continue;
        }
        if (href === '/docs' && user === requester) {
          expect(res.status).toBe(200);
          continue;
        }
        expect({ label, status: res.status }).toEqual({ label, status: links.has(label) ? 200 : 403 });
      }
    }
  });

  it('opens its menus from the keyboard and closes them on Escape or a click elsewhere', async () => {
    const page = await b.newPage();
    await b.signIn(page, admin);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const admins = nav.getByText('Admin', { exact: true });
    await admins.focus();
    await page.keyboard.press('Enter');
    await nav.getByRole('link', { name: 'Backups' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'navigation-admin-menu');

    await page.keyboard.press('Tab');
    await page.keyboard.press('Escape');
    await nav.getByRole('link', { name: 'Backups' }).waitFor({ state: 'hidden' });
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Admin');

    await nav.getByText('Purchasing', { exact: true }).click();
    await nav.getByRole('link', { name: 'Suppliers' }).click();
    await page.waitForURL('**/suppliers');
    // the page's area is marked in its menu, which is marked as holding it
    const purchasing = page.locator('details.nav-menu.current summary');
    expect(await purchasing.textContent()).toBe('Purchasing');
    await purchasing.click();
    expect(await nav.getByRole('link', { name: 'Suppliers' }).getAttribute('aria-current')).toBe('page');
    // a click on the page away from the open menu (which lies over the heading)
    await page.mouse.click(1200, 700);
    await nav.getByRole('link', { name: 'Suppliers' }).waitFor({ state: 'hidden' });
  });

  it('folds into one Menu on a 390 px phone: one row, its links hidden until it opens from the keyboard, then a page', async () => {
    const page = await b.newPage();
    await page.setViewportSize(PHONE);
    await b.signIn(page, manager);
    const header = page.getByRole('banner');
    const menu = header.locator('summary', { hasText: 'Menu' });
    const counter = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Counter' });
    // the brand and the Menu on one row, not the four rows of links that pushed the page down
    expect((await header.boundingBox())!.height).toBeLessThan(70);
    expect(await counter.isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(false);
    expect(await menu.getAttribute('aria-expanded')).toBeNull();
    await expectAccessible(page);

    // from the top of the page: the skip link, the brand, the Menu
    for (let presses = 0; presses < 3; presses += 1) await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Menu');
    await page.keyboard.press('Enter');
    await counter.waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'navigation-phone-menu', [PHONE]);
    // Escape closes it, the focus back on Menu; open again, Tab on to Counter and go there
    await page.keyboard.press('Tab');
    await page.keyboard.press('Escape');
    await counter.waitFor({ state: 'hidden' });
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Menu');
    await page.keyboard.press('Enter');
    for (
      let presses = 0;
      presses < 10 && !(await counter.evaluate((a) => a === a.ownerDocument.activeElement));
      presses += 1
    )
      await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/counter');
    await page.getByRole('heading', { level: 1, name: 'Counter' }).waitFor();
    // the Menu folds again on the new page
    expect(await counter.isVisible()).toBe(false);
  });

  it('opens the phone Menu and reaches a page without JavaScript', async () => {
    const browser = (await b.newPage()).context().browser()!;
    const context = await browser.newContext({ baseURL: b.baseUrl, viewport: PHONE, javaScriptEnabled: false });
    try {
      const signedIn = await context.request.post('/api/auth/login', {
        data: { email: manager.email, password: TEST_PASSWORD },
      });
      expect(signedIn.status()).toBe(200);
      const page = await context.newPage();
      await page.goto('/');
      const counter = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Counter' });
      expect(await counter.isVisible()).toBe(false);
      await page.getByRole('banner').locator('summary', { hasText: 'Menu' }).click();
      await counter.click();
      await page.waitForURL('**/counter');
    } finally {
      await context.close();
    }
  });

  it('shows the links as a bar from 600 px, with no Menu', async () => {
    const page = await b.newPage();
    await page.setViewportSize({ width: 600, height: 800 });
    await b.signIn(page, manager);
    expect(await page.getByRole('banner').locator('summary', { hasText: 'Menu' }).isVisible()).toBe(false);
    expect(
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Counter' }).isVisible(),
    ).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
  });

  it('links the signed-in name to My account', async () => {
    const page = await b.newPage();
    await b.signIn(page, clerk);
    await page.getByRole('link', { name: new RegExp(`^${clerk.first_name} ${clerk.last_name}`) }).click();
    await page.waitForURL('**/account');
    expect(
      await page
        .getByRole('link', { name: new RegExp(`^${clerk.first_name} ${clerk.last_name}`) })
        .getAttribute('aria-current'),
    ).toBe('page');
  });
});
