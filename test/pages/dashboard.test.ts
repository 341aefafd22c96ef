import { describe, expect, it } from 'vitest';
import { buildCategory, buildItem, buildUser } from '../helpers/factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';

const b = useBrowserApp();

describe('GET /', () => {
  it('200 shows the stats, the alerts, the low-stock list and both charts', async () => {
    const user = await buildUser(b.t.db);
    const category = await buildCategory(b.t.db, { name: 'Glassware' });
    const beaker = await buildStockedItem(b.t.db, 40, {
      name: 'Beaker 250 ml',
      categoryId: category.id,
      price: '3.50',
      minimumStock: 5,
    });
    const flask = await buildItem(b.t.db, {
      name: 'Flask 1 l',
      sku: 'FLASK-1L',
      categoryId: category.id,
      price: '12.00',
      currentStock: 0,
      minimumStock: 2,
    });
    const { code } = await buildChargeCode(b.t.db);
    const agent = await b.t.loginAs(user);
    await agent
      .post('/api/sales')
      .send({ chargeCode: code, items: [{ itemId: beaker.id, quantity: 4 }], vatApplied: false })
      .expect(201);

    const page = await b.newPage();
    await b.signIn(page, user);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Dashboard');

    const stats = await page.locator('.stats').textContent();
    expect(stats).toMatch(/Active items\s*2/);
    expect(stats).toMatch(/Low on stock\s*1/);
    // 36 beakers at £3.50 are left; the empty flask is worth nothing
    expect(stats).toContain('£126.00');
    // no stocktake posted yet: no accuracy, and both active items are due for a count (issue 31)
    expect(stats).toMatch(/Stock accuracy, last 90 days\s*No counts/);
    expect(stats).toMatch(/Due for a count\s*2\s*not counted in 90 days/);

    const alerts = await page.getByRole('region', { name: 'System alerts' }).textContent();
    expect(alerts).toContain('1 item is out of stock');

    const lowStock = page.getByRole('region', { name: 'Low stock' });
    await lowStock.getByRole('link', { name: 'Flask 1 l' }).click();
    await page.waitForURL(`**/items/${flask.id}`);
    // the header marks the area the item page belongs to
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'Items' }).getAttribute('aria-current')).toBe('true');
    expect(await nav.getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current')).toBeNull();
    await page.goBack();
    expect(await nav.getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current')).toBe('page');

    // Chart.js drew both charts (loaded as they came into view); their figures are in the tables beside them too
    for (const name of [
      'Sales per day over the last 30 days: number of sales and their value',
      'Stock value by category',
    ]) {
      const canvas = page.getByRole('img', { name });
      expect((await canvas.boundingBox())!.height).toBeGreaterThan(100);
      await expect
        .poll(() => canvas.evaluate((el) => (el as unknown as { toDataURL(): string }).toDataURL().length))
        .toBeGreaterThan(3000);
    }
    await screenshot(page, 'dashboard');
    await page.getByText('Sales per day as a table').click();
    const today = page.getByRole('row').filter({ hasText: '£14.00' });
    expect(await today.getByRole('cell').nth(1).textContent()).toBe('1');

    await expectAccessible(page);
  });

  it('302 sends a visitor without a session to sign in, then back', async () => {
    const page = await b.newPage();
    const response = await page.request.get('/', { maxRedirects: 0 });
    expect(response.status()).toBe(302);
    expect(response.headers().location).toBe('/login?next=%2F');
  });

  it('shows a single sign-on refusal on the sign-in page', async () => {
    b.expectHttpErrors(401);
    const page = await b.newPage();
    await page.goto('/?ssoError=This%20account%20is%20deactivated');
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByRole('alert').filter({ hasText: 'This account is deactivated' }).waitFor();
  });
});

describe('the backup warning', () => {
  it('warns an admin while no backup has been made, not a user; gone once one exists', async () => {
    const admin = await buildUser(b.t.db, { role: 'admin' });
    const user = await buildUser(b.t.db);
    const warning = 'No backup exists yet';

    const adminPage = await b.openAs(admin, '/');
    const alerts = adminPage.getByRole('region', { name: 'System alerts' });
    expect(await alerts.textContent()).toMatch(
      /Warning:\s*No backup exists yet: the first scheduled backup runs \d+ \w+ \d{4}, 02:00\. Make one now on the Backups page/,
    );
    await alerts.getByRole('link', { name: 'Make one now on the Backups page' }).click();
    await adminPage.waitForURL('**/backups');
    await adminPage.goBack();
    await screenshot(adminPage, 'dashboard-no-backup');
    await expectAccessible(adminPage);

    const userPage = await b.openAs(user, '/');
    expect(await userPage.locator('main').textContent()).not.toContain(warning);

    await (await b.t.loginAs(admin)).post('/api/backups').expect(201);
    await adminPage.reload();
    await adminPage.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    expect(await adminPage.locator('main').textContent()).not.toContain(warning);
  });
});
