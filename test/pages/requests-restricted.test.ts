import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCategory, buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { buildStockedItem, stockOf } from '../helpers/inventory-factories';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { TestSmtp } from '../helpers/smtp';
import type { UserRow } from '../../src/modules/users/users.service';
import { requestsService } from '../../src/modules/requests/requests.service';
import { until } from '../helpers/poll';

// Issue 43: the staff's side of a request holding a restricted substance: the managers' queue, the
// manager's approval on the request's page, and fulfilment waiting for it.
const smtp = await TestSmtp.start();
const b = useBrowserApp({ SMTP_URL: smtp.url, OUTBOX_RETRY_BASE_MS: '100' }, { deliverOutbox: true });
afterAll(() => smtp.stop());

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

const status = (page: Page) => page.locator('#request-status').textContent();
const restrictedState = (page: Page) => page.locator('#restricted-state').textContent();

const actorOf = (user: UserRow) => ({
  user,
  actor: { kind: 'session' as const, userId: user.id, email: user.email, mcpKeyId: null, ip: null },
});

/** Clean for axe at a desktop's and a phone's width, and nothing to scroll sideways on the phone. */
async function accessibleAtBothWidths(page: Page) {
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    await expectAccessible(page);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(viewport.width);
  }
  await page.setViewportSize(DESKTOP);
}

describe('restricted substances on the staff’s request pages', () => {
  it('a manager finds the request under "Restricted: to approve", approves it on its page; a user sees no button and Fulfil waits until then', async () => {
    b.expectHttpErrors(409);
    const word = `Rs${Math.random().toString(36).slice(2, 8)}`;
    const category = await buildCategory(b.t.db);
    const acid = await buildStockedItem(b.t.db, 5, {
      name: `${word} hydrofluoric acid`,
      price: '30.00',
      categoryId: category.id,
    });
    const tips = await buildStockedItem(b.t.db, 10, {
      name: `${word} pipette tips`,
      price: '2.00',
      categoryId: category.id,
    });
    await b.t.db('items').where({ id: acid.id }).update({ restricted: true });
    const [requester, manager, clerk] = await Promise.all([
      buildUser(b.t.db, { role: 'requester', firstName: 'Rosalind', lastName: 'Bench' }),
      buildUser(b.t.db, { role: 'manager', firstName: 'Margaret', lastName: 'Keeper' }),
      buildUser(b.t.db, { role: 'user', firstName: 'Sam', lastName: 'Stores' }),
    ]);
    const code = await buildChargeCode(b.t.db, { authorisedEmails: [requester.email] });
    // the requester's request, through the API's service (their basket is another page's)
    const record = await requestsService(b.t.db).create(actorOf(requester), {
      chargeCode: code.code,
      items: [
        { itemId: acid.id, quantity: '1' },
        { itemId: tips.id, quantity: '2' },
      ],
    });
    const { reference } = record.request;
    const requestPath = `/requests/${record.request.id}`;

    // the manager's queue opens on the restricted requests waiting for them (their work comes first)
    const boss = await b.openAs(manager, '/requests');
    const queue = boss.getByRole('region', { name: 'The request queue' });
    const filter = queue.getByRole('link', { name: /^Restricted: to approve/ });
    expect(await filter.getAttribute('aria-current')).toBe('page');
    const row = queue.getByRole('row').filter({ has: boss.getByRole('link', { name: reference }) });
    expect(await row.textContent()).toContain('Restricted: waits for a manager');
    await accessibleAtBothWidths(boss);
    await screenshot(boss, 'requests-restricted-queue');
    // the filter is the API's: under Submitted the request is there too, marked
    await queue.getByRole('link', { name: /^Submitted/ }).click();
    await boss.waitForURL('**/requests?status=submitted');
    expect(await queue.getByRole('row').filter({ hasText: reference }).textContent()).toContain(
      'Restricted: waits for a manager',
    );
    await queue.getByRole('link', { name: /^Restricted: to approve/ }).click();
    await boss.waitForURL('**/requests?restrictedToApprove=true');
    await queue.getByRole('link', { name: reference }).click();
    await boss.waitForURL(`**${requestPath}`);

    // the request's page: waits for a manager, its restricted line marked, the tips not
    expect(await restrictedState(boss)).toContain("Restricted substance: waits for a manager's approval");
    const lines = boss.getByRole('table', { name: `Items of request ${reference}` });
    expect(await lines.getByRole('row').filter({ hasText: acid.name }).textContent()).toContain('Restricted');
    expect(await lines.getByRole('row').filter({ hasText: tips.name }).textContent()).not.toContain('Restricted');
    await boss.getByRole('button', { name: 'Approve restricted substances' }).waitFor();
    expect(
      await boss.getByText("Fulfilment waits for a manager's approval of the restricted substances.").count(),
    ).toBe(1);
    await accessibleAtBothWidths(boss);
    await screenshot(boss, 'request-restricted-to-approve');

    // a user of the stores: no approve button; Fulfil is refused with the API's words, nothing handed out
    const stores = await b.openAs(clerk, requestPath);
    expect(await restrictedState(stores)).toContain("Restricted substance: waits for a manager's approval");
    expect(await stores.getByRole('button', { name: 'Approve restricted substances' }).count()).toBe(0);
    await stores.getByRole('button', { name: 'Fulfil' }).click();
    await stores
      .getByRole('alert')
      .filter({
        hasText: `Request ${reference} holds a restricted substance: a manager must approve it (POST /api/requests/${record.request.id}/approve-restricted) before it is fulfilled`,
      })
      .waitFor();
    expect(await stockOf(b.t.db, acid.id)).toBe('5.00');
    await accessibleAtBothWidths(stores);
    await screenshot(stores, 'request-restricted-fulfil-waits');

    // the picking list has it, marked: nobody picks what cannot be handed out yet
    await stores.goto('/requests/picking-list');
    const toPick = stores.getByRole('region', { name: new RegExp(`^${reference} `) });
    expect(await toPick.locator('.warning').textContent()).toBe(
      "Restricted substance: waits for a manager's approval. Do not pick it until then.",
    );
    const picking = toPick.getByRole('table', { name: `Picking list of ${reference}` });
    expect(await picking.getByRole('row').filter({ hasText: acid.name }).textContent()).toContain('Restricted');
    expect(await picking.getByRole('row').filter({ hasText: tips.name }).textContent()).not.toContain('Restricted');
    await accessibleAtBothWidths(stores);
    // on a phone the quantity is on the screen (the boxes to tick are the printed list's)
    await stores.setViewportSize(PHONE);
    const quantity = (await picking
      .getByRole('row')
      .filter({ hasText: acid.name })
      .getByRole('cell')
      .last()
      .boundingBox())!;
    expect(quantity.x + quantity.width).toBeLessThanOrEqual(PHONE.width);
    await stores.setViewportSize(DESKTOP);
    await screenshot(stores, 'requests-picking-list-restricted');

    // the requester reads that it waits, and has no button either
    const mine = await b.openAs(requester, requestPath);
    expect(await restrictedState(mine)).toContain("Restricted substance: waits for a manager's approval");
    expect(await mine.getByRole('button', { name: 'Approve restricted substances' }).count()).toBe(0);

    // the manager approves with a comment: the page says who and when, the requester is emailed
    await boss.getByLabel('Comment on the restricted substances (optional)').fill('Risk assessment RA-12 seen');
    await boss.getByRole('button', { name: 'Approve restricted substances' }).click();
    await boss.getByText('Restricted substances approved').first().waitFor();
    expect(await restrictedState(boss)).toContain('Restricted substance: approved by Margaret Keeper on');
    expect(await boss.getByRole('button', { name: 'Approve restricted substances' }).count()).toBe(0);
    expect(await boss.getByRole('region', { name: 'History' }).textContent()).toContain(
      'Restricted substances approved by a manager: Risk assessment RA-12 seen',
    );
    expect(await status(boss)).toContain('Submitted');
    await accessibleAtBothWidths(boss);
    await screenshot(boss, 'request-restricted-approved');
    const mails = await until(
      () => smtp.to(requester.email).filter((mail) => /restricted substances approved/.test(mail.subject ?? '')),
      (found) => found.length > 0,
    );
    expect(mails).toHaveLength(1);
    expect(mails[0].text).toContain(`A manager approved the restricted substances of your request ${reference}`);
    expect(mails[0].text).toContain(requestPath);

    // no longer in the managers' queue
    await boss.goto('/requests?restrictedToApprove=true');
    expect(await boss.getByRole('link', { name: reference }).count()).toBe(0);

    // the user now picks and fulfils it
    await stores.goto('/requests/picking-list');
    expect(await toPick.locator('.warning').count()).toBe(0);
    expect(await picking.getByRole('row').filter({ hasText: acid.name }).textContent()).toContain('Restricted');
    await stores.goto(requestPath);
    expect(await restrictedState(stores)).toContain('approved by Margaret Keeper');
    await stores.getByRole('button', { name: 'Fulfil' }).click();
    await stores.waitForURL(`**${requestPath}`);
    expect(await status(stores)).toContain('Ready to collect');
    expect(await stockOf(b.t.db, acid.id)).toBe('4.00');
  });

  it('refusals on the page in the API’s words: a user posting the approval (403), a second approval (409)', async () => {
    b.expectHttpErrors(403, 409);
    const category = await buildCategory(b.t.db);
    const item = await buildStockedItem(b.t.db, 5, { name: 'Sodium cyanide', price: '12.00', categoryId: category.id });
    await b.t.db('items').where({ id: item.id }).update({ restricted: true });
    const [requester, first, second, clerk] = await Promise.all([
      buildUser(b.t.db, { role: 'requester' }),
      buildUser(b.t.db, { role: 'manager' }),
      buildUser(b.t.db, { role: 'admin' }),
      buildUser(b.t.db, { role: 'user' }),
    ]);
    const code = await buildChargeCode(b.t.db, { authorisedEmails: [requester.email] });
    const service = requestsService(b.t.db);
    const record = await service.create(actorOf(requester), {
      chargeCode: code.code,
      items: [{ itemId: item.id, quantity: '1' }],
    });
    // a user has no button; the same form posted with their session is refused with the service's 403 words
    const stores = await b.openAs(clerk, `/requests/${record.request.id}`);
    expect(await stores.getByRole('button', { name: 'Approve restricted substances' }).count()).toBe(0);
    // (a script as text: the tests are compiled without the DOM's types)
    await stores.evaluate(`(() => {
      const form = document.createElement('form');
      form.method = 'post';
      form.action = '/requests/${record.request.id}/approve-restricted';
      form.append(document.querySelector('input[name="_csrf"]').cloneNode());
      document.body.append(form);
      form.submit();
    })()`);
    await stores
      .getByRole('alert')
      .filter({ hasText: "Only a manager or admin may approve a request's restricted substances" })
      .waitFor();
    expect(await stores.getByRole('button', { name: 'Approve restricted substances' }).count()).toBe(0);
    expect(await restrictedState(stores)).toContain("Restricted substance: waits for a manager's approval");

    const page = await b.openAs(second, `/requests/${record.request.id}`);
    await service.approveRestricted(actorOf(first), record.request.id);
    await page.getByRole('button', { name: 'Approve restricted substances' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: `The restricted substances of request ${record.request.reference} are already approved` })
      .waitFor();
    expect(await restrictedState(page)).toContain('Restricted substance: approved by');
    await expectAccessible(page);
  });
});
