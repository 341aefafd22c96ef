import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD_HASH_COST } from '../../src/config';
import { SYSTEM_ACTOR } from '../../src/modules/audit/audit.actor';
import { chargeCodesService } from '../../src/modules/chargecodes/chargecodes.service';
import { settingsService } from '../../src/modules/settings/settings.service';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, markupWithoutCsrfTokens, screenshot, useBrowserApp } from '../helpers/browser';
import { buildCategory, buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';

const b = useBrowserApp();

let clerk: UserRow;
let admin: UserRow;
beforeAll(async () => {
  [clerk, admin] = await Promise.all([
    buildUser(b.t.db, { firstName: 'Sam', lastName: 'Clerk' }),
    buildUser(b.t.db, { role: 'admin', firstName: 'Ada', lastName: 'Admin' }),
  ]);
});

async function signedIn(user: UserRow, path: string): Promise<Page> {
  const page = await b.newPage();
  await b.signIn(page, user);
  await page.goto(path);
  return page;
}

const codeRow = (code: string) => b.t.db('charge_codes').where({ code }).first();
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

describe('GET /chargecodes', () => {
  it('200 lists the codes with their hold and expiring-soon marks, and the search narrows the list', async () => {
    await buildChargeCode(b.t.db, { code: 'LIST-HELD', onHold: true, holdReason: 'Audit pending' });
    await buildChargeCode(b.t.db, { code: 'LIST-SOON', validUntil: new Date(Date.now() + 5 * 86_400_000) });
    await buildChargeCode(b.t.db, { code: 'PHYS-LAB-1', title: 'Physics teaching labs', costCentre: 'Physics' });
    const page = await signedIn(clerk, '/chargecodes');
    expect(await page.getByRole('row').filter({ hasText: 'LIST-HELD' }).textContent()).toMatch(
      /On hold\s*Audit pending/,
    );
    expect(await page.getByRole('row').filter({ hasText: 'LIST-SOON' }).textContent()).toMatch(
      /Expires within 30 days \([56] days\)/,
    );
    expect(await page.getByRole('row').filter({ hasText: 'PHYS-LAB-1' }).textContent()).toContain('Valid');
    expect(await page.getByRole('link', { name: 'New charge code' }).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'chargecodes-list');

    await page.getByLabel('Search code, title or cost centre').fill('teaching LABS');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText("1 of 3 charge codes matches 'teaching LABS'.").waitFor();
    expect(await page.getByRole('link', { name: 'PHYS-LAB-1' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'LIST-HELD' }).count()).toBe(0);
  });

  it('200 an admin creates a code with a PIN that is never shown, told first what to fix', async () => {
    b.expectHttpErrors(422);
    const page = await signedIn(admin, '/chargecodes/new');
    await page.getByLabel('Code', { exact: true }).fill('PHYS-2026/A');
    await page.getByLabel('Title').fill('Physics teaching lab');
    await page.getByLabel('Cost centre').fill('Physics');
    await page.getByLabel('Valid from').fill(day(-1));
    await page.getByLabel('Valid until').fill(day(-3));
    await page.getByLabel('PIN (optional)').fill('4321');
    await page.getByRole('button', { name: 'Create charge code' }).click();
    await page.getByText('validFrom must not be after validUntil').waitFor();
    expect(await page.getByLabel('Title').inputValue()).toBe('Physics teaching lab');
    expect(await page.getByLabel('PIN (optional)').inputValue()).toBe('');
    expect(await codeRow('PHYS-2026/A')).toBeUndefined();
    await expectAccessible(page);
    await screenshot(page, 'chargecodes-form-refused');

    await page.getByLabel('Valid until').fill(day(200));
    await page.getByLabel('PIN (optional)').fill('4321');
    await page.getByRole('button', { name: 'Create charge code' }).click();
    await page.getByRole('heading', { level: 1, name: 'Charge code PHYS-2026/A' }).waitFor();
    await page.getByRole('status').filter({ hasText: "Charge code 'PHYS-2026/A' created" }).waitFor();
    expect(page.url()).toContain('/chargecodes/PHYS-2026%2FA');
    const created = await codeRow('PHYS-2026/A');
    expect(created).toMatchObject({
      title: 'Physics teaching lab',
      cost_centre: 'Physics',
      authorised_by: admin.id,
      on_hold: false,
    });
    expect(created.pin_hash).not.toBeNull();
    expect(created.valid_from.toISOString()).toBe(`${day(-1)}T00:00:00.000Z`);
    expect(created.valid_until.toISOString()).toBe(`${day(200)}T23:59:59.999Z`);
    const details = await page.getByRole('region', { name: 'Details' }).textContent();
    expect(details).toContain('Set (never shown)');
    expect(details).toContain('Ada Admin');
    expect(await markupWithoutCsrfTokens(page)).not.toContain('4321');
  });

  it('200 an admin edits a code: its PIN and a date left as shown are kept', async () => {
    const validFrom = new Date(Date.now() - 2 * 86_400_000);
    const codes = chargeCodesService(b.t.db, { passwordHashCost: TEST_PASSWORD_HASH_COST });
    await codes.create(
      {
        code: 'EDIT-ME-1',
        title: 'Geology field trips',
        costCentre: 'Geology',
        validFrom,
        validUntil: new Date(`${day(100)}T23:59:59.999Z`),
        pin: '2468',
      },
      SYSTEM_ACTOR,
    );
    const { pin_hash: pinHash } = await codeRow('EDIT-ME-1');
    const page = await signedIn(admin, '/chargecodes/EDIT-ME-1');
    await page.getByRole('link', { name: 'Edit charge code' }).click();
    expect(await page.getByLabel('New PIN (optional)').inputValue()).toBe('');
    expect(await markupWithoutCsrfTokens(page)).not.toContain('2468');
    await screenshot(page, 'chargecodes-edit');
    await page.getByLabel('Title').fill('Geology field courses');
    await page.getByLabel('Valid until').fill(day(300));
    // issue 33: who approves requests on the code, and over what total
    await page.getByLabel("Approver's email").fill('PI.Geology@example.ac.uk');
    await page.getByLabel('Approval threshold (£)').fill('250');
    await page.getByRole('button', { name: 'Save charge code' }).click();
    await page.getByRole('status').filter({ hasText: "Charge code 'EDIT-ME-1' saved" }).waitFor();
    const details = await page.getByRole('region', { name: 'Details' }).textContent();
    expect(details).toContain('Geology field courses');
    expect(details).toContain('pi.geology@example.ac.uk');
    expect(details).toContain('Requests over £250.00');
    const edited = await codeRow('EDIT-ME-1');
    expect(edited).toMatchObject({
      title: 'Geology field courses',
      cost_centre: 'Geology',
      pin_hash: pinHash,
      approver_email: 'pi.geology@example.ac.uk',
      approval_threshold: '250.00',
    });
    // the untouched validFrom keeps its instant (not moved to midnight); the changed validUntil covers its whole day
    expect(edited.valid_from.toISOString()).toBe(validFrom.toISOString());
    expect(edited.valid_until.toISOString()).toBe(`${day(300)}T23:59:59.999Z`);
  });
});

describe('GET /chargecodes/:code', () => {
  it('200 a hold with a reason makes the counter refuse the code until the hold is released', async () => {
    b.expectHttpErrors(422);
    const code = await buildChargeCode(b.t.db, { code: 'CHEM-HOLD-1', title: 'Chemistry consumables' });
    const page = await signedIn(admin, '/chargecodes/CHEM-HOLD-1');

    await page.getByRole('button', { name: 'Put on hold' }).click();
    await page.getByText('is required when onHold is true').waitFor();
    expect((await codeRow(code.code)).on_hold).toBe(false);
    await page.getByLabel('Reason for the hold').fill('Budget frozen by Finance');
    await page.getByRole('button', { name: 'Put on hold' }).click();
    await page.getByRole('status').filter({ hasText: "Charge code 'CHEM-HOLD-1' is on hold" }).waitFor();
    expect(await codeRow(code.code)).toMatchObject({ on_hold: true, hold_reason: 'Budget frozen by Finance' });
    expect(await page.getByRole('region', { name: 'Details' }).textContent()).toContain(
      "Refused: Charge code 'CHEM-HOLD-1' is on hold: Budget frozen by Finance",
    );

    const counter = await signedIn(clerk, '/counter');
    await counter.getByLabel('Charge code').fill(code.code);
    await counter.getByLabel('Charge code').press('Enter');
    await counter
      .getByRole('alert')
      .filter({ hasText: "Charge code 'CHEM-HOLD-1' is on hold: Budget frozen by Finance" })
      .waitFor();

    // who placed the hold, at what role and when
    const hold = page.getByRole('region', { name: 'Hold' });
    expect(await hold.textContent()).toMatch(/Placed by Ada Admin \(admin\) on \d{1,2} \w{3,4} \d{4}, \d{2}:\d{2}/);

    // a release asks for its reason, told beside the field
    await page.getByRole('button', { name: 'Release hold' }).click();
    await page.getByText('is required to release a hold').waitFor();
    expect(await page.getByLabel('Reason for releasing the hold').getAttribute('aria-invalid')).toBe('true');
    expect((await codeRow(code.code)).on_hold).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'chargecodes-release-refused');
    await page.getByLabel('Reason for releasing the hold').fill('Budget restored at year end');
    await page.getByRole('button', { name: 'Release hold' }).click();
    await page.getByRole('status').filter({ hasText: "Hold on charge code 'CHEM-HOLD-1' released" }).waitFor();
    expect(await codeRow(code.code)).toMatchObject({ on_hold: false, hold_reason: null, hold_placed_by: null });

    // the trail's row of the release names who released it and why
    const audit = await signedIn(admin, '/audit?entityType=charge_code&entityId=CHEM-HOLD-1&action=release_hold');
    const row = audit.getByRole('row').filter({ hasText: 'release_hold' });
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain(admin.email);
    await row.getByText('Values').click();
    await row.getByText('"releaseReason": "Budget restored at year end"').waitFor();
    // the refused code was not kept on the basket: the reloaded field is empty, and typing it again is a change
    await counter.reload();
    await counter.getByLabel('Charge code').fill(code.code);
    await counter.getByLabel('Charge code').press('Enter');
    await counter.getByRole('status').filter({ hasText: 'Charge code CHEM-HOLD-1 accepted' }).waitFor();
  });

  it('200 an admin excludes a category and authorises a person (told what to fix first), adds a note, and removes both', async () => {
    b.expectHttpErrors(422);
    const code = await buildChargeCode(b.t.db, { code: 'CHEM-LISTS-1', title: 'Chemistry consumables' });
    const solvents = await buildCategory(b.t.db, { name: 'Solvents' });
    const page = await signedIn(admin, '/chargecodes/CHEM-LISTS-1');

    await page.getByLabel('Category to exclude').selectOption({ label: 'Solvents' });
    await page.getByRole('button', { name: 'Exclude category' }).click();
    await page.getByRole('status').filter({ hasText: 'Category excluded' }).waitFor();
    expect(await b.t.db('charge_code_exclusions').where({ charge_code_id: code.id }).pluck('category_id')).toEqual([
      solvents.id,
    ]);

    await page.getByLabel('Name', { exact: true }).fill('Dr Rosalind Franklin');
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByRole('button', { name: 'Authorise person' }).click();
    await page.getByText('must be an email address').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Dr Rosalind Franklin');
    await page.getByLabel('Email').fill('rf@example.ac.uk');
    await page.getByLabel('Department (optional)').fill('Chemistry');
    await page.getByRole('button', { name: 'Authorise person' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: "Dr Rosalind Franklin may now use charge code 'CHEM-LISTS-1'" })
      .waitFor();
    expect(
      await b.t
        .db('charge_code_authorised_users')
        .where({ charge_code_id: code.id })
        .select('user_name', 'email', 'department'),
    ).toEqual([{ user_name: 'Dr Rosalind Franklin', email: 'rf@example.ac.uk', department: 'Chemistry' }]);

    await page.getByLabel('New note').fill('Renewed every August');
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.getByRole('status').filter({ hasText: 'Note added' }).waitFor();
    expect(
      await b.t.db('notes').where({ reference_type: 'charge_code', reference_id: code.code }).pluck('text'),
    ).toEqual(['Renewed every August']);
    await expectAccessible(page);
    await screenshot(page, 'chargecodes-detail');

    await page.getByRole('button', { name: 'Remove exclusion of Solvents' }).click();
    await page.getByRole('status').filter({ hasText: 'Exclusion removed' }).waitFor();
    expect(await b.t.db('charge_code_exclusions').where({ charge_code_id: code.id })).toEqual([]);
    await page.getByRole('button', { name: 'Remove Dr Rosalind Franklin' }).click();
    await page.getByRole('status').filter({ hasText: 'Authorised person removed' }).waitFor();
    expect(await b.t.db('charge_code_authorised_users').where({ charge_code_id: code.id })).toEqual([]);
  });

  it("403 a clerk cannot release an admin's hold: the page says who may, and a forged release is refused with the same words", async () => {
    b.expectHttpErrors(403);
    const code = await buildChargeCode(b.t.db, { code: 'ADMIN-HOLD-1' });
    const codes = chargeCodesService(b.t.db);
    await codes.setHold(code.code, { onHold: true, reason: 'Finance freeze' }, { actor: SYSTEM_ACTOR, user: admin });
    const page = await signedIn(clerk, '/chargecodes/ADMIN-HOLD-1');
    const hold = page.getByRole('region', { name: 'Hold' });
    await hold.getByText('This hold was placed by an admin; only an admin can release it').waitFor();
    expect(await page.getByRole('button', { name: 'Release hold' }).count()).toBe(0);
    expect(await hold.textContent()).toContain('Placed by Ada Admin (admin)');
    await expectAccessible(page);
    await screenshot(page, 'chargecodes-hold-senior');

    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const forged = await page.request.post('/chargecodes/ADMIN-HOLD-1/hold', {
      form: { _csrf: csrf, onHold: 'false', holdReason: 'forged' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain('This hold was placed by an admin; only an admin can release it');
    expect(await codeRow(code.code)).toMatchObject({
      on_hold: true,
      hold_reason: 'Finance freeze',
      hold_placed_by_role: 'admin',
    });
  });

  it('403 below the role: a clerk sees no admin or hold buttons, and forged or tokenless posts change nothing', async () => {
    const settings = settingsService(b.t.db);
    await settings.put('chargeCodes.holdRole', { role: 'manager' }, SYSTEM_ACTOR);
    try {
      const category = await buildCategory(b.t.db);
      const code = await buildChargeCode(b.t.db, { code: 'CLERK-VIEW-1', excludedCategoryIds: [category.id] });
      await b.t
        .db('charge_code_authorised_users')
        .insert({ charge_code_id: code.id, user_name: 'Pat Person', email: 'pat@example.ac.uk', department: '' });
      const page = await signedIn(clerk, '/chargecodes/CLERK-VIEW-1');
      await page.getByRole('heading', { level: 1, name: 'Charge code CLERK-VIEW-1' }).waitFor();
      expect(await page.getByRole('cell', { name: 'pat@example.ac.uk' }).count()).toBe(1);
      for (const name of [
        'Edit charge code',
        'Put on hold',
        'Exclude category',
        `Remove exclusion of ${category.name}`,
        'Authorise person',
        'Remove Pat Person',
      ]) {
        expect(await page.getByRole('button', { name }).or(page.getByRole('link', { name })).count(), name).toBe(0);
      }
      expect(await page.getByRole('button', { name: 'Add note' }).count()).toBe(1);
      await page.getByText('Holds and exclusions are changed by the manager role and above.').waitFor();
      await expectAccessible(page);
      await screenshot(page, 'chargecodes-detail-clerk');

      // the context's own request client: the session cookie and a valid form token, no page to judge
      const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
      const hold = await page.request.post('/chargecodes/CLERK-VIEW-1/hold', {
        form: { _csrf: csrf, onHold: 'true', holdReason: 'forged' },
        maxRedirects: 0,
      });
      expect(hold.status()).toBe(403);
      const edit = await page.request.post('/chargecodes/CLERK-VIEW-1', {
        form: { _csrf: csrf, title: 'forged' },
        maxRedirects: 0,
      });
      expect(edit.status()).toBe(403);
      expect(await codeRow(code.code)).toMatchObject({ on_hold: false, title: 'Test budget' });

      const agent = await b.t.loginAs(clerk);
      await agent.get('/chargecodes/new').expect(403);
      expect((await agent.get('/chargecodes/NO-SUCH-CODE').expect(404)).text).toContain('Charge code not found');
      const adminAgent = await b.t.loginAs(admin);
      await adminAgent
        .post('/chargecodes/CLERK-VIEW-1/hold')
        .type('form')
        .send({ onHold: 'true', holdReason: 'no token' })
        .expect(403);
      expect((await codeRow(code.code)).on_hold).toBe(false);
    } finally {
      await settings.put('chargeCodes.holdRole', { role: 'user' }, SYSTEM_ACTOR);
    }
  });
});
