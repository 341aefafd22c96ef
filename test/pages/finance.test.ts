import fs from 'node:fs/promises';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { D } from '../../src/lib/money';
import { SYSTEM_ACTOR } from '../../src/modules/audit/audit.actor';
import { RefundBody } from '../../src/modules/sales/sales.schemas';
import { salesService } from '../../src/modules/sales/sales.service';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { recordedAt, refundsRecordedAt } from '../helpers/finance-factories';
import { buildChargeCode, grantPermission } from '../helpers/sales-factories';

const b = useBrowserApp();

let clerk: UserRow;
let holder: UserRow;
let admin: UserRow;

// Hand-computed fixture (VAT 20%), in June 2025 unless told:
//  s1 CHEM-FIN-1 (Chemistry) 2025-06-10: 2 x Beaker 10.00   net 20.00 VAT 4.00 gross 24.00
//  s2 PHYS-FIN-1 (Physics)   2025-06-12: 3 x Stand 5.00     net 15.00 VAT 3.00 gross 18.00
//     1 Stand refunded, recorded 2025-06-20:                 net -5.00 VAT -1.00 gross -6.00
//  s3 CHEM-FIN-1             2025-07-02: 1 x Beaker          net 10.00 VAT 2.00 gross 12.00 (after June)
// A batch up to 2025-06-30 holds s1, s2 and the refund: Chemistry 24.00, Physics 12.00, gross 36.00.
beforeAll(async () => {
  [clerk, holder, admin] = await Promise.all([
    buildUser(b.t.db, { firstName: 'Sam', lastName: 'Clerk' }),
    buildUser(b.t.db, { firstName: 'Fay', lastName: 'Finance' }),
    buildUser(b.t.db, { role: 'admin' }),
  ]);
  await grantPermission(b.t.db, holder.id, 'finance.export');
  await buildChargeCode(b.t.db, { code: 'CHEM-FIN-1', costCentre: 'Chemistry' });
  await buildChargeCode(b.t.db, { code: 'PHYS-FIN-1', costCentre: 'Physics' });
  const beaker = await buildItem(b.t.db, { name: 'Beaker', price: '10.00', vatRate: '0.2000', currentStock: 100 });
  const stand = await buildItem(b.t.db, { name: 'Stand', price: '5.00', vatRate: '0.2000', currentStock: 100 });
  const sales = salesService(b.t.db);
  const sell = async (chargeCode: string, itemId: number, quantity: string, at: string) => {
    const { sale } = await sales.create(clerk, { chargeCode, items: [{ itemId, quantity }], vatApplied: true });
    const sold = { id: sale.id, saleId: sale.sale_id };
    await recordedAt(b.t.db, sold, at);
    return sold;
  };
  await sell('CHEM-FIN-1', beaker.id, '2', '2025-06-10T10:00:00Z');
  const s2 = await sell('PHYS-FIN-1', stand.id, '3', '2025-06-12T10:00:00Z');
  await sales.refund(SYSTEM_ACTOR, s2.id, RefundBody.parse({ items: [{ itemId: stand.id, refundQty: '1' }] }));
  await refundsRecordedAt(b.t.db, s2, '2025-06-20T10:00:00Z');
  await sell('CHEM-FIN-1', beaker.id, '1', '2025-07-02T10:00:00Z');
});

const rowText = async (page: Page, scope: string, name: string) =>
  (await page.getByRole('region', { name: scope }).getByRole('row').filter({ hasText: name }).first().textContent())
    ?.replace(/\s+/g, ' ')
    .trim();

describe('GET /finance', () => {
  it('200 a finance.export holder (not an admin) finds Finance in the header, reads the recharges by period and cost centre, and downloads them', async () => {
    b.expectHttpErrors(422);
    const page = await b.openAs(holder, '/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Finance' }).click();
    await page.getByRole('heading', { level: 1, name: 'Finance' }).waitFor();

    await page.getByLabel('From', { exact: true }).fill('2025-06-01');
    await page.getByLabel('To', { exact: true }).fill('2025-06-30');
    await page.getByLabel('Cost centre').fill('Physics');
    await page.getByRole('button', { name: 'Show recharges' }).click();
    await page.waitForURL((url) => url.searchParams.get('costCentre') === 'Physics');
    // after the refund: 15.00 - 5.00 net, 18.00 - 6.00 gross, unpaid
    expect(await rowText(page, 'Recharges', 'PHYS-FIN-1')).toBe(
      'Physics PHYS-FIN-1 1 £10.00 £2.00 £12.00 £0.00 £12.00',
    );
    expect(await rowText(page, 'Recharges', 'Total')).toBe('Total 1 £10.00 £2.00 £12.00 £0.00 £12.00');
    expect(
      await page.getByRole('region', { name: 'Recharges' }).getByRole('row').filter({ hasText: 'CHEM-FIN-1' }).count(),
    ).toBe(0);
    expect(await page.getByRole('link', { name: 'Download XLSX' }).getAttribute('href')).toBe(
      '/api/finance/recharges?from=2025-06-01&to=2025-06-30&costCentre=Physics&format=xlsx',
    );
    await expectAccessible(page);
    await screenshot(page, 'finance-index');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const csv = await fs.readFile((await download.path())!, 'utf8');
    expect(csv.trim().split(/\r?\n/)).toEqual([
      'Cost centre,Charge code,Sales,Net,VAT,Gross,Paid,Unpaid',
      'Physics,PHYS-FIN-1,1,10.00,2.00,12.00,0.00,12.00',
      'Total,,1,10.00,2.00,12.00,0.00,12.00',
    ]);

    // a date typed into the address is refused beside its field, and the batches still show
    await page.goto('/finance?from=June');
    await page
      .locator('#from-error')
      .filter({ hasText: 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp' })
      .waitFor();
    expect(await page.getByLabel('From', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('heading', { name: 'Batches' }).waitFor();

    // a close cannot be previewed into the future (the API's 400, shown beside the date)
    await page.goto('/finance/batches/close?to=2999-12-31');
    await page.locator('#to-error').filter({ hasText: 'must not be in the future' }).waitFor();
    expect(await page.getByRole('button', { name: 'Close batch' }).count()).toBe(0);
  });
});

describe('POST /finance/batches', () => {
  it('303 closes the batch its preview showed; the journal sums to it; closing again says there is nothing to close (409)', async () => {
    b.expectHttpErrors(409);
    const page = await b.openAs(holder, '/finance');
    await page.getByLabel('Up to and including').fill('2025-06-30');
    await page.getByRole('button', { name: 'Preview batch' }).click();
    await page.waitForURL('**/finance/batches/close?to=2025-06-30');
    const preview = page.getByRole('region', { name: 'What the batch will hold' });
    await preview.getByText('2 sales and 1 refund adjustments, gross £36.00').waitFor();
    expect(await rowText(page, 'What the batch will hold', 'Chemistry')).toBe('Chemistry 1 0 £20.00 £4.00 £24.00');
    expect(await rowText(page, 'What the batch will hold', 'Physics')).toBe('Physics 1 1 £10.00 £2.00 £12.00');
    expect(await rowText(page, 'What the batch will hold', 'Total')).toBe('Total 2 1 £30.00 £6.00 £36.00');
    await expectAccessible(page);
    await screenshot(page, 'finance-close-preview');

    // someone else previews the same close before this one is made
    const other = await b.openAs(admin, '/finance/batches/close?to=2025-06-30');

    await page.getByRole('button', { name: 'Close batch' }).click();
    await page.waitForURL('**/finance/batches/RC-202506-1');
    await page
      .getByRole('status')
      .filter({ hasText: 'Recharge batch RC-202506-1 closed: 2 sales, 1 refund adjustments, gross 36.00' })
      .waitFor();
    const batch = await b.t.db('recharge_batches').where({ number: 'RC-202506-1' }).first();
    expect(batch).toMatchObject({
      sales_count: 2,
      refunds_count: 1,
      net_amount: '30.00',
      vat_amount: '6.00',
      gross_amount: '36.00',
      closed_by_email: holder.email,
    });
    expect(batch.recorded_before.toISOString()).toBe('2025-07-01T00:00:00.000Z');
    expect(await rowText(page, 'Entries by cost centre', 'Physics total')).toBe(
      'Physics total 1 1 £10.00 £2.00 £12.00',
    );
    expect(await rowText(page, 'Entries by cost centre', 'Batch total')).toBe('Batch total 2 1 £30.00 £6.00 £36.00');
    await expectAccessible(page);
    await screenshot(page, 'finance-batch');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download journal' }).click(),
    ]);
    // named by the period it covers (its first entry to its last day), not the day of the download
    expect(download.suggestedFilename()).toBe('journal-RC-202506-1_2025-06-10_2025-06-30.csv');
    const [header, ...rows] = parseCsv(await fs.readFile((await download.path())!), { bom: true }) as string[][];
    expect(header).toEqual([
      'Date',
      'Batch',
      'Cost centre',
      'Charge code',
      'Sale ID',
      'Description',
      'Net',
      'VAT',
      'Gross',
      'Account code',
      'Debit',
      'Credit',
    ]);
    expect(rows).toHaveLength(3);
    const sum = (column: number) => rows.reduce((total, row) => total.plus(row[column]), new D(0)).toFixed(2);
    expect([sum(6), sum(7), sum(8)]).toEqual([batch.net_amount, batch.vat_amount, batch.gross_amount]);

    // the other preview is out of date: its close is refused with the API's message, and nothing is written
    await other.getByRole('button', { name: 'Close batch' }).click();
    await other
      .locator('.alert')
      .filter({
        hasText:
          'Nothing to close: every sale and refund recorded before 2025-07-01T00:00:00.000Z is already in a batch',
      })
      .waitFor();
    await other.getByText('there is nothing to close').waitFor();
    expect(await other.getByRole('button', { name: 'Close batch' }).count()).toBe(0);
    expect(await b.t.db('recharge_batches').count('* as n')).toEqual([{ n: 1 }]);

    // the list links to the batch
    await other.getByRole('link', { name: '← Finance' }).click();
    await other.getByRole('region', { name: 'Batches' }).getByRole('link', { name: 'RC-202506-1' }).click();
    await other.getByRole('heading', { level: 1, name: 'Recharge batch RC-202506-1' }).waitFor();
  });

  it('403 for a clerk without finance.export (page and forged close), and a close without the form token', async () => {
    const clerkAgent = await b.t.loginAs(clerk);
    for (const path of ['/finance', '/finance/batches/close?to=2025-06-30', '/finance/batches/RC-202506-1']) {
      const res = await clerkAgent.get(path).expect(403);
      expect(res.text).toContain('This action requires the finance.export permission');
    }
    // the clerk's own form token (from a page they may open): the guard, not the token, refuses the close
    const token = /name="_csrf" value="([^"]+)"/.exec((await clerkAgent.get('/').expect(200)).text)![1];
    const forged = await clerkAgent
      .post('/finance/batches')
      .type('form')
      .send({ _csrf: token, to: '2025-07-31' })
      .expect(403);
    expect(forged.text).toContain('This action requires the finance.export permission');

    const holderAgent = await b.t.loginAs(holder);
    await holderAgent.post('/finance/batches').type('form').send({ to: '2025-07-31' }).expect(403);
    expect(await b.t.db('recharge_batches').where('number', 'like', 'RC-202507-%').count('* as n')).toEqual([{ n: 0 }]);
  });
});
