import type { Page } from 'playwright-core';
import type supertest from 'supertest';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildCategory, buildItem, buildUser } from '../helpers/factories';
import { buildItemSource, buildOrder, buildSupplier, invoicePdf } from '../helpers/purchasing-factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { sell } from '../helpers/finance-factories';

/** The pages under access.profile: the Settings page sets and explains it; under strict a user's pages offer only what the user may do, and a forged post is the 403 page. */

const b = useBrowserApp();

let admin: UserRow;
let manager: UserRow;
let clerk: UserRow;
let category: { id: number; name: string };
let chargeCode: string;
beforeAll(async () => {
  [admin, manager, clerk] = await Promise.all([
    buildUser(b.t.db, { role: 'admin', firstName: 'Ada', lastName: 'Admin' }),
    buildUser(b.t.db, { role: 'manager' }),
    buildUser(b.t.db, { firstName: 'Sam', lastName: 'Clerk' }),
  ]);
  category = await buildCategory(b.t.db, { name: 'Glassware' });
  chargeCode = (await buildChargeCode(b.t.db)).code;
});
afterEach(async () => {
  await b.t.db('settings').where({ key: 'access.profile' }).del();
});

const strict = () =>
  b.t
    .db('settings')
    .insert({ key: 'access.profile', value: JSON.stringify({ profile: 'strict' }) })
    .onConflict('key')
    .merge();
const formToken = async (agent: supertest.Agent) =>
  /name="_csrf" value="([^"]+)"/.exec((await agent.get('/').expect(200)).text)![1];

/** A supplier with a source of an item, an order from it with its invoice attached, and a sale processed by someone else. */
async function purchasingAndSale() {
  const item = await buildItem(b.t.db, {
    categoryId: category.id,
    name: 'Beaker 100ml',
    price: '9.99',
    currentStock: 10,
  });
  const supplier = await buildSupplier(b.t.db, { name: 'Glass Co' });
  const source = await buildItemSource(b.t.db, supplier.id, item.id, '4.25');
  const { order } = await buildOrder(b.t.db, supplier.id, [
    { itemId: item.id, name: item.name, quantity: '2', unitCost: '4.25' },
  ]);
  const managerAgent = await b.t.loginAs(manager);
  await managerAgent
    .post(`/api/orders/${order.order_id}/upload-invoice`)
    .attach('invoice', await invoicePdf(), 'invoice.pdf')
    .expect(200);
  const sale = await sell(managerAgent, chargeCode, [{ itemId: item.id, quantity: 1 }]);
  return { item, supplier, source, order, sale };
}

describe('/settings: the access profile', () => {
  it('an admin reads what each profile means and chooses strict; the setting is stored and listed with its meaning', async () => {
    const page = await b.openAs(admin, '/settings');
    const section = page.getByRole('region', { name: 'Access profile' });
    const spec = section.getByLabel('spec: as the interface specifies (the default)');
    expect(await spec.isChecked()).toBe(true);
    expect(await section.innerText()).toContain(
      "set the recipient of anyone's sale, export the catalogue, and see supplier prices, order costs and invoice PDFs",
    );
    expect(await section.innerText()).toContain('a user may still set the recipient of a sale they processed');
    await expectAccessible(page);
    await screenshot(page, 'settings-access-profile');

    await section.getByLabel('strict: these actions are for managers (recommended)').check();
    await section.getByRole('button', { name: 'Save access profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Access profile set to strict' }).waitFor();
    expect(await b.t.db('settings').where({ key: 'access.profile' }).first('value', 'updated_by')).toEqual({
      value: { profile: 'strict' },
      updated_by: admin.id,
    });
    expect(
      await page
        .getByRole('region', { name: 'Access profile' })
        .getByLabel('strict: these actions are for managers (recommended)')
        .isChecked(),
    ).toBe(true);
    const row = page
      .getByRole('region', { name: 'System settings' })
      .getByRole('row')
      .filter({ hasText: 'access.profile' });
    expect(await row.innerText()).toContain('strict: those need a manager');
  });

  it('422 for a profile the form does not offer, nothing stored; 403 for a manager', async () => {
    const agent = await b.t.loginAs(admin);
    const refused = await agent
      .post('/settings/access')
      .type('form')
      .send({ _csrf: await formToken(agent), profile: 'open' })
      .expect(422);
    expect(refused.text).toMatch(/<p class="field-error" id="profile-error">must be one of spec, strict<\/p>/);
    expect(await b.t.db('settings').where({ key: 'access.profile' }).first()).toBeUndefined();
    const managerAgent = await b.t.loginAs(manager);
    await managerAgent
      .post('/settings/access')
      .type('form')
      .send({ _csrf: await formToken(managerAgent), profile: 'spec' })
      .expect(403);
  });
});

describe('a user’s pages under access.profile', () => {
  /** What the user's pages offer: the items list's import and export, the supplier's edits and prices, another's sale's recipient, the order's costs and invoice. */
  async function offered(page: Page, ids: Awaited<ReturnType<typeof purchasingAndSale>>) {
    await page.goto('/items');
    const items = {
      importLink: await page.getByRole('link', { name: 'Import items' }).count(),
      export: await page.getByRole('button', { name: 'Export CSV' }).count(),
    };
    await page.goto('/suppliers');
    const createSupplier = await page.getByRole('button', { name: 'Create supplier' }).count();
    await page.goto(`/suppliers/${ids.supplier.id}`);
    const supplier = {
      edit: await page.getByRole('link', { name: 'Edit supplier' }).count(),
      link: await page.getByRole('button', { name: 'Link item' }).count(),
      preferred: await page.getByRole('button', { name: /Mark preferred/ }).count(),
      price: (await page.getByRole('region', { name: 'Items from this supplier' }).innerText()).includes('£4.25'),
    };
    await page.goto(`/sales/${ids.sale.id}`);
    const recipient = await page.getByRole('button', { name: 'Save recipient' }).count();
    await page.goto(`/orders/${ids.order.order_id}`);
    const order = {
      invoice: await page.getByRole('link', { name: 'Download invoice PDF' }).count(),
      costs: (await page.locator('main').innerText()).includes('£4.25'),
    };
    await page.goto(`/items/${ids.item.id}`);
    const itemCosts = (await page.locator('main').innerText()).includes('£4.25');
    return { items, createSupplier, supplier, recipient, order, itemCosts };
  }

  it('spec: a user is offered everything the interface allows', async () => {
    const ids = await purchasingAndSale();
    const page = await b.openAs(clerk, '/');
    expect(await offered(page, ids)).toEqual({
      items: { importLink: 1, export: 1 },
      createSupplier: 1,
      supplier: { edit: 1, link: 1, preferred: 1, price: true },
      recipient: 1,
      order: { invoice: 1, costs: true },
      itemCosts: true,
    });
  });

  it('strict: a user is offered none of it (no prices, no invoice) while a manager is offered all of it; the user can still set the recipient of their own sale', async () => {
    const ids = await purchasingAndSale();
    await strict();
    const page = await b.openAs(clerk, `/suppliers/${ids.supplier.id}`);
    await expectAccessible(page);
    await screenshot(page, 'access-strict-supplier-as-user');
    expect(await offered(page, ids)).toEqual({
      items: { importLink: 0, export: 0 },
      createSupplier: 0,
      supplier: { edit: 0, link: 0, preferred: 0, price: false },
      recipient: 0,
      order: { invoice: 0, costs: false },
      itemCosts: false,
    });
    await expectAccessible(page);
    await screenshot(page, 'access-strict-order-as-user');

    const own = await sell(await b.t.loginAs(clerk), chargeCode, [{ itemId: ids.item.id, quantity: 1 }]);
    await page.goto(`/sales/${own.id}`);
    await page.getByLabel('Received by').fill('Dr Own');
    await page.getByRole('button', { name: 'Save recipient' }).click();
    await page.getByRole('status').filter({ hasText: 'Recipient recorded' }).waitFor();

    const managerPage = await b.openAs(manager, '/');
    expect(await offered(managerPage, ids)).toEqual({
      items: { importLink: 1, export: 1 },
      createSupplier: 1,
      supplier: { edit: 1, link: 1, preferred: 1, price: true },
      recipient: 1,
      order: { invoice: 1, costs: true },
      itemCosts: true,
    });
  });

  it('strict: a user’s forged posts are the 403 page and change nothing', async () => {
    const ids = await purchasingAndSale();
    const other = await buildItem(b.t.db, { categoryId: category.id, sku: 'FORGED-LINK' });
    await strict();
    const agent = await b.t.loginAs(clerk);
    const token = await formToken(agent);
    const snapshot = () =>
      Promise.all([
        b.t.db('items').orderBy('id'),
        b.t.db('suppliers').orderBy('id'),
        b.t.db('item_sources').orderBy('id'),
        b.t.db('sales').orderBy('id').select('id', 'delivered_to'),
      ]);
    const before = await snapshot();
    const forged = [
      agent.post('/suppliers').type('form').send({ _csrf: token, id: 'forged', name: 'Forged Ltd' }),
      agent.post(`/suppliers/${ids.supplier.id}`).type('form').send({ _csrf: token, name: 'Renamed' }),
      agent
        .post(`/suppliers/${ids.supplier.id}/items`)
        .type('form')
        .send({ _csrf: token, item: other.sku, price: '0.01' }),
      agent
        .post(`/suppliers/${ids.supplier.id}/sources/${ids.source.id}/preferred`)
        .type('form')
        .send({ _csrf: token, preferred: 'true' }),
      agent.post(`/sales/${ids.sale.id}/recipient`).type('form').send({ _csrf: token, deliveredTo: 'Mallory' }),
      agent.post('/items/export').type('form').send({ _csrf: token, format: 'csv' }),
      agent
        .post('/items/import')
        .field('_csrf', token)
        .attach(
          'file',
          Buffer.from(
            JSON.stringify({
              items: [
                {
                  name: 'Forged',
                  sku: 'FORGED-IMPORT',
                  categoryName: category.name,
                  price: '0.01',
                  currentStock: 5000,
                },
              ],
            }),
          ),
          'items.json',
        ),
      agent.get('/items/import'),
      agent.get(`/suppliers/${ids.supplier.id}/edit`),
    ];
    for (const [index, res] of (await Promise.all(forged)).entries()) {
      expect(res.status, `forged request ${index + 1}`).toBe(403);
      expect(res.text).toMatch(/<h1[^>]*>\s*Not allowed/);
    }
    expect(await snapshot()).toEqual(before);
  });
});
