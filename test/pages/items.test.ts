import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildCategory, buildItem, buildUser } from '../helpers/factories';
import { buildStockedItem, movementsOf, stockOf } from '../helpers/inventory-factories';
import { buildItemSource, buildOrder, buildSupplier } from '../helpers/purchasing-factories';
import { changeStock } from '../../src/modules/stock-movements/stock-movements.ledger';
import { itemStock } from '../../src/modules/items/items.queries';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';

const b = useBrowserApp();

async function signedIn(
  role: 'user' | 'manager' | 'admin',
): Promise<{ page: Page; user: Awaited<ReturnType<typeof buildUser>> }> {
  const user = await buildUser(b.t.db, { role, firstName: role === 'user' ? 'Uma' : 'Max', lastName: 'Tester' });
  const page = await b.newPage();
  await b.signIn(page, user);
  return { page, user };
}

/** The names in the items table, in order. */
const rowNames = (page: Page) => page.locator('table.items-table tbody td:nth-child(2) a').allTextContents();

describe('GET /items', () => {
  it('200 narrows the table as a search is typed, without reloading the page', async () => {
    const category = await buildCategory(b.t.db, { name: 'Fasteners' });
    await buildItem(b.t.db, {
      name: 'Hex bolt M6',
      sku: 'BOLT-M6',
      categoryId: category.id,
      price: '0.25',
      currentStock: 120,
    });
    await buildItem(b.t.db, {
      name: 'Hex nut M6',
      sku: 'NUT-M6',
      categoryId: category.id,
      price: '0.10',
      currentStock: 300,
    });
    await buildItem(b.t.db, { name: 'Washer M6', sku: 'WASH-M6', categoryId: category.id });
    const { page } = await signedIn('user');
    await page.goto('/items');
    expect(await rowNames(page)).toEqual(expect.arrayContaining(['Hex bolt M6', 'Hex nut M6', 'Washer M6']));
    await expectAccessible(page);
    await screenshot(page, 'items-list-user');

    // a marker on the window survives an htmx swap and would be gone after a reload
    await page.evaluate('window.notReloaded = true');
    const narrowed = page.waitForResponse(
      (res) => res.url().includes('search=hex') && res.request().headers()['hx-request'] === 'true',
    );
    await page.getByLabel('Search items').pressSequentially('hex');
    await narrowed;
    await expect.poll(() => rowNames(page)).toEqual(['Hex bolt M6', 'Hex nut M6']);
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    expect(new URL(page.url()).searchParams.get('search')).toBe('hex');

    await page.getByLabel('Search items').fill('bolt');
    await expect.poll(() => rowNames(page)).toEqual(['Hex bolt M6']);
  });

  it('200 a user sees no manager actions', async () => {
    await buildItem(b.t.db, { name: 'Cable tie' });
    const { page } = await signedIn('user');
    await page.goto('/items');
    for (const name of [
      'New item',
      'Set inactive',
      'Set active',
      'Set stock to zero',
      'Delete',
      'Change category',
      'Change VAT rate',
      'Add note',
    ]) {
      expect(
        await page
          .getByRole('button', { name, exact: true })
          .or(page.getByRole('link', { name, exact: true }))
          .count(),
        name,
      ).toBe(0);
    }
    expect(await page.getByLabel('Include inactive items').count()).toBe(0);
    // what a user may do is there: export and import
    await page.getByRole('button', { name: 'Export CSV' }).waitFor();
    await page.getByRole('link', { name: 'Import items' }).waitFor();

    await page.getByRole('link', { name: 'Cable tie' }).click();
    await page.getByRole('heading', { level: 1, name: 'Cable tie' }).waitFor();
    expect(await page.getByRole('link', { name: 'Edit item' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Record stock change' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Add note' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'items-detail-user');
  });
});

describe('POST /items', () => {
  it('422 shows a field error beside the field and keeps what was typed; fixed, the item is created', async () => {
    const category = await buildCategory(b.t.db, { name: 'Adhesives' });
    const { page } = await signedIn('manager');
    await page.goto('/items');
    await page.getByRole('link', { name: 'New item' }).click();
    await page.getByRole('heading', { level: 1, name: 'New item' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Name').fill('Epoxy resin 50ml');
    await page.getByLabel('SKU').fill('EPOXY-50');
    await page.getByLabel('Category').selectOption({ label: 'Adhesives' });
    await page.getByLabel('Price (£)').fill('4.999');
    await page.getByLabel('Opening stock').fill('12');

    b.expectHttpErrors(422);
    await page.getByRole('button', { name: 'Create item' }).click();
    await page.locator('#price-error').waitFor();
    expect(await page.locator('#price-error').textContent()).toContain('at most 2 decimal places');
    expect(await page.getByLabel('Price (£)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Name').inputValue()).toBe('Epoxy resin 50ml');
    expect(await page.getByLabel('SKU').inputValue()).toBe('EPOXY-50');
    expect(await page.getByLabel('Opening stock').inputValue()).toBe('12');
    expect(await page.getByLabel('Category').inputValue()).toBe(String(category.id));
    await expectAccessible(page);
    await screenshot(page, 'items-new-error');

    await page.getByLabel('Price (£)').fill('4.99');
    await page.getByRole('button', { name: 'Create item' }).click();
    await page.getByRole('heading', { level: 1, name: 'Epoxy resin 50ml' }).waitFor();
    expect(await page.getByRole('status').textContent()).toContain("Item 'Epoxy resin 50ml' created");

    const row = await b.t.db('items').where({ sku: 'EPOXY-50' }).first();
    expect(row).toMatchObject({
      name: 'Epoxy resin 50ml',
      category_id: category.id,
      price: '4.99',
      current_stock: '12.00',
      is_active: true,
    });
    expect(await movementsOf(b.t.db, row.id)).toMatchObject([
      { type: 'in', quantity: '12.00', reason: 'Initial stock' },
    ]);
  });

  it('200 an edit saves and returns to the item', async () => {
    const item = await buildItem(b.t.db, { name: 'Masking tape', price: '1.20' });
    const { page } = await signedIn('manager');
    await page.goto(`/items/${item.id}`);
    await page.getByRole('link', { name: 'Edit item' }).click();
    expect(await page.getByLabel('Name').inputValue()).toBe('Masking tape');
    await page.getByLabel('Price (£)').fill('1.35');
    await page.getByRole('button', { name: 'Save item' }).click();
    await page.getByRole('status').filter({ hasText: "Item 'Masking tape' saved" }).waitFor();
    expect((await b.t.db('items').where({ id: item.id }).first()).price).toBe('1.35');
  });
});

describe('POST /items/:id/stock', () => {
  it("200 records a stock change and shows the movement; a change below zero shows the ledger's refusal", async () => {
    const item = await buildStockedItem(b.t.db, 10, { name: 'Solder wire' });
    const supplier = await buildSupplier(b.t.db, { name: 'Rapid Parts' });
    await buildItemSource(b.t.db, supplier.id, item.id, '3.10');
    await buildOrder(b.t.db, supplier.id, [{ itemId: item.id, name: 'Solder wire', quantity: '5', unitCost: '3.10' }]);
    const { page } = await signedIn('manager');
    await page.goto(`/items/${item.id}`);
    await page.getByLabel('Quantity').fill('3');
    await page.getByLabel('Type').selectOption('out');
    await page.getByLabel('Reason').fill('Workshop bench 4');
    await page.getByRole('button', { name: 'Record stock change' }).click();
    await page.getByRole('status').filter({ hasText: 'Stock changed from 10 to 7' }).waitFor();
    const movements = page.getByRole('region', { name: 'Stock movements' });
    await movements.getByRole('cell', { name: 'Workshop bench 4' }).waitFor();
    expect(await movements.locator('tbody tr').first().textContent()).toMatch(
      /Out\s*-3\s*10\s*7\s*Workshop bench 4\s*Max Tester/,
    );
    expect(await stockOf(b.t.db, item.id)).toBe('7.00');
    expect(await movementsOf(b.t.db, item.id)).toMatchObject([
      { type: 'in', quantity: '10.00' },
      { type: 'out', quantity: '-3.00', previous_stock: '10.00', new_stock: '7.00', reason: 'Workshop bench 4' },
    ]);
    expect(await page.getByRole('region', { name: 'Suppliers' }).textContent()).toContain('Rapid Parts');
    expect(await page.getByRole('region', { name: 'Order history' }).textContent()).toContain('Rapid Parts');
    await expectAccessible(page);
    await screenshot(page, 'items-detail-manager');

    b.expectHttpErrors(422);
    await page.getByLabel('Quantity').fill('50');
    await page.getByLabel('Type').selectOption('out');
    await page.getByRole('button', { name: 'Record stock change' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: "Insufficient stock for item 'Solder wire'. Current stock: 7, Required: 50" })
      .waitFor();
    expect(await page.getByLabel('Quantity').inputValue()).toBe('50');
    expect(await stockOf(b.t.db, item.id)).toBe('7.00');
    expect(await movementsOf(b.t.db, item.id)).toHaveLength(2);
    await screenshot(page, 'items-stock-refused');
  });

  it('200 pages through the movements, older ones on the next page', async () => {
    const item = await buildStockedItem(b.t.db, 1, { name: 'Fuse 3A' });
    for (let n = 1; n <= 24; n += 1)
      await changeStock(b.t.db, itemStock, {
        itemId: item.id,
        type: 'in',
        quantity: 1,
        reason: `Delivery ${n}`,
        performedBy: null,
      });
    const { page } = await signedIn('user');
    await page.goto(`/items/${item.id}`);
    const movements = page.getByRole('region', { name: 'Stock movements' });
    expect(await movements.locator('tbody tr').count()).toBe(20);
    expect(await movements.locator('tbody tr').first().textContent()).toContain('Delivery 24');
    await movements.getByRole('link', { name: 'Older movements' }).click();
    await movements.getByRole('cell', { name: 'Initial stock' }).waitFor();
    expect(await movements.locator('tbody tr').count()).toBe(5);
    await movements.getByRole('link', { name: 'Newest movements' }).waitFor();
  });
});

describe('POST /items/bulk', () => {
  it('303 a manager sets the selected items inactive, then moves some to another category', async () => {
    const from = await buildCategory(b.t.db, { name: 'Loose stock' });
    const to = await buildCategory(b.t.db, { name: 'Kits' });
    const a = await buildItem(b.t.db, { name: 'Bulkpen blue', categoryId: from.id });
    const c = await buildItem(b.t.db, { name: 'Bulkpen red', categoryId: from.id });
    const { page } = await signedIn('manager');
    await page.goto('/items?search=bulkpen');
    await expectAccessible(page);
    await screenshot(page, 'items-list-manager');

    await page.getByLabel('Select every item on this page').check();
    expect(await page.getByLabel('Select Bulkpen red').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Set inactive' }).click();
    await page.getByRole('status').filter({ hasText: '2 items marked inactive' }).waitFor();
    expect(new URL(page.url()).searchParams.get('search')).toBe('bulkpen');
    expect(await b.t.db('items').whereIn('id', [a.id, c.id]).pluck('is_active')).toEqual([false, false]);

    await page.getByLabel('Include inactive items').check();
    await expect.poll(() => rowNames(page)).toEqual(['Bulkpen blue', 'Bulkpen red']);
    await page.getByLabel('Select Bulkpen blue').check();
    await page.getByLabel('New category').selectOption({ label: 'Kits' });
    await page.getByRole('button', { name: 'Change category' }).click();
    await page.getByRole('status').filter({ hasText: "1 item moved to category 'Kits'" }).waitFor();
    expect((await b.t.db('items').where({ id: a.id }).first()).category_id).toBe(to.id);
    expect((await b.t.db('items').where({ id: c.id }).first()).category_id).toBe(from.id);
  });

  it('303 deletes the selected item once the manager confirms', async () => {
    const item = await buildItem(b.t.db, { name: 'Doomed widget' });
    await b.t
      .db('notes')
      .insert({ text: 'Goes with it', reference_type: 'item', reference_id: String(item.id), created_by: null });
    const { page } = await signedIn('manager');
    await page.goto('/items?search=doomed');
    await page.getByLabel('Select Doomed widget').check();
    const question = new Promise<string>((resolve) =>
      page.once('dialog', (dialog) => (resolve(dialog.message()), void dialog.accept())),
    );
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    expect(await question).toContain('Permanently delete the selected items?');
    await page.getByRole('status').filter({ hasText: '1 item permanently deleted' }).waitFor();
    expect(await b.t.db('items').where({ id: item.id }).first()).toBeUndefined();
    expect(await b.t.db('notes').where({ reference_type: 'item', reference_id: String(item.id) })).toEqual([]);
  });

  it('422 with nothing selected says so, and changes nothing', async () => {
    await buildItem(b.t.db, { name: 'Nochange item' });
    const { page } = await signedIn('manager');
    await page.goto('/items?search=nochange');
    b.expectHttpErrors(422);
    await page.getByRole('button', { name: 'Set stock to zero' }).click();
    await page.locator('#itemIds-error').filter({ hasText: 'must not be empty' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'Select at least one item in the table' }).waitFor();
    await screenshot(page, 'items-bulk-refused');
  });

  it('403 a forged bulk post by a user, and any post without the form token; nothing changes', async () => {
    const item = await buildItem(b.t.db, { name: 'Guarded item' });
    const { page } = await signedIn('user');
    await page.goto('/items');
    const token = await page.locator('input[name="_csrf"]').first().getAttribute('value');
    const forged = await page.request.post('/items/bulk', {
      form: { _csrf: token!, action: 'set-inactive', itemIds: String(item.id) },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    const forgedStock = await page.request.post(`/items/${item.id}/stock`, {
      form: { _csrf: token!, quantity: '5', type: 'in' },
      maxRedirects: 0,
    });
    expect(forgedStock.status()).toBe(403);

    const manager = await buildUser(b.t.db, { role: 'manager' });
    const agent = await b.t.loginAs(manager);
    await agent
      .post('/items/bulk')
      .type('form')
      .send({ action: 'set-inactive', itemIds: String(item.id) })
      .expect(403);
    await agent.post(`/items/${item.id}/stock`).type('form').send({ quantity: '5', type: 'in' }).expect(403);

    expect(await b.t.db('items').where({ id: item.id }).first()).toMatchObject({
      is_active: true,
      current_stock: '0.00',
    });
    expect(await movementsOf(b.t.db, item.id)).toEqual([]);
  });
});

describe('POST /items/export', () => {
  it('200 downloads the selected items as CSV', async () => {
    await buildItem(b.t.db, { name: 'Exported spanner', sku: 'EXP-SPAN', price: '7.50', currentStock: 4 });
    const { page } = await signedIn('user');
    await page.goto('/items?search=exported');
    await page.getByLabel('Select Exported spanner').check();
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^items-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = (await fs.readFile((await file.path())!, 'utf8')).trim().split('\n');
    expect(lines[0]).toBe(
      'ID,SKU,Name,Description,Category,Price,VAT Rate,Current Stock,Minimum Stock,Reorder Quantity,Active,Created At,Barcodes,Tracking,Shelf Life Days,' +
        'Signal Word,Pictograms,H Statements,P Statements,CAS Number,UN Number,Hazard Storage,COSHH Required,Restricted',
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^\d+,EXP-SPAN,Exported spanner,,[^,]+,7\.50,0\.2000,4\.00,0\.00,,yes,/);
  });
});

describe('POST /items/import', () => {
  it('200 shows the result of each item of the file', async () => {
    await buildCategory(b.t.db, { name: 'Imported goods' });
    await buildItem(b.t.db, { sku: 'IMP-TAKEN' });
    const { page } = await signedIn('user');
    await page.goto('/items');
    await page.getByRole('link', { name: 'Import items' }).click();
    await page.getByRole('heading', { level: 1, name: 'Import items' }).waitFor();
    await expectAccessible(page);
    const items = [
      { name: 'Imported tape', sku: 'IMP-TAPE', categoryName: 'imported goods', price: '2.40', currentStock: 6 },
      { name: 'Imported glue', sku: 'IMP-GLUE', categoryName: 'No such category', price: '1.00', currentStock: 1 },
      { name: 'Imported clash', sku: 'IMP-TAKEN', categoryName: 'Imported goods', price: '1.00', currentStock: 0 },
    ];
    await page.getByLabel('JSON file').setInputFiles({
      name: 'items.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ items })),
    });
    await page.getByRole('button', { name: 'Import' }).click();
    const result = page.getByRole('region', { name: 'Result' });
    await result.waitFor();
    expect(await result.locator('p').first().textContent()).toBe('1 imported, 2 failed');
    const rows = (await result.locator('tbody tr').allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
    expect(rows).toEqual([
      '1 IMP-TAPE Imported tape Imported',
      "2 IMP-GLUE Imported glue Failed category 'No such category' does not exist",
      "3 IMP-TAKEN Imported clash Failed an item with sku 'IMP-TAKEN' already exists",
    ]);
    const created = await b.t.db('items').where({ sku: 'IMP-TAPE' }).first();
    expect(created).toMatchObject({ name: 'Imported tape', current_stock: '6.00' });
    expect(await b.t.db('items').where({ sku: 'IMP-GLUE' }).first()).toBeUndefined();
    await expectAccessible(page);
    await screenshot(page, 'items-import-result');
  });

  it('422 names a file that is not JSON', async () => {
    const { page } = await signedIn('user');
    await page.goto('/items/import');
    b.expectHttpErrors(422);
    await page
      .getByLabel('JSON file')
      .setInputFiles({ name: 'items.json', mimeType: 'application/json', buffer: Buffer.from('{"items": [') });
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('alert').filter({ hasText: 'The file is not valid JSON' }).waitFor();
  });
});

describe('POST /items/:id/barcodes', () => {
  it('303 a manager adds barcodes (a refused one shown in the form) and removes one; a user only reads them', async () => {
    const item = await buildItem(b.t.db, { name: 'Acetone 1L', sku: 'ACE-PAGE' });
    const other = await buildItem(b.t.db, { name: 'Ethanol 1L', sku: 'ETH-PAGE' });
    await b.t.db('item_barcodes').insert({
      item_id: other.id,
      code: '4006381333931',
      lookup_key: '04006381333931',
      kind: 'ean13',
    });
    const { page } = await signedIn('manager');
    await page.goto(`/items/${item.id}`);
    const section = page.getByRole('region', { name: 'Barcodes' });
    expect(await section.textContent()).toContain('No barcodes yet.');

    await section.getByLabel('Barcode', { exact: true }).fill('036000291452');
    await section.getByLabel('Note (optional)').fill('Manufacturer');
    await section.getByRole('button', { name: 'Add barcode' }).click();
    await page.getByRole('status').filter({ hasText: "Barcode '036000291452' added" }).waitFor();
    await section.getByText('036000291452', { exact: true }).waitFor();
    expect(await section.locator('tbody tr').first().textContent()).toMatch(/036000291452\s*Manufacturer\s*UPC-A/);

    b.expectHttpErrors(409, 422);
    await section.getByLabel('Barcode', { exact: true }).fill('4006381333932');
    await section.getByRole('button', { name: 'Add barcode' }).click();
    await section.getByText("Invalid check digit in '4006381333932'").waitFor();
    expect(await section.getByLabel('Barcode', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await section.getByLabel('Barcode', { exact: true }).inputValue()).toBe('4006381333932');
    await expectAccessible(page);

    await section.getByLabel('Barcode', { exact: true }).fill('04006381333931');
    await section.getByLabel('Kind').selectOption('gtin14');
    await section.getByRole('button', { name: 'Add barcode' }).click();
    await section.getByText("Barcode '04006381333931' already belongs to ETH-PAGE Ethanol 1L").waitFor();

    await section.getByLabel('Barcode', { exact: true }).fill('(01)09501101530003(17)271231(10)LOT1');
    await section.getByLabel('Kind').selectOption('');
    await section.getByRole('button', { name: 'Add barcode' }).click();
    await page.getByRole('status').filter({ hasText: "Barcode '09501101530003' added" }).waitFor();
    expect(await section.locator('tbody tr').count()).toBe(2);
    await expectAccessible(page);
    await screenshot(page, 'items-barcodes-manager');
    await page.setViewportSize({ width: 390, height: 844 });
    // the pointer off the menus, whose dropdowns open on hover (where Add barcode was at 1280 px)
    await page.mouse.move(5, 800);
    expect(await page.locator('html').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await screenshot(page, 'items-barcodes-390');
    await page.setViewportSize({ width: 1280, height: 900 });

    page.once('dialog', (dialog) => dialog.accept());
    await section.getByRole('button', { name: 'Remove barcode 036000291452' }).click();
    await page.getByRole('status').filter({ hasText: 'Barcode removed' }).waitFor();
    expect(await b.t.db('item_barcodes').where({ item_id: item.id }).pluck('code')).toEqual(['09501101530003']);

    const reader = await signedIn('user');
    await reader.page.goto(`/items/${item.id}`);
    const shown = reader.page.getByRole('region', { name: 'Barcodes' });
    await shown.getByRole('cell', { name: '09501101530003', exact: true }).waitFor();
    expect(await shown.getByRole('button').count()).toBe(0);
    expect(await shown.getByRole('textbox').count()).toBe(0);
  });
});

describe('POST /items/:id/notes', () => {
  it("303 adds a note, edits and deletes it; another person's note offers neither", async () => {
    const item = await buildItem(b.t.db, { name: 'Noted drill' });
    const other = await buildUser(b.t.db, { firstName: 'Olga', lastName: 'Other' });
    await b.t.db('notes').insert({
      text: 'Chuck key kept in drawer 2',
      reference_type: 'item',
      reference_id: String(item.id),
      created_by: other.id,
    });
    const { page, user } = await signedIn('user');
    await page.goto(`/items/${item.id}`);
    const notes = page.getByRole('region', { name: 'Notes' });
    expect(
      await notes
        .getByRole('listitem')
        .filter({ hasText: 'Chuck key' })
        .getByRole('button', { name: 'Delete note' })
        .count(),
    ).toBe(0);

    await page.getByLabel('New note').fill('Battery needs charging');
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.getByRole('status').filter({ hasText: 'Note added' }).waitFor();
    const mine = notes.getByRole('listitem').filter({ hasText: 'Battery needs charging' });
    expect(await mine.textContent()).toContain('Uma Tester');
    await expectAccessible(page);
    await screenshot(page, 'items-notes');

    await mine.getByText('Edit note').click();
    await mine.getByLabel('Note text').fill('Battery charged, 2 spares');
    await mine.getByRole('button', { name: 'Save note' }).click();
    await page.getByRole('status').filter({ hasText: 'Note saved' }).waitFor();
    const note = await b.t
      .db('notes')
      .where({ reference_type: 'item', reference_id: String(item.id), created_by: user.id })
      .first();
    expect(note.text).toBe('Battery charged, 2 spares');

    page.once('dialog', (dialog) => void dialog.accept());
    await notes
      .getByRole('listitem')
      .filter({ hasText: 'Battery charged' })
      .getByRole('button', { name: 'Delete note' })
      .click();
    await page.getByRole('status').filter({ hasText: 'Note deleted' }).waitFor();
    expect(await b.t.db('notes').where({ id: note.id }).first()).toBeUndefined();
    expect(
      await b.t
        .db('notes')
        .where({ reference_id: String(item.id) })
        .pluck('text'),
    ).toEqual(['Chuck key kept in drawer 2']);
  });

  it("403 editing another person's note through a forged post", async () => {
    const item = await buildItem(b.t.db);
    const other = await buildUser(b.t.db);
    const [note] = await b.t
      .db('notes')
      .insert({ text: 'Not yours', reference_type: 'item', reference_id: String(item.id), created_by: other.id })
      .returning('id');
    const { page } = await signedIn('user');
    await page.goto(`/items/${item.id}`);
    const token = await page.locator('input[name="_csrf"]').first().getAttribute('value');
    const res = await page.request.post(`/items/${item.id}/notes/${note.id}`, {
      form: { _csrf: token!, text: 'Mine now' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect((await b.t.db('notes').where({ id: note.id }).first()).text).toBe('Not yours');
  });
});
