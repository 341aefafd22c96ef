import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildItem, buildUser, TEST_PASSWORD } from '../helpers/factories';

const b = useBrowserApp();

let admin: UserRow;
let manager: UserRow;
beforeAll(async () => {
  [admin, manager] = await Promise.all([
    buildUser(b.t.db, { role: 'admin', firstName: 'Ada', lastName: 'Admin' }),
    buildUser(b.t.db, { role: 'manager', firstName: 'Mo', lastName: 'Manager' }),
  ]);
});

/** Opens path as the user: the page sends them to sign in, then back to path. */
async function openAs(user: Pick<UserRow, 'email'>, path: string, password = TEST_PASSWORD): Promise<Page> {
  const page = await b.newPage();
  await page.goto(path);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === path);
  return page;
}

const userRow = (email: string) => b.t.db<UserRow>('users').where({ email }).first();
const status = (page: Page) => page.getByRole('status').first();

describe('/users', () => {
  it("an admin creates a user (the schema's and the API's refusals beside the form) and grants a permission in the grid", async () => {
    b.expectHttpErrors(409, 422);
    const page = await openAs(admin, '/users');
    await page.getByRole('link', { name: 'New user' }).click();
    await page.getByRole('heading', { level: 1, name: 'New user' }).waitFor();

    // the schema's messages beside the fields, what was typed kept (the password never)
    await page.getByLabel('Email').fill('not an email');
    await page.getByLabel('Password (optional)').fill('short');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByText('must be an email address').waitFor();
    await page.getByText('is required').waitFor();
    await page.getByText('must be at least 12 characters').waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe('not an email');
    expect(await page.getByLabel('Password (optional)').inputValue()).toBe('');
    await expectAccessible(page);
    await screenshot(page, 'users-new-errors');

    // a taken email is the API's 409 (emails are unique whatever their case)
    await page.getByLabel('Email').fill(manager.email.toUpperCase());
    await page.getByLabel('First name').fill('Other');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByText(`A user with email '${manager.email}' already exists`).waitFor();

    const email = 'pat.picker@example.ac.uk';
    await page.getByLabel('Email').fill('Pat.Picker@example.ac.uk');
    await page.getByLabel('First name').fill('Pat');
    await page.getByLabel('Last name').fill('Picker');
    await page.getByLabel('Role').selectOption({ label: 'Manager' });
    await page.getByLabel('Password (optional)').fill('a long new password');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('heading', { level: 1, name: 'Pat Picker' }).waitFor();
    expect(await status(page).textContent()).toContain(`User ${email} created`);
    const created = (await userRow(email))!;
    expect(created).toMatchObject({ first_name: 'Pat', last_name: 'Picker', role: 'manager', is_active: true });
    await b.t.request.post('/api/auth/login').send({ email, password: 'a long new password' }).expect(200);

    // the grid: one form per cell; admins hold every permission without one
    await page.goto('/users');
    const grid = page.getByRole('region', { name: 'Permissions' });
    expect(await grid.getByRole('row').filter({ hasText: 'Ada Admin' }).textContent()).toContain('Held as admin');
    await grid.getByRole('button', { name: 'Grant Refund sales to Pat Picker' }).click();
    expect(await status(page).textContent()).toContain('Refund sales granted to Pat Picker');
    expect(await b.t.db('user_permissions').where({ user_id: created.id }).pluck('permission')).toEqual([
      'sales.refund',
    ]);
    await expectAccessible(page);
    await screenshot(page, 'users-list');
    await grid.getByRole('button', { name: 'Revoke Refund sales from Pat Picker' }).click();
    expect(await status(page).textContent()).toContain('Refund sales revoked from Pat Picker');
    expect(await b.t.db('user_permissions').where({ user_id: created.id }).pluck('permission')).toEqual([]);
  });

  it("an admin sees a user's recent failed sign-ins on their page", async () => {
    const pat = await buildUser(b.t.db, { firstName: 'Pat', lastName: 'Probed' });
    for (const address of ['198.51.100.31', '198.51.100.32']) {
      await b.t.request
        .post('/api/auth/login')
        .set('X-Forwarded-For', address)
        .set('User-Agent', 'curl/8.5.0')
        .send({ email: pat.email, password: 'guess' })
        .expect(401);
    }
    const page = await openAs(admin, `/users/${pat.id}`);
    const section = page.getByRole('region', { name: 'Recent failed sign-ins' });
    await section.getByRole('row').filter({ hasText: '198.51.100.32' }).waitFor();
    expect(await section.getByRole('row').filter({ hasText: 'curl/8.5.0' }).count()).toBe(2);
    await expectAccessible(page);
    await screenshot(page, 'users-show-failed-sign-ins');
  });

  it('an admin changes a role, deactivates (no more signing in) and reactivates, and resets a password; their own account is protected', async () => {
    b.expectHttpErrors(422);
    const pat = await buildUser(b.t.db, { firstName: 'Pat', lastName: 'Packer' });
    const page = await openAs(admin, `/users/${pat.id}`);
    await page.getByLabel('Role', { exact: true }).selectOption({ label: 'Manager' });
    await page.getByRole('button', { name: 'Change role' }).click();
    expect(await status(page).textContent()).toContain('Role changed to Manager');
    expect((await userRow(pat.email))!.role).toBe('manager');
    await expectAccessible(page);
    await screenshot(page, 'users-show');

    await page.getByRole('button', { name: 'Deactivate Pat Packer' }).click();
    expect(await status(page).textContent()).toContain('User deactivated');
    expect((await userRow(pat.email))!.is_active).toBe(false);
    await b.t.request.post('/api/auth/login').send({ email: pat.email, password: TEST_PASSWORD }).expect(401);

    await page.getByRole('button', { name: 'Reactivate Pat Packer' }).click();
    expect(await status(page).textContent()).toContain('User reactivated');
    expect((await userRow(pat.email))!.is_active).toBe(true);
    await b.t.request.post('/api/auth/login').send({ email: pat.email, password: TEST_PASSWORD }).expect(200);

    await page.getByLabel('New password').fill('too short');
    await page.getByRole('button', { name: 'Reset password' }).click();
    await page.getByRole('region', { name: 'Reset password' }).getByText('must be at least 12 characters').waitFor();
    await page.getByLabel('New password').fill('another long password');
    await page.getByRole('button', { name: 'Reset password' }).click();
    expect(await status(page).textContent()).toContain('Password reset');
    await b.t.request.post('/api/auth/login').send({ email: pat.email, password: 'another long password' }).expect(200);

    // the API's own protections come back as its messages
    await page.goto(`/users/${admin.id}`);
    await page.getByRole('button', { name: 'Deactivate Ada Admin' }).click();
    await page.getByRole('region', { name: 'Access' }).getByText('You cannot remove your own account').waitFor();
    expect((await userRow(admin.email))!.is_active).toBe(true);
  });

  it('safe delete shows what refers to the user first, and deletes only a user who owns nothing', async () => {
    const [owner, unused] = await Promise.all([
      buildUser(b.t.db, { firstName: 'Olive', lastName: 'Owner' }),
      buildUser(b.t.db, { firstName: 'Una', lastName: 'Used' }),
    ]);
    await buildItem(b.t.db, { createdBy: owner.id });

    const page = await openAs(admin, `/users/${owner.id}`);
    await page.getByRole('link', { name: 'Delete this user…' }).click();
    await page.getByRole('heading', { level: 1, name: 'Delete Olive Owner' }).waitFor();
    await page.getByRole('listitem').filter({ hasText: 'items: 1 record(s) reference it (created_by)' }).waitFor();
    expect(await page.getByRole('button', { name: /permanently/ }).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'users-delete-refused');

    await page.goto(`/users/${unused.id}/delete`);
    await page.getByRole('button', { name: `Delete ${unused.email} permanently` }).click();
    await page.waitForURL('**/users');
    expect(await status(page).textContent()).toContain('User deleted');
    expect(await userRow(unused.email)).toBeUndefined();
    expect(await userRow(owner.email)).toBeDefined();
  });

  it('403 for a manager on GET /users and on a forged POST with a valid form token', async () => {
    const agent = await b.t.loginAs(manager);
    await agent.get('/users').expect(403);
    await agent.get(`/users/${admin.id}/delete`).expect(403);
    const account = await agent.get('/account').expect(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(account.text)![1];
    await agent.post(`/users/${manager.id}/role`).type('form').send({ _csrf: csrf, role: 'admin' }).expect(403);
    await agent
      .post(`/users/${manager.id}/permissions/sales.refund`)
      .type('form')
      .send({ _csrf: csrf, granted: 'true' })
      .expect(403);
    expect((await userRow(manager.email))!.role).toBe('manager');
    expect(await b.t.db('user_permissions').where({ user_id: manager.id }).pluck('permission')).toEqual([]);
  });
});
