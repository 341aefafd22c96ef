import { describe, expect, it } from 'vitest';
import { buildUser } from '../helpers/factories';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';

const b = useBrowserApp();

describe('GET /login', () => {
  it('200 signs in with the right password and lands where the person was going', async () => {
    const user = await buildUser(b.t.db, { firstName: 'Ada', lastName: 'Lovelace' });
    const page = await b.newPage();
    await page.goto('/?from=bookmark');
    expect(new URL(page.url()).pathname).toBe('/login');
    await expectAccessible(page);
    await screenshot(page, 'sign-in');
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/' && url.search === '?from=bookmark');
    expect(await page.getByRole('banner').textContent()).toContain('Ada Lovelace');
  });

  it('401 shows one message for a wrong password, keeping the email typed', async () => {
    b.expectHttpErrors(401);
    const user = await buildUser(b.t.db);
    const page = await b.newPage();
    await page.goto('/login');
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(user.email);
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    await expectAccessible(page);
  });
});
