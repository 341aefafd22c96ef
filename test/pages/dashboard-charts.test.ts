import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { buildCategory, buildUser, TEST_PASSWORD } from '../helpers/factories';
import { sell } from '../helpers/finance-factories';
import { buildStockedItem } from '../helpers/inventory-factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { expectAccessible, PHONE, screenshot, useBrowserApp } from '../helpers/browser';

const b = useBrowserApp();

const SALES_CHART = 'Sales per day over the last 30 days: number of sales and their value';
const CHART_JS = '/assets/chart.js/chart.umd.min.js';
/** A small phone's screen, which the charts lie below. */
const SMALL_PHONE = { width: 375, height: 667 };

/** The labels Chart.js drew on an axis of the sales chart. */
const tickLabels = (page: Page, axis: 'count' | 'value') =>
  page.evaluate(
    `Chart.getChart(document.getElementById('sales-chart')).scales.${axis}.ticks.map((tick) => tick.label)`,
  ) as Promise<string[]>;

// The tests of this file run in order on one database: the first before any sale.
describe('the dashboard on a phone', () => {
  it('200 says there were no sales in the last 30 days rather than draw an axis of £0 and £1', async () => {
    expect(await b.t.db('sales').count({ n: '*' })).toEqual([{ n: 0 }]);
    const page = await b.openAs(await buildUser(b.t.db), '/');
    const sales = page.getByRole('region', { name: 'Sales, last 30 days' });
    expect(await sales.textContent()).toContain('No sales in the last 30 days');
    expect(await sales.getByRole('img').count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'dashboard-no-sales');
  });

  it('200 loads Chart.js only once a chart scrolls into view, then draws it with whole, distinct pound ticks', async () => {
    const category = await buildCategory(b.t.db, { name: 'Consumables' });
    const tips = await buildStockedItem(b.t.db, 20, { name: 'Pipette tips', price: '1.20', categoryId: category.id });
    const user = await buildUser(b.t.db);
    await sell(await b.t.loginAs(user), (await buildChargeCode(b.t.db)).code, [{ itemId: tips.id, quantity: 1 }], {
      vatApplied: false,
    });

    const page = await b.newPage();
    await page.setViewportSize(SMALL_PHONE);
    const chartJsRequests: string[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === CHART_JS) chartJsRequests.push(req.url());
    });
    const signedIn = await page.request.post('/api/auth/login', {
      data: { email: user.email, password: TEST_PASSWORD },
    });
    expect(signedIn.status()).toBe(200);
    await page.goto('/', { waitUntil: 'load' });
    // the first screen is the stats: drawn, and Chart.js not fetched
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    expect(await page.evaluate('window.scrollY')).toBe(0);
    const canvas = page.getByRole('img', { name: SALES_CHART });
    expect((await canvas.boundingBox())!.y).toBeGreaterThan(SMALL_PHONE.height);
    expect(chartJsRequests).toEqual([]);
    expect(await page.evaluate('typeof window.Chart')).toBe('undefined');

    await canvas.scrollIntoViewIfNeeded();
    await expect
      .poll(() => canvas.evaluate((el) => (el as unknown as { toDataURL(): string }).toDataURL().length))
      .toBeGreaterThan(3000);
    expect(chartJsRequests).toHaveLength(1);
    // £1.20 on one day: £0, £1, £2, not £0 £0 £0 £1 £1 £1 in steps of 20p
    const pounds = await tickLabels(page, 'value');
    expect(pounds.length).toBeGreaterThan(1);
    expect(new Set(pounds).size).toBe(pounds.length);
    for (const label of pounds) expect(label).toMatch(/^£\d+$/);
    const counts = await tickLabels(page, 'count');
    expect(new Set(counts).size).toBe(counts.length);
    await expectAccessible(page);
    await screenshot(page, 'dashboard-phone-charts', [SMALL_PHONE, PHONE]);
  });
});
