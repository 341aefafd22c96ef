import { beforeAll, describe, expect, it } from 'vitest';
import { formatDate } from '../../src/lib/format';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, PHONE, screenshot, useBrowserApp, VIEWPORTS } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { PNG_BYTES, buildSupplier } from '../helpers/purchasing-factories';
import { sdsPdf, setItemHazards, yearsAgo } from '../helpers/sds-factories';

/*
 * Issue 43: a hazardous item without a safety data sheet is listed on /reports/sds (the alert's
 * page, at a desk and on a phone); a manager uploads a real PDF on the item's page, which lists it
 * as current with its download link, and the item leaves the list. A requester signed out is sent
 * to sign in by the label's link /items/<id>/sds, then gets the PDF.
 */

const b = useBrowserApp();

let manager: UserRow;
let requester: UserRow;
beforeAll(async () => {
  manager = await buildUser(b.t.db, { role: 'manager', firstName: 'Sam', lastName: 'Safety' });
  requester = await buildUser(b.t.db, { role: 'requester', firstName: 'Rae', lastName: 'Search' });
});

const pdfFile = (buffer: Buffer, name: string) => ({ name, mimeType: 'application/pdf', buffer });

describe('safety data sheets', () => {
  it('the alert’s page lists the item, a manager uploads its sheet on the item page, and the page no longer lists it', async () => {
    const item = await buildItem(b.t.db, { name: 'Acetone 2.5 L', sku: 'SDS-ACE-1' });
    await setItemHazards(b.t.db, item.id, { pictograms: ['GHS02', 'GHS07'], hStatements: ['H225', 'H319'] });
    const supplier = await buildSupplier(b.t.db, { name: 'Solvents Direct' });

    const page = await b.openAs(manager, '/reports/sds');
    await page.getByRole('heading', { level: 1, name: 'Safety data sheets due' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'SDS-ACE-1' });
    expect((await row.locator('td').allTextContents()).map((s) => s.trim())).toEqual([
      'SDS-ACE-1',
      'Acetone 2.5 L',
      'None',
    ]);
    await expectAccessible(page);
    await page.setViewportSize(PHONE);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await expectAccessible(page);
    await screenshot(page, 'sds-due', [VIEWPORTS[0], PHONE]);
    await page.setViewportSize(VIEWPORTS[0]);

    await row.getByRole('link', { name: 'Acetone 2.5 L' }).click();
    const section = page.getByRole('region', { name: 'Safety data sheets' });
    await section.getByText('No safety data sheet yet.').waitFor();

    // a PNG is refused beside the file field, nothing stored
    b.expectHttpErrors(422);
    await section.getByLabel('Revision date').fill('2024-03-01');
    await section.getByLabel('Safety data sheet (PDF, at most 20 MB)').setInputFiles(pdfFile(PNG_BYTES, 'scan.pdf'));
    await section.getByRole('button', { name: 'Upload safety data sheet' }).click();
    await page.locator('#sds-file-error').waitFor();
    expect(await page.locator('#sds-file-error').textContent()).toBe('The uploaded file is not a PDF');
    expect(await page.getByLabel('Revision date').inputValue()).toBe('2024-03-01');
    await expectAccessible(page);

    const pdf = await sdsPdf('Acetone, Solvents Direct, revision 4.0');
    const again = page.getByRole('region', { name: 'Safety data sheets' });
    await again.getByLabel('Language').fill('en-GB');
    await again.getByLabel('Supplier (optional)').selectOption({ label: 'Solvents Direct' });
    await again.getByLabel('Safety data sheet (PDF, at most 20 MB)').setInputFiles(pdfFile(pdf, 'acetone-sds.pdf'));
    await again.getByRole('button', { name: 'Upload safety data sheet' }).click();
    await page.getByRole('status').filter({ hasText: 'Safety data sheet revised 2024-03-01 uploaded' }).waitFor();

    const versions = page.getByRole('region', { name: 'Safety data sheets' }).locator('tbody tr');
    expect(await versions.count()).toBe(1);
    const cells = (await versions.first().locator('td').allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim());
    expect(cells.slice(0, 3)).toEqual([`${formatDate('2024-03-01')} Current`, 'en-GB', 'Solvents Direct']);
    const download = versions.first().getByRole('link', { name: /^Download the safety data sheet revised/ });
    const href = await download.getAttribute('href');
    const stored = await b.t.db('safety_data_sheets').where({ item_id: item.id }).first('id', 'supplier_id');
    expect([href, stored.supplier_id]).toEqual([`/api/items/${item.id}/sds/${stored.id}`, supplier.id]);
    const got = await page.request.get(href!);
    expect(got.headers()['content-type']).toBe('application/pdf');
    expect(Buffer.compare(await got.body(), pdf)).toBe(0);
    await expectAccessible(page);
    await page.setViewportSize(PHONE);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await page.setViewportSize(VIEWPORTS[0]);
    await screenshot(page, 'item-sds', [VIEWPORTS[0], PHONE]);

    await page.goto('/reports/sds');
    expect(await page.getByRole('row').filter({ hasText: 'SDS-ACE-1' }).count()).toBe(0);

    // an old sheet puts it back, with its revision date
    await b.t
      .db('safety_data_sheets')
      .where({ item_id: item.id })
      .update({ revision_date: yearsAgo(6) });
    await page.reload();
    expect(
      (await page.getByRole('row').filter({ hasText: 'SDS-ACE-1' }).locator('td').allTextContents()).map((s) =>
        s.trim(),
      ),
    ).toEqual(['SDS-ACE-1', 'Acetone 2.5 L', `Revised ${formatDate(yearsAgo(6))}`]);
  });

  it('a label’s link /items/<id>/sds sends a signed-out requester to sign in, then serves the PDF', async () => {
    const item = await buildItem(b.t.db, { sku: 'SDS-QR-1' });
    const pdf = await sdsPdf('Ethanol');
    await b.t.db('safety_data_sheets').insert({
      item_id: item.id,
      revision_date: '2025-01-15',
      filename: 'ethanol.pdf',
      size_bytes: pdf.length,
      sha256: 'x',
      data: pdf,
    });
    const page = await b.newPage();
    await page.goto(`/items/${item.id}/sds`);
    const url = new URL(page.url());
    expect([url.pathname, url.searchParams.get('next')]).toEqual(['/login', `/items/${item.id}/sds`]);
    await page.getByLabel('Email').fill(requester.email);
    await page.getByLabel('Password').fill('correct horse battery staple');
    // the form sends the person on to `next`: the PDF itself
    const [answer] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === `/items/${item.id}/sds`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(answer.status()).toBe(200);
    expect(answer.headers()['content-type']).toBe('application/pdf');
    expect(answer.headers()['content-disposition']).toBe('inline; filename="SDS-QR-1-SDS-2025-01-15.pdf"');
  });
});
