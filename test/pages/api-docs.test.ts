import { describe, expect, it } from 'vitest';
import { buildUser } from '../helpers/factories';
import { screenshot, useBrowserApp } from '../helpers/browser';

const b = useBrowserApp();

describe('GET /docs', () => {
  it('shows every operation of /api/docs, readable and runnable, under the strict CSP, and is linked from the pages', async () => {
    const user = await buildUser(b.t.db);
    const page = await b.newPage();
    await b.signIn(page, user);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API' }).click();
    await page.waitForURL((url) => url.pathname === '/docs');
    await page.getByRole('heading', { name: 'API reference', level: 1 }).waitFor();

    const document = (await (await fetch(`${b.baseUrl}/api/docs`)).json()) as {
      info: { title: string };
      paths: Record<string, Record<string, { tags: string[] }>>;
    };
    await page.getByRole('heading', { name: new RegExp(document.info.title) }).waitFor();
    const tags = new Set(Object.values(document.paths).flatMap((ops) => Object.values(ops).map((op) => op.tags[0])));
    await expect.poll(() => page.locator('.opblock-tag').count()).toBe(tags.size);

    // open the Items tag: every items operation is listed; run one as the signed-in person
    await page.locator('.opblock-tag', { hasText: /^Items/ }).click();
    const itemOperations = Object.values(document.paths)
      .flatMap((ops) => Object.values(ops))
      .filter((op) => op.tags[0] === 'Items').length;
    await expect.poll(() => page.locator('.opblock').count()).toBe(itemOperations);
    const listItems = page
      .locator('.opblock-get')
      .filter({ has: page.locator('.opblock-summary-path', { hasText: /^\/api\/items$/ }) });
    await listItems.locator('.opblock-summary').click();
    await listItems.getByRole('button', { name: 'Try it out' }).click();
    await listItems.getByRole('button', { name: 'Execute' }).click();
    await expect
      .poll(() => listItems.locator('.live-responses-table tbody .response-col_status').first().textContent())
      .toContain('200');
    await screenshot(page, 'api-docs');
  });

  it('is there before signing in too, as /api/docs is', async () => {
    const page = await b.newPage();
    await page.goto('/docs');
    await page.getByRole('heading', { name: 'API reference', level: 1 }).waitFor();
    await page.locator('.opblock-tag', { hasText: /^Health/ }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/docs');
  });
});
