import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCategory, buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { buildStockedItem, stockOf } from '../helpers/inventory-factories';
import { expectAccessible, htmxSettled, screenshot, useBrowserApp } from '../helpers/browser';
import { TestSmtp } from '../helpers/smtp';
import type { UserRow } from '../../src/modules/users/users.service';
import { requestsService } from '../../src/modules/requests/requests.service';
import { until } from '../helpers/poll';

// the service's emails go through its outbox to a real SMTP server, where the test reads them
const smtp = await TestSmtp.start();
const b = useBrowserApp({ SMTP_URL: smtp.url, OUTBOX_RETRY_BASE_MS: '100' }, { deliverOutbox: true });
afterAll(() => smtp.stop());

const itemCard = (page: Page, name: string) =>
  page.getByRole('listitem').filter({ has: page.getByRole('heading', { name }) });
const basket = (page: Page) => page.getByRole('complementary', { name: 'Your request' });
const inBasket = (page: Page, name: string) => basket(page).locator('.basket-line-name', { hasText: name });
const status = (page: Page) => page.locator('#request-status').textContent();

/** A researcher's code: they are its authorised user, a PI approves what costs more than £20. */
const grant = (requesterEmail: string, approverEmail: string) =>
  buildChargeCode(b.t.db, {
    title: 'Protein folding grant',
    authorisedEmails: [requesterEmail],
    approverEmail,
    approvalThreshold: '20.00',
  });

/**
 * The path of the request page linked by the email `to` received whose subject has `subject`, as the
 * test SMTP server received it (the link is on PUBLIC_URL; the browser opens its path here).
 */
async function emailedRequestPath(to: string, subject: RegExp): Promise<string> {
  const mails = await until(
    () => smtp.to(to).filter((mail) => subject.test(mail.subject ?? '')),
    (found) => found.length > 0,
  );
  expect(mails, `an email "${subject.source}" to ${to}`).toHaveLength(1);
  const link = /https?:\/\/[^\s/]+(\/requests\/\d+)/.exec(mails[0].text ?? '');
  expect(link, 'a link to the request in the email').not.toBeNull();
  expect(mails[0].html).toContain(link![0]);
  return link![1];
}

/** A request made through the service, as its requester (the catalogue's own test makes them through the page). */
async function requestOf(user: UserRow, chargeCode: string, items: { itemId: number; quantity: string }[]) {
  const actor = { kind: 'session' as const, userId: user.id, email: user.email, mcpKeyId: null, ip: null };
  const { request } = await requestsService(b.t.db).create({ user, actor }, { chargeCode, items });
  return `/requests/${request.id}`;
}

describe('the researchers’ door', () => {
  it('a requester requests on their code, the approver approves, staff fulfil and hand over, the requester follows it', async () => {
    const word = `Rq${Math.random().toString(36).slice(2, 8)}`;
    const category = await buildCategory(b.t.db);
    const tips = await buildStockedItem(b.t.db, 10, {
      name: `${word} pipette tips`,
      price: '12.00',
      categoryId: category.id,
    });
    const gloves = await buildStockedItem(b.t.db, 1, {
      name: `${word} nitrile gloves`,
      price: '8.50',
      categoryId: category.id,
    });
    const [requester, approver, clerk] = await Promise.all([
      buildUser(b.t.db, { role: 'requester', firstName: 'Rosalind', lastName: 'Bench' }),
      buildUser(b.t.db, { role: 'requester', firstName: 'Pat', lastName: 'Investigator' }),
      buildUser(b.t.db, { firstName: 'Sam', lastName: 'Stores' }),
    ]);
    const code = await grant(requester.email, approver.email);

    // the requester: two tips and two gloves (one more than the stores hold) on their code
    const mine = await b.openAs(requester, '/');
    await mine.getByLabel('Search the catalogue').fill(word);
    await expect.poll(() => mine.locator('#catalogue-count').textContent()).toContain(`2 items matching “${word}”`);
    await itemCard(mine, tips.name).getByLabel(`Quantity of ${tips.name}`).fill('2');
    await itemCard(mine, tips.name)
      .getByRole('button', { name: `Add to request ${tips.name}` })
      .click();
    await inBasket(mine, tips.name).waitFor();
    await itemCard(mine, gloves.name).getByLabel(`Quantity of ${gloves.name}`).fill('2');
    await itemCard(mine, gloves.name)
      .getByRole('button', { name: `Add to request ${gloves.name}` })
      .click();
    await inBasket(mine, gloves.name).waitFor();
    await htmxSettled(mine);
    await basket(mine).getByLabel('Charge code').selectOption(code.code);
    await basket(mine).getByText(`Charge code ${code.code} can be used for this request`).waitFor();
    await basket(mine).getByRole('button', { name: 'Submit request' }).click();
    await mine.waitForURL(/\/requests\/\d+$/);
    const requestPath = new URL(mine.url()).pathname;
    // £41.00 before VAT is over the code's £20.00: it waits for the approver
    expect(await status(mine)).toContain('Awaiting approval');
    expect(await mine.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await expectAccessible(mine);
    await screenshot(mine, 'request-awaiting-approval');

    // the approver opens the emailed link, signs in and approves with a comment
    const link = await emailedRequestPath(approver.email, /needs your approval/);
    expect(link).toBe(requestPath);
    const pi = await b.newPage();
    await pi.goto(link);
    await pi.waitForURL('**/login?**');
    await pi.getByLabel('Email').fill(approver.email);
    await pi.getByLabel('Password').fill('correct horse battery staple');
    await pi.getByRole('button', { name: 'Sign in' }).click();
    await pi.waitForURL(`**${requestPath}`);
    await pi.getByLabel('Comment (optional)').fill('Fine for the folding runs');
    await expectAccessible(pi);
    await screenshot(pi, 'request-approval');
    await pi.getByRole('button', { name: 'Approve' }).click();
    await pi.waitForURL(`**${requestPath}`);
    expect(await status(pi)).toContain('Approved');
    expect(await pi.getByRole('list').filter({ hasText: 'Fine for the folding runs' }).count()).toBe(1);

    // the stores: the queue of approved requests, the picking list, fulfil with the gloves they hold
    const stores = await b.openAs(clerk, '/requests?status=approved');
    const queue = stores.getByRole('region', { name: 'The request queue' });
    await queue.getByRole('link', { name: /^RQ-/ }).first().waitFor();
    await expectAccessible(stores);
    await screenshot(stores, 'requests-queue');
    await stores.getByRole('link', { name: 'Picking list of the requests to fulfil' }).click();
    await stores.getByRole('heading', { level: 1, name: 'Picking list' }).waitFor();
    expect(await stores.locator('main').textContent()).toContain(gloves.name);
    await stores.emulateMedia({ media: 'print' });
    expect(await stores.locator('.site-header').isVisible()).toBe(false);
    await screenshot(stores, 'requests-picking-list-print');
    await stores.emulateMedia({ media: 'screen' });

    await stores.goto(requestPath);
    await stores.getByLabel(`Quantity of ${gloves.name} to hand over`).fill('1');
    await screenshot(stores, 'request-fulfil');
    await stores.getByRole('button', { name: 'Fulfil' }).click();
    await stores.waitForURL(`**${requestPath}`);
    expect(await status(stores)).toContain('Ready to collect');
    expect(await stockOf(b.t.db, gloves.id)).toBe('0.00');
    expect(await stockOf(b.t.db, tips.id)).toBe('8.00');
    await stores.getByRole('link', { name: 'Open at the counter' }).waitFor();

    // the requester is told, and sees it ready
    expect(await emailedRequestPath(requester.email, /is ready to collect/)).toBe(requestPath);
    await mine.reload();
    expect(await status(mine)).toContain('Ready to collect');
    // the stores held 1 of the 2 gloves: the page says stock ran short, and what was charged beside what was asked
    expect(await mine.locator('.request-shortfall').textContent()).toContain(
      `${gloves.name}: 1 of 2 (stock ran short)`,
    );
    expect(await mine.getByRole('row', { name: /^Total asked/ }).textContent()).toContain('£49.20');
    expect(await mine.getByRole('row', { name: /^Charged/ }).textContent()).toContain('£39.00');
    expect(await mine.getByRole('button', { name: 'Cancel request' }).count()).toBe(0);
    await expectAccessible(mine);
    await screenshot(mine, 'request-charged');

    // the stores hand it over
    await stores.getByLabel('Collected by').fill('Rosalind Bench');
    await stores.getByRole('button', { name: 'Mark collected' }).click();
    await stores.waitForURL(`**${requestPath}`);
    expect(await status(stores)).toContain('Collected');

    await mine.goto('/requests');
    const row = mine.getByRole('region', { name: 'Your requests' }).getByRole('row').filter({ hasText: code.code });
    expect(await row.textContent()).toContain('Collected');
    // the sale their request made, and their code's spending so far (£32.50 and 20% VAT)
    const sale = mine
      .getByRole('region', { name: 'Sales charged to you' })
      .getByRole('row')
      .filter({ hasText: code.code });
    expect(await sale.textContent()).toContain('Rosalind Bench');
    const codeRow = mine
      .getByRole('region', { name: 'Your charge codes' })
      .getByRole('row')
      .filter({ hasText: code.code });
    expect(await codeRow.textContent()).toContain('£39.00');
    await expectAccessible(mine);
    await screenshot(mine, 'requests-mine');
  });

  it('a requester cancels their own request; another requester cannot open it', async () => {
    const category = await buildCategory(b.t.db);
    const item = await buildStockedItem(b.t.db, 10, {
      name: 'Cancel me swabs',
      price: '1.00',
      categoryId: category.id,
    });
    const [requester, stranger] = await Promise.all([
      buildUser(b.t.db, { role: 'requester' }),
      buildUser(b.t.db, { role: 'requester' }),
    ]);
    const code = await grant(requester.email, 'pi@example.ac.uk');
    const page = await b.openAs(requester, `/catalogue?search=${encodeURIComponent('Cancel me swabs')}`);
    await itemCard(page, item.name)
      .getByRole('button', { name: `Add to request ${item.name}` })
      .click();
    await inBasket(page, item.name).waitFor();
    await htmxSettled(page);
    await basket(page).getByLabel('Charge code').selectOption(code.code);
    await basket(page).getByRole('button', { name: 'Submit request' }).click();
    await page.waitForURL(/\/requests\/\d+$/);
    const requestPath = new URL(page.url()).pathname;

    b.expectHttpErrors(404);
    const other = await b.openAs(stranger, requestPath);
    await other
      .getByRole('heading', { level: 1 })
      .filter({ hasText: /not found/i })
      .waitFor();

    // Cancel request asks once (the one data-confirm listener, public/js/app.js): declined, the request stays open
    const asked: string[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void (asked.length === 1 ? dialog.dismiss() : dialog.accept());
    });
    await page.getByRole('button', { name: 'Cancel request' }).click();
    await expect.poll(() => asked).toEqual([expect.stringMatching(/^Cancel request RQ-.+\?$/)]);
    expect(new URL(page.url()).pathname).toBe(requestPath);
    expect(await status(page)).not.toContain('Cancelled');
    // confirmed, it is cancelled, and it was asked once more only
    await page.getByRole('button', { name: 'Cancel request' }).click();
    await page.getByText('Request cancelled').waitFor();
    expect(await status(page)).toContain('Cancelled');
    expect(asked).toHaveLength(2);
  });

  it('the approver rejects with a comment the requester reads; a code put on hold after approval is refused at Fulfil with the hold message', async () => {
    b.expectHttpErrors(422);
    const category = await buildCategory(b.t.db);
    const item = await buildStockedItem(b.t.db, 50, {
      name: 'Centrifuge tubes',
      price: '30.00',
      categoryId: category.id,
    });
    const [requester, approver, clerk] = await Promise.all([
      buildUser(b.t.db, { role: 'requester' }),
      buildUser(b.t.db, { role: 'requester' }),
      buildUser(b.t.db),
    ]);
    const code = await grant(requester.email, approver.email);
    const rejected = await requestOf(requester, code.code, [{ itemId: item.id, quantity: '1' }]);
    const held = await requestOf(requester, code.code, [{ itemId: item.id, quantity: '2' }]);

    // the approver's requests page lists what waits for them
    const pi = await b.openAs(approver, '/requests');
    const waiting = pi.getByRole('region', { name: 'Awaiting your approval' }).getByRole('link', { name: /^RQ-/ });
    await expect.poll(() => waiting.count()).toBe(2);
    await pi.goto(rejected);
    await pi.getByLabel('Comment (optional)').fill('Use the shared stock in lab 2');
    await pi.getByRole('button', { name: 'Reject' }).click();
    await pi.getByText('Request rejected').waitFor();
    expect(await status(pi)).toContain('Rejected');
    await pi.goto(held);
    await pi.getByRole('button', { name: 'Approve' }).click();
    await pi.getByText('Request approved').waitFor();

    const mine = await b.openAs(requester, rejected);
    expect(await status(mine)).toContain('Rejected');
    expect(await mine.getByRole('region', { name: 'History' }).textContent()).toContain(
      'Use the shared stock in lab 2',
    );
    // nothing left to do on a rejected request, and the requester never approves
    expect(
      await mine
        .getByRole('button')
        .filter({ hasText: /Approve|Reject|Cancel request|Fulfil/ })
        .count(),
    ).toBe(0);

    await b.t.db('charge_codes').where({ id: code.id }).update({ on_hold: true, hold_reason: 'Grant under review' });
    const stores = await b.openAs(clerk, held);
    await stores.getByRole('button', { name: 'Fulfil' }).click();
    await stores
      .getByRole('alert')
      .filter({ hasText: `Charge code '${code.code}' is on hold: Grant under review` })
      .waitFor();
    expect(await status(stores)).toContain('Approved');
    expect(await stockOf(b.t.db, item.id)).toBe('50.00');
    await expectAccessible(stores);
  });
});
