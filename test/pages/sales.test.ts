import fs from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { salesService } from '../../src/modules/sales/sales.service';
import { SYSTEM_ACTOR } from '../../src/modules/audit/audit.actor';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { stockOf } from '../helpers/inventory-factories';
import { buildChargeCode, grantPermission } from '../helpers/sales-factories';

const b = useBrowserApp();

let clerk: UserRow;
let manager: UserRow;
let admin: UserRow;
let refunder: UserRow;
beforeAll(async () => {
  [clerk, manager, admin, refunder] = await Promise.all([
    buildUser(b.t.db, { firstName: 'Sam', lastName: 'Clerk' }),
    buildUser(b.t.db, { role: 'manager', firstName: 'Mo', lastName: 'Manager' }),
    buildUser(b.t.db, { role: 'admin' }),
    buildUser(b.t.db, { firstName: 'Rae', lastName: 'Refunder' }),
  ]);
  await grantPermission(b.t.db, refunder.id, 'sales.refund');
});

/** A sale of the given items (each quantity 2 unless told) on a fresh charge code, recorded by the clerk through the service. */
async function saleOf(lines: { itemId: number; quantity?: number }[], chargeCode?: string, costCentre = 'Chemistry') {
  const code = chargeCode ?? (await buildChargeCode(b.t.db, { costCentre })).code;
  const { sale } = await salesService(b.t.db).create(clerk, {
    chargeCode: code,
    items: lines.map((l) => ({ itemId: l.itemId, quantity: String(l.quantity ?? 2) })),
    vatApplied: true,
  });
  return sale;
}

const saleRow = (page: Page, saleId: string) =>
  page.getByRole('row').filter({ has: page.getByRole('link', { name: saleId, exact: true }) });

describe('GET /sales', () => {
  it('200 lists sales linking to each, and the filters narrow the list', async () => {
    const item = await buildItem(b.t.db, { name: 'Beaker', price: '4.00', currentStock: 50 });
    const chem = await buildChargeCode(b.t.db, { code: 'CHEM-LIST-1' });
    const phys = await buildChargeCode(b.t.db, { code: 'PHYS-LIST-1' });
    const chemSale = await saleOf([{ itemId: item.id }], chem.code);
    const physSale = await saleOf([{ itemId: item.id }], phys.code);
    await salesService(b.t.db).markPaid(SYSTEM_ACTOR, physSale.id);

    const page = await b.openAs(clerk, '/sales');
    await saleRow(page, chemSale.sale_id).waitFor();
    expect(await saleRow(page, physSale.sale_id).textContent()).toContain('PHYS-LIST-1');
    await expectAccessible(page);
    await screenshot(page, 'sales-list');

    // htmx swaps the list in place (the marker set on this document survives) and keeps the filter in the address
    await page.evaluate("document.body.setAttribute('data-loaded-once', 'yes')");
    await page.getByLabel('Charge code').fill('chem-list');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('chargeCode') === 'chem-list');
    await saleRow(page, physSale.sale_id).waitFor({ state: 'detached' });
    expect(await saleRow(page, chemSale.sale_id).count()).toBe(1);
    expect(await page.locator('body').getAttribute('data-loaded-once')).toBe('yes');

    // the same filter as a plain GET (no JavaScript needed), with unpaid only
    await page.goto('/sales?chargeCode=LIST-1&unpaidOnly=true');
    await saleRow(page, chemSale.sale_id).waitFor();
    expect(await saleRow(page, physSale.sale_id).count()).toBe(0);
    expect(await page.getByLabel('Unpaid only').isChecked()).toBe(true);

    await saleRow(page, chemSale.sale_id).getByRole('link').click();
    await page.waitForURL(`**/sales/${chemSale.id}`);
    await page.getByRole('heading', { level: 1, name: `Sale ${chemSale.sale_id}` }).waitFor();
  });

  it('200 Search sales finds a sale by recipient, item SKU or name, or sale number, with JavaScript and without', async () => {
    const tips = await buildItem(b.t.db, { sku: 'PIP-TIP-SRCH', name: 'Pipette tips 200 µl', currentStock: 50 });
    const beaker = await buildItem(b.t.db, { sku: 'GLS-BK-SRCH', name: 'Beaker 250 ml', currentStock: 50 });
    const code = await buildChargeCode(b.t.db, { code: 'SRCH-PAGE-1' });
    const tipsSale = await saleOf([{ itemId: tips.id }], code.code);
    const beakerSale = await saleOf([{ itemId: beaker.id }], code.code);
    await salesService(b.t.db).setRecipient(SYSTEM_ACTOR, clerk, beakerSale.id, {
      deliveredTo: 'Ada Lovelace',
      deliveredToEmail: 'ada@maths.example.ac.uk',
    });

    const page = await b.openAs(clerk, '/sales');
    await saleRow(page, tipsSale.sale_id).waitFor();
    // htmx: the list is swapped in place and the search kept in the address
    await page.getByLabel('Search sales').fill('lovelace');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('search') === 'lovelace');
    await saleRow(page, tipsSale.sale_id).waitFor({ state: 'detached' });
    expect(await saleRow(page, beakerSale.sale_id).count()).toBe(1);
    expect(await page.getByText('1 sale', { exact: true }).count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, 'sales-search');

    // a plain GET (no JavaScript needed): by part of a line's name, with a filter
    await page.goto('/sales?search=pipette&chargeCode=srch-page');
    await saleRow(page, tipsSale.sale_id).waitFor();
    expect(await saleRow(page, beakerSale.sale_id).count()).toBe(0);
    expect(await page.getByLabel('Search sales').inputValue()).toBe('pipette');
    // by SKU, and by sale number in lower case
    await page.goto('/sales?search=gls-bk-srch');
    await saleRow(page, beakerSale.sale_id).waitFor();
    expect(await saleRow(page, tipsSale.sale_id).count()).toBe(0);
    await page.goto(`/sales?search=${tipsSale.sale_id.toLowerCase()}`);
    await saleRow(page, tipsSale.sale_id).waitFor();
    expect(await saleRow(page, beakerSale.sale_id).count()).toBe(0);
    // the next page keeps the search
    await page.goto('/sales?search=srch&limit=1');
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL((url) => url.searchParams.get('page') === '2');
    expect(new URL(page.url()).searchParams.get('search')).toBe('srch');
  });

  it('200 pages through the list keeping the filter', async () => {
    const item = await buildItem(b.t.db, { currentStock: 50 });
    const code = await buildChargeCode(b.t.db, { code: 'PAGED-1' });
    const older = await saleOf([{ itemId: item.id }], code.code);
    const newer = await saleOf([{ itemId: item.id }], code.code);

    const page = await b.openAs(clerk, '/sales?chargeCode=PAGED-1&limit=1');
    await saleRow(page, newer.sale_id).waitFor();
    expect(await page.getByRole('navigation', { name: 'Sales pages' }).textContent()).toContain('Page 1 of 2');
    await page.getByRole('link', { name: 'Next page' }).click();
    await saleRow(page, older.sale_id).waitFor();
    expect(new URL(page.url()).searchParams.get('chargeCode')).toBe('PAGED-1');
    expect(await saleRow(page, newer.sale_id).count()).toBe(0);
  });

  it('422 shows what is wrong with a filter typed into the address', async () => {
    b.expectHttpErrors(422);
    const page = await b.openAs(clerk, '/sales?startDate=yesterday');
    await page.getByText('must be a date (YYYY-MM-DD) or an ISO 8601 timestamp').first().waitFor();
    await expectAccessible(page);
  });
});

describe('GET /sales/:id', () => {
  it('200 shows the lines, the stock movements and notes; a manager marks it paid and an admin unpaid', async () => {
    const flask = await buildItem(b.t.db, { name: 'Round flask', sku: 'RF-1', price: '12.50', currentStock: 10 });
    const gloves = await buildItem(b.t.db, { name: 'Nitrile gloves', sku: 'NG-1', price: '3.00', currentStock: 10 });
    const sale = await saleOf([
      { itemId: flask.id, quantity: 2 },
      { itemId: gloves.id, quantity: 3 },
    ]);

    const page = await b.openAs(manager, `/sales/${sale.id}`);
    const lines = page.getByRole('region', { name: 'Lines' });
    expect(await lines.getByRole('row').filter({ hasText: 'Round flask' }).textContent()).toContain('£30.00');
    expect(await lines.getByRole('row').filter({ hasText: 'Nitrile gloves' }).textContent()).toContain('NG-1');
    const movements = page.getByRole('region', { name: 'Stock movements' });
    expect(await movements.getByRole('row').filter({ hasText: 'Round flask' }).textContent()).toContain(
      `Sale ${sale.sale_id}`,
    );
    expect(await page.getByRole('button', { name: 'Mark unpaid' }).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'sales-show');

    await page.getByRole('button', { name: 'Mark paid' }).click();
    await page.getByRole('status').filter({ hasText: 'Sale marked as paid' }).waitFor();
    expect(await b.t.db('sales').where({ id: sale.id }).first('is_paid', 'status')).toEqual({
      is_paid: true,
      status: 'paid',
    });
    expect(await page.getByRole('button', { name: 'Mark paid' }).count()).toBe(0);
    // unpaid is for admins only
    expect(await page.getByRole('button', { name: 'Mark unpaid' }).count()).toBe(0);

    const adminPage = await b.openAs(admin, `/sales/${sale.id}`);
    await adminPage.getByRole('button', { name: 'Mark unpaid' }).click();
    await adminPage.getByRole('status').filter({ hasText: 'Sale marked as unpaid' }).waitFor();
    expect(await b.t.db('sales').where({ id: sale.id }).first('is_paid', 'status')).toEqual({
      is_paid: false,
      status: 'completed',
    });
    await adminPage.getByRole('button', { name: 'Mark paid' }).waitFor();
  });

  it('200 a user sees no Mark paid button and no refund form, and records the recipient and a note', async () => {
    const item = await buildItem(b.t.db, { name: 'Pipette', currentStock: 10 });
    const sale = await saleOf([{ itemId: item.id }]);

    const page = await b.openAs(clerk, `/sales/${sale.id}`);
    await page.getByRole('heading', { name: 'Lines' }).waitFor();
    expect(await page.getByRole('button', { name: /Mark (un)?paid/ }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Refund' }).count()).toBe(0);

    await page.getByLabel('Received by').fill('Dr Ada Byron');
    await page.getByLabel("Recipient's email (optional)").fill('ada@example.ac.uk');
    await page.getByRole('button', { name: 'Save recipient' }).click();
    await page.getByRole('status').filter({ hasText: 'Recipient recorded' }).waitFor();
    expect(await b.t.db('sales').where({ id: sale.id }).first('delivered_to', 'delivered_to_email')).toEqual({
      delivered_to: 'Dr Ada Byron',
      delivered_to_email: 'ada@example.ac.uk',
    });
    expect(await page.getByRole('region', { name: 'Recipient' }).textContent()).toContain('Received by Dr Ada Byron');

    await page.getByLabel('New note').fill('Collected at the back door');
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.getByRole('status').filter({ hasText: 'Note added' }).waitFor();
    expect(await page.getByRole('region', { name: 'Notes' }).textContent()).toContain('Collected at the back door');
    expect(
      await b.t
        .db('notes')
        .where({ reference_type: 'sale', reference_id: String(sale.id) })
        .pluck('text'),
    ).toEqual(['Collected at the back door']);
  });

  it("403 a user's forged Mark paid or refund post (with a valid form token) changes nothing", async () => {
    const item = await buildItem(b.t.db, { currentStock: 10 });
    const sale = await saleOf([{ itemId: item.id }]);
    const page = await b.openAs(clerk, `/sales/${sale.id}`);
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    // the context's own request client: the session cookie, no page, so no page load to judge
    const paid = await page.request.post(`/sales/${sale.id}/paid`, { form: { _csrf: csrf }, maxRedirects: 0 });
    expect(paid.status()).toBe(403);
    expect(await paid.text()).toContain('This page is for the manager role');
    const refund = await page.request.post(`/sales/${sale.id}/refund`, {
      form: { _csrf: csrf, itemId: String(item.id), refundQty: '1' },
      maxRedirects: 0,
    });
    expect(refund.status()).toBe(403);
    expect(await refund.text()).toContain('This action requires the sales.refund permission');
    expect(await b.t.db('sales').where({ id: sale.id }).first('is_paid', 'status')).toEqual({
      is_paid: false,
      status: 'completed',
    });
    expect(await stockOf(b.t.db, item.id)).toBe('8.00');
  });

  it('422 keeps what was typed and says what to fix when the recipient is missing', async () => {
    b.expectHttpErrors(422);
    const item = await buildItem(b.t.db, { currentStock: 10 });
    const sale = await saleOf([{ itemId: item.id }]);
    const page = await b.openAs(clerk, `/sales/${sale.id}`);
    await page.getByLabel("Recipient's email (optional)").fill('ada@example.ac.uk');
    await page.getByRole('button', { name: 'Save recipient' }).click();
    await page.getByText('is required').waitFor();
    expect(await page.getByLabel("Recipient's email (optional)").inputValue()).toBe('ada@example.ac.uk');
    expect(await b.t.db('sales').where({ id: sale.id }).first('delivered_to')).toEqual({ delivered_to: null });
    await expectAccessible(page);
  });

  it('404 for a sale that does not exist', async () => {
    b.expectHttpErrors(404);
    const page = await b.openAs(clerk, '/sales/999999');
    await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
    expect(await page.getByText('Sale not found').count()).toBe(1);
  });
});

describe('POST /sales/:id/refund', () => {
  it('303 a user holding the refund permission refunds part of a sale: stock goes back and a note says so', async () => {
    const item = await buildItem(b.t.db, { name: 'Burette', price: '20.00', currentStock: 10 });
    const sale = await saleOf([{ itemId: item.id, quantity: 4 }]);
    expect(await stockOf(b.t.db, item.id)).toBe('6.00');

    const page = await b.openAs(refunder, `/sales/${sale.id}`);
    await expectAccessible(page);
    await screenshot(page, 'sales-refund');
    await page.getByLabel('Refund quantity of Burette').fill('3');
    await page.getByLabel('Reason for the refund (optional)').fill('Cracked in transit');
    await page.getByRole('button', { name: 'Refund' }).click();
    await page.getByRole('status').filter({ hasText: 'Sale partially refunded' }).waitFor();

    expect(await stockOf(b.t.db, item.id)).toBe('9.00');
    expect(await b.t.db('sales').where({ id: sale.id }).first('status')).toEqual({ status: 'partially_refunded' });
    expect(await page.getByRole('region', { name: 'Notes' }).textContent()).toContain('Cracked in transit');
    expect(
      await page
        .getByRole('region', { name: 'Stock movements' })
        .getByRole('row')
        .filter({ hasText: 'Refund of sale' })
        .count(),
    ).toBe(1);
  });

  it('422 shows the API refusal and changes nothing when more is refunded than is left', async () => {
    b.expectHttpErrors(422);
    const item = await buildItem(b.t.db, { name: 'Funnel', currentStock: 10 });
    const sale = await saleOf([{ itemId: item.id, quantity: 2 }]);

    const page = await b.openAs(refunder, `/sales/${sale.id}`);
    await page.getByLabel('Refund quantity of Funnel').fill('5');
    await page.getByRole('button', { name: 'Refund' }).click();
    await page.getByText("Cannot refund 5 of 'Funnel': only 2 left to refund").waitFor();
    expect(await page.getByLabel('Refund quantity of Funnel').inputValue()).toBe('5');
    expect(await stockOf(b.t.db, item.id)).toBe('8.00');
    await expectAccessible(page);
  });
});

/** The report's summary figures as one line of text. */
const figures = async (page: Page) =>
  (await page.getByRole('region', { name: 'Summary' }).innerText()).replace(/\s+/g, ' ');

describe('GET /sales/report', () => {
  it('200 shows the summary and departments for the filter, and Download CSV gets the same sales as the spec CSV', async () => {
    const item = await buildItem(b.t.db, { price: '10.00', vatRate: '0', currentStock: 50 });
    const first = await buildChargeCode(b.t.db, { code: 'RPT-A-1', costCentre: 'Geology' });
    const second = await buildChargeCode(b.t.db, { code: 'RPT-B-1', costCentre: 'Botany' });
    const a = await saleOf([{ itemId: item.id, quantity: 1 }], first.code);
    const b2 = await saleOf([{ itemId: item.id, quantity: 3 }], second.code);

    const page = await b.openAs(clerk, '/sales/report?chargeCode=RPT-');
    expect(await figures(page)).toContain('Total sales 2 Total amount £40.00 Unique charge codes 2');
    const departments = page.getByRole('region', { name: 'By department' });
    expect(await departments.getByRole('row').filter({ hasText: 'Botany' }).textContent()).toContain('£30.00');
    expect(await departments.getByRole('row').filter({ hasText: 'Geology' }).textContent()).toContain('£10.00');
    await saleRow(page, a.sale_id).waitFor();
    await saleRow(page, b2.sale_id).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'sales-report');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^sales-report-\d{8}\.csv$/);
    const csv = await fs.readFile((await download.path())!, 'utf8');
    const [header, ...rows] = csv.trim().split('\n');
    expect(header).toBe('Sale ID,Charge Code,Total Amount,Customer Info,Notes,Status,Processed By,Date,Items Count');
    expect(rows).toHaveLength(2);
    expect(rows.some((r) => r.startsWith(`"${b2.sale_id}","RPT-B-1","30.00"`) && r.includes('"Sam Clerk"'))).toBe(true);
  });

  it('200 narrows the figures with the unpaid-only filter', async () => {
    const item = await buildItem(b.t.db, { price: '5.00', vatRate: '0', currentStock: 50 });
    const code = await buildChargeCode(b.t.db, { code: 'UNPAID-RPT-1' });
    const paid = await saleOf([{ itemId: item.id, quantity: 1 }], code.code);
    const unpaid = await saleOf([{ itemId: item.id, quantity: 1 }], code.code);
    await salesService(b.t.db).markPaid(SYSTEM_ACTOR, paid.id);

    const page = await b.openAs(clerk, '/sales/report?chargeCode=UNPAID-RPT');
    await page.getByLabel('Unpaid only').check();
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('unpaidOnly') === 'true');
    expect(await figures(page)).toContain('Total sales 1 Total amount £5.00');
    await saleRow(page, unpaid.sale_id).waitFor();
    expect(await saleRow(page, paid.sale_id).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href')).toBe(
      '/api/sales/reports?chargeCode=UNPAID-RPT&unpaidOnly=true&format=csv',
    );
  });
});
