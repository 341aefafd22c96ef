import { describe, expect, it } from 'vitest';
import { expectAccessible, useBrowserApp } from '../helpers/browser';

// The provider is not contacted until someone starts a single sign-on, so none needs to run here.
const b = useBrowserApp({
  OIDC_ISSUER_URL: 'http://127.0.0.1:9/never-contacted',
  OIDC_CLIENT_ID: 'stores',
  OIDC_PROVIDER_NAME: 'Campus Login',
  LOCAL_AUTH: 'false',
});

describe('GET /login with single sign-on only', () => {
  it('200 offers "Sign in with <provider>" to /api/login and no password form', async () => {
    const page = await b.newPage();
    await page.goto('/login');
    const link = page.getByRole('link', { name: 'Sign in with Campus Login' });
    expect(await link.getAttribute('href')).toBe('/api/login');
    expect(await page.getByLabel('Password').count()).toBe(0);
    await expectAccessible(page);
  });
});
