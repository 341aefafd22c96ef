import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { buildItemSource, buildOrder, buildSupplier } from '../helpers/purchasing-factories';

const b = useBrowserApp();

let clerk: UserRow;
let admin: UserRow;
beforeAll(async () => {
  [clerk, admin] = await Promise.all([
    buildUser(b.t.db, { firstName: 'Sam', lastName: 'Clerk' }),
    buildUser(b.t.db, { role: 'admin' }),
  ]);
});

const sourceRow = (page: Page, itemName: string) =>
  page.getByRole('region', { name: 'Items from this supplier' }).getByRole('row').filter({ hasText: itemName });

describe('suppliers pages', () => {
  it('a user creates a supplier (a refused id comes back beside its field), edits it, and sees it listed', async () => {
    const page = await b.openAs(clerk, '/suppliers');
    b.expectHttpErrors(422);
    await page.getByLabel('Id').fill('lab supplies');
    await page.getByLabel('Name').fill('Lab Supplies Ltd');
    await page.getByRole('button', { name: 'Create supplier' }).click();
    await page.locator('#id-error').filter({ hasText: 'must be URL-safe' }).waitFor();
    expect(await page.getByLabel('Name').inputValue()).toBe('Lab Supplies Ltd');

    await page.getByLabel('Id').fill('lab-supplies');
    await page.getByLabel('Email (optional)').fill('orders@lab.example');
    await page.getByLabel('Phone (optional)').fill('01234 111222');
    await page.getByRole('button', { name: 'Create supplier' }).click();
    await page.waitForURL('**/suppliers/lab-supplies');
    await page.getByRole('status').filter({ hasText: "Supplier 'Lab Supplies Ltd' created" }).waitFor();
    expect(await b.t.db('suppliers').where({ id: 'lab-supplies' }).first('name', 'email', 'contact')).toEqual({
      name: 'Lab Supplies Ltd',
      email: 'orders@lab.example',
      contact: null,
    });
    // a user may not delete a supplier: the link is not shown
    expect(await page.getByRole('link', { name: 'Delete supplier…' }).count()).toBe(0);

    await page.getByRole('link', { name: 'Edit supplier' }).click();
    await page.getByLabel('Contact person (optional)').fill('Pat Buyer');
    await page.getByRole('button', { name: 'Save supplier' }).click();
    await page.getByRole('status').filter({ hasText: "Supplier 'Lab Supplies Ltd' saved" }).waitFor();
    expect(await b.t.db('suppliers').where({ id: 'lab-supplies' }).first('contact')).toEqual({ contact: 'Pat Buyer' });

    await page.getByRole('link', { name: 'All suppliers' }).click();
    await page.getByRole('link', { name: 'Lab Supplies Ltd' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'suppliers-list');
  });

  it("a user links an item found by name as the supplier's preferred source, which unmarks its other source, and unmarks it", async () => {
    const item = await buildItem(b.t.db, { name: 'Conical flask 250ml', sku: 'CF-250' });
    const supplier = await buildSupplier(b.t.db, { name: 'Flask Makers' });
    const other = await buildSupplier(b.t.db, { name: 'Older Supplies' });
    await b.t.db('item_sources').insert({ supplier_id: other.id, item_id: item.id, price: '3.00', preferred: true });

    const page = await b.openAs(clerk, `/suppliers/${supplier.id}`);
    // typing part of the name offers the matching items (htmx fills the list) by their SKU
    await page.getByLabel('Item (SKU or exact name)').pressSequentially('conical');
    await page.locator('#item-matches option[value="CF-250"]').waitFor({ state: 'attached' });
    expect(await page.locator('#item-matches option[value="CF-250"]').textContent()).toBe('Conical flask 250ml');

    // an unknown SKU is refused beside the field
    b.expectHttpErrors(422);
    await page.getByLabel('Item (SKU or exact name)').fill('NO-SUCH-SKU');
    await page.getByLabel("Supplier's price (£)").fill('4.50');
    await page.getByRole('button', { name: 'Link item' }).click();
    await page.locator('#item-error').filter({ hasText: "No item has the SKU or name 'NO-SUCH-SKU'" }).waitFor();
    expect(await page.getByLabel("Supplier's price (£)").inputValue()).toBe('4.50');

    await page.getByLabel('Item (SKU or exact name)').fill('CF-250');
    await page.getByLabel("Supplier's part number (optional)").fill('FM-250-10');
    await page.getByLabel('Notes (optional)').fill('Boxes of 10');
    await page.getByLabel('Preferred source (replenishment orders this item from here)').check();
    await page.getByRole('button', { name: 'Link item' }).click();
    await page.getByRole('status').filter({ hasText: 'Conical flask 250ml linked as its preferred source' }).waitFor();
    const row = sourceRow(page, 'Conical flask 250ml');
    expect(await row.textContent()).toContain('£4.50');
    expect(await row.textContent()).toContain('Preferred');
    expect(await row.textContent()).toContain('FM-250-10');
    // removing a link is for admins
    expect(await row.getByRole('button', { name: /Remove/ }).count()).toBe(0);
    const sourceOf = (supplierId: string) =>
      b.t.db('item_sources').where({ item_id: item.id, supplier_id: supplierId }).first('price', 'notes', 'preferred');
    expect(await sourceOf(supplier.id)).toEqual({ price: '4.50', notes: 'Boxes of 10', preferred: true });
    expect(
      await b.t.db('item_sources').where({ item_id: item.id, supplier_id: supplier.id }).first('supplier_sku'),
    ).toEqual({ supplier_sku: 'FM-250-10' });
    expect(await sourceOf(other.id)).toEqual({ price: '3.00', notes: null, preferred: false });
    await expectAccessible(page);
    await screenshot(page, 'suppliers-show');

    await row.getByRole('button', { name: 'Unmark preferred' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'no longer the preferred source of Conical flask 250ml' })
      .waitFor();
    expect(await sourceOf(supplier.id)).toEqual({ price: '4.50', notes: 'Boxes of 10', preferred: false });

    // another item under the same part number is refused with the item that has it (issue 28)
    b.expectHttpErrors(409);
    const beaker = await buildItem(b.t.db, { name: 'Beaker 600ml', sku: 'BK-600' });
    await page.getByLabel('Item (SKU or exact name)').fill('BK-600');
    await page.getByLabel("Supplier's price (£)").fill('2.00');
    await page.getByLabel("Supplier's part number (optional)").fill('fm-250-10');
    await page.getByRole('button', { name: 'Link item' }).click();
    await page
      .getByRole('alert')
      .filter({
        hasText: `Supplier part number 'fm-250-10' is already used for item 'Conical flask 250ml' of supplier '${supplier.id}'`,
      })
      .waitFor();
    expect(await b.t.db('item_sources').where({ item_id: beaker.id })).toEqual([]);
  });

  it('an admin sees what refers to a supplier before deleting it, removes a link, and deletes', async () => {
    const item = await buildItem(b.t.db, { name: 'Pipette tips' });
    const ordered = await buildSupplier(b.t.db, { name: 'Ordered From Ltd' });
    await buildItemSource(b.t.db, ordered.id, item.id);
    await buildOrder(b.t.db, ordered.id, [{ itemId: item.id, name: 'Pipette tips', quantity: '2', unitCost: '5.00' }]);
    const linked = await buildSupplier(b.t.db, { name: 'Linked Only Ltd' });
    await buildItemSource(b.t.db, linked.id, item.id);

    // orders refer to it: the check lists them and offers no delete
    const page = await b.openAs(admin, `/suppliers/${ordered.id}/delete`);
    const check = page.getByRole('region', { name: 'Deletion check' });
    await check.getByText('orders: 1 record(s) reference it').waitFor();
    expect(await check.textContent()).toContain('It cannot be deleted while orders refer to it');
    expect(await check.getByRole('button').count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'suppliers-delete-check');

    // only an item link refers to it: deleting takes the link with it
    await page.goto(`/suppliers/${linked.id}`);
    await page.getByRole('link', { name: 'Delete supplier…' }).click();
    await check.getByText('item sources: 1 record(s) reference it').waitFor();
    await page.getByRole('button', { name: 'Delete supplier Linked Only Ltd with its item links and notes' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: "Supplier 'Linked Only Ltd' deleted with its item links and notes" })
      .waitFor();
    expect(await b.t.db('suppliers').where({ id: linked.id }).first()).toBeUndefined();
    expect(await b.t.db('item_sources').where({ supplier_id: linked.id })).toEqual([]);

    // a supplier nothing refers to, once its link is removed, is deleted safely
    const spare = await buildSupplier(b.t.db, { name: 'Spare Ltd' });
    await buildItemSource(b.t.db, spare.id, item.id);
    await page.goto(`/suppliers/${spare.id}`);
    await sourceRow(page, 'Pipette tips')
      .getByRole('button', { name: 'Remove Pipette tips from this supplier' })
      .click();
    await page.getByRole('status').filter({ hasText: 'Pipette tips is no longer linked to this supplier' }).waitFor();
    expect(await b.t.db('item_sources').where({ supplier_id: spare.id })).toEqual([]);
    await page.getByRole('link', { name: 'Delete supplier…' }).click();
    await page.getByRole('button', { name: 'Delete supplier Spare Ltd' }).click();
    await page.getByRole('status').filter({ hasText: "Supplier 'Spare Ltd' deleted" }).waitFor();
    expect(await b.t.db('suppliers').where({ id: spare.id }).first()).toBeUndefined();
    expect(await b.t.db('suppliers').where({ id: ordered.id }).first('id')).toEqual({ id: ordered.id });
  });

  it('403 a forged delete or link removal below admin, and a post without the form token; nothing changes', async () => {
    const supplier = await buildSupplier(b.t.db);
    const item = await buildItem(b.t.db);
    const source = await buildItemSource(b.t.db, supplier.id, item.id);
    const manager = await b.t.loginAs(await buildUser(b.t.db, { role: 'manager' }));
    const html = (await manager.get(`/suppliers/${supplier.id}`).expect(200)).text;
    const token = /name="_csrf" value="([^"]+)"/.exec(html)![1];

    await manager.get(`/suppliers/${supplier.id}/delete`).expect(403);
    await manager.post(`/suppliers/${supplier.id}/delete`).type('form').send({ _csrf: token }).expect(403);
    await manager.post(`/suppliers/${supplier.id}/delete-with-links`).type('form').send({ _csrf: token }).expect(403);
    await manager
      .post(`/suppliers/${supplier.id}/sources/${source.id}/remove`)
      .type('form')
      .send({ _csrf: token })
      .expect(403);
    // the form token is what lets a post through at all
    await manager
      .post(`/suppliers/${supplier.id}/items`)
      .type('form')
      .send({ item: item.sku, price: '1.00' })
      .expect(403);

    expect(await b.t.db('suppliers').where({ id: supplier.id }).first('id')).toEqual({ id: supplier.id });
    expect(await b.t.db('item_sources').where({ supplier_id: supplier.id }).select('id')).toEqual([{ id: source.id }]);
  });
});
