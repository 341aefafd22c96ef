import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, markupWithoutCsrfTokens, screenshot, useBrowserApp } from '../helpers/browser';
import { buildUser, TEST_PASSWORD } from '../helpers/factories';

const b = useBrowserApp();

/** Signs in and follows the header's name to My account, as a person does. */
async function openAccount(user: UserRow, password = TEST_PASSWORD): Promise<Page> {
  const page = await b.newPage();
  await b.signIn(page, user, password);
  await page.getByRole('link', { name: `${user.first_name} ${user.last_name}` }).click();
  await page.getByRole('heading', { level: 1, name: 'My account' }).waitFor();
  return page;
}

const status = (page: Page) => page.getByRole('status').first();

describe('/account', () => {
  it("a user changes their password (the API's rules and messages) and signs in with the new one; sets the picking-list preference", async () => {
    b.expectHttpErrors(422);
    const user = await buildUser(b.t.db, { firstName: 'Cas', lastName: 'Clerk' });
    const page = await openAccount(user);
    const form = page.getByRole('region', { name: 'Change password' });

    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password').fill('a brand new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('Current password is incorrect').waitFor();

    await page.getByLabel('Current password').fill(TEST_PASSWORD);
    await page.getByLabel('New password').fill('too short');
    await page.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('must be at least 12 characters').waitFor();
    await expectAccessible(page);

    await page.getByLabel('Current password').fill(TEST_PASSWORD);
    await page.getByLabel('New password').fill('password1234');
    await page.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('is too common or easy to guess: try a phrase of several unrelated words').waitFor();
    await page.getByLabel('Current password').fill(TEST_PASSWORD);
    await page.getByLabel('New password').fill('Cas Clerk 2026!');
    await page.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('must not be or contain the email address or name of its account').waitFor();
    await screenshot(page, 'account-password-refused');

    await page.getByLabel('Current password').fill(TEST_PASSWORD);
    await page.getByLabel('New password').fill('a brand new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    expect(await status(page).textContent()).toContain('Password changed');

    // this session stays signed in; a new one needs the new password
    await page.getByRole('heading', { level: 1, name: 'My account' }).waitFor();
    await b.t.request.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(401);
    const again = await b.newPage();
    await b.signIn(again, user, 'a brand new password');
    expect(new URL(again.url()).pathname).toBe('/');

    await page.getByLabel('Show the picking list after a sale').check();
    await page.getByRole('button', { name: 'Save preference' }).click();
    expect(await status(page).textContent()).toContain('Picking list preference updated');
    expect((await b.t.db<UserRow>('users').where({ id: user.id }).first())!.show_picking_list).toBe(true);
    expect(await page.getByLabel('Show the picking list after a sale').isChecked()).toBe(true);
  });

  it('a user creates an API token, sees it once, uses it against /api, and revokes it', async () => {
    b.expectHttpErrors(422);
    const user = await buildUser(b.t.db, { firstName: 'Tia', lastName: 'Token' });
    const page = await openAccount(user);
    await page.getByText('You have no API tokens.').waitFor();

    await page.getByLabel('Expires after (days)').fill('400');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText('is required').waitFor();
    await page.getByText('must be at most 365').waitFor();

    await page.getByLabel('Token name').fill('Stock script');
    await page.getByLabel('Expires after (days)').fill('30');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByLabel('Your new token "Stock script"');
    const token = await shown.inputValue();
    expect(token).toMatch(/^sst_/);
    expect(await status(page).textContent()).toContain('API token "Stock script" created');
    // the copy button needs script, so it shows once the script has run; without clipboard access the token is selected instead
    await page.getByRole('button', { name: 'Copy token' }).click();
    await page.getByText(/^(Copied|Selected: press Ctrl\+C)/).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'account-new-token');

    await b.t.request.get('/api/auth/user').set('Authorization', `Bearer ${token}`).expect(200);

    // shown once: the page does not show it again
    await page.goto('/account');
    const row = page.getByRole('row').filter({ hasText: 'Stock script' });
    await row.waitFor();
    expect(await markupWithoutCsrfTokens(page)).not.toContain(token);
    await screenshot(page, 'account');

    await row.getByRole('button', { name: 'Revoke token Stock script' }).click();
    expect(await status(page).textContent()).toContain('API token revoked');
    await page.getByText('You have no API tokens.').waitFor();
    await b.t.request.get('/api/auth/user').set('Authorization', `Bearer ${token}`).expect(401);
  });

  it('a user sees their recent failed sign-ins: when, from where, with what, and why', async () => {
    const user = await buildUser(b.t.db, { firstName: 'Fay', lastName: 'Failed' });
    const agentString =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) SomeBrowser/120.0.0.0 Safari/537.36';
    await b.t.request
      .post('/api/auth/login')
      .set('X-Forwarded-For', '198.51.100.23')
      .set('User-Agent', agentString)
      .send({ email: user.email, password: 'not it' })
      .expect(401);
    const page = await openAccount(user);
    const section = page.getByRole('region', { name: 'Recent failed sign-ins' });
    const row = section.getByRole('row').filter({ hasText: '198.51.100.23' });
    await row.waitFor();
    expect(await row.textContent()).toContain('Wrong password');
    expect(await row.textContent()).toContain('SomeBrowser/120.0.0.0');
    await expectAccessible(page);
    await screenshot(page, 'account-failed-sign-ins');

    // an account nobody has failed to sign in to says so
    const other = await openAccount(await buildUser(b.t.db, { firstName: 'Nia', lastName: 'None' }));
    await other
      .getByRole('region', { name: 'Recent failed sign-ins' })
      .getByText('No failed sign-ins in the last 30 days.')
      .waitFor();
  });

  it('403 for a form posted without the CSRF token, and nothing changes', async () => {
    const user = await buildUser(b.t.db);
    const agent = await b.t.loginAs(user);
    await agent.get('/account').expect(200);
    await agent.post('/account/picking-list').type('form').send({ showPickingList: 'true' }).expect(403);
    await agent.post('/account/tokens').type('form').send({ name: 'Forged' }).expect(403);
    expect((await b.t.db<UserRow>('users').where({ id: user.id }).first())!.show_picking_list).toBe(false);
    expect(await b.t.db('api_tokens').where({ user_id: user.id }).pluck('id')).toEqual([]);
  });
});
