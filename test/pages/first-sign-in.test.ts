import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bootstrapAdmin } from '../../src/auth/bootstrap-admin';
import { createLogger } from '../../src/logger';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';

// Its own database: the first admin is only made where there are no users.
const b = useBrowserApp();

describe('/account/password', () => {
  it('the first admin, signed in with the generated password, is kept on Change your password until it is changed; then the file is gone', async () => {
    b.expectHttpErrors(422);
    await b.t.db('users').delete();
    await bootstrapAdmin(b.t.db, b.t.config, createLogger('silent'));
    const file = path.join(b.t.dataDir, 'initial-admin-password');
    const generated = /^password: (\S+)$/m.exec(await fs.readFile(file, 'utf8'))![1];

    const page = await b.newPage();
    await b.signIn(page, { email: 'admin@localhost' }, generated);
    await page.getByRole('heading', { level: 1, name: 'Change your password' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/account/password');
    await expectAccessible(page);
    await screenshot(page, 'first-sign-in-change-password');
    // another page leads back here
    await page.getByRole('link', { name: 'Items', exact: true }).click();
    await page.waitForURL('**/account/password');

    await page.getByLabel('Current password').fill('not the generated one');
    await page.getByLabel('New password').fill('harbour violet compass thistle');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Current password is incorrect').waitFor();
    await fs.access(file);

    await page.getByLabel('Current password').fill(generated);
    await page.getByLabel('New password').fill('harbour violet compass thistle');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'The file that held the generated one is deleted' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    await expect(fs.access(file)).rejects.toThrow();
    await page.goto('/items');
    await page.getByRole('heading', { level: 1, name: 'Items' }).waitFor();
  });
});
