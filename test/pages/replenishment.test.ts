import { describe, expect, it } from 'vitest';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { buildItemSource, buildOrder, buildSupplier } from '../helpers/purchasing-factories';

const b = useBrowserApp();

const pendingOrdersOf = (supplierId: string) =>
  b.t.db('orders').where({ supplier_id: supplierId, status: 'pending' }).orderBy('id');

describe('replenishment page', () => {
  it('a manager sees short items under their supplier, apart those without one and those covered, and creates an order in the quantity typed; asking again creates nothing', async () => {
    const manager = await buildUser(b.t.db, { role: 'manager' });
    const acme = await buildSupplier(b.t.db, { name: 'Acme Lab Supplies' });
    // target 10 + 20 = 30, short 26
    const gloves = await buildItem(b.t.db, {
      name: 'Nitrile gloves',
      sku: 'NG-REP',
      currentStock: '4',
      minimumStock: '10',
    });
    await b.t.db('items').where({ id: gloves.id }).update({ reorder_quantity: '20' });
    const source = await buildItemSource(b.t.db, acme.id, gloves.id, '2.50');
    await b.t.db('item_sources').where({ id: source.id }).update({ preferred: true });
    // target 2 x 2 = 4, no source
    await buildItem(b.t.db, { name: 'Ethanol 1L', currentStock: '0', minimumStock: '2' });
    // target 2 x 5 = 10, short 9, all of it on a pending order
    const tips = await buildItem(b.t.db, { name: 'Pipette tips', currentStock: '1', minimumStock: '5' });
    await buildItemSource(b.t.db, acme.id, tips.id, '0.40');
    await buildOrder(b.t.db, acme.id, [{ itemId: tips.id, name: 'Pipette tips', quantity: '9', unitCost: '0.40' }]);

    const page = await b.openAs(manager, '/replenishment');
    const group = page.getByRole('group', { name: 'Acme Lab Supplies' });
    const glovesRow = group.getByRole('row').filter({ hasText: 'Nitrile gloves' });
    expect(await glovesRow.textContent()).toContain('£65.00');
    expect(await glovesRow.getByLabel('Quantity of Nitrile gloves').inputValue()).toBe('26');
    expect(await group.getByRole('row').filter({ hasText: 'Pipette tips' }).count()).toBe(0);
    expect(
      await page
        .getByRole('region', { name: 'Short, with no supplier' })
        .getByRole('row')
        .filter({ hasText: 'Ethanol 1L' })
        .textContent(),
    ).toContain('4');
    await page
      .getByRole('region', { name: 'Covered by pending orders' })
      .getByRole('row')
      .filter({ hasText: 'Pipette tips' })
      .waitFor();
    await expectAccessible(page);
    await screenshot(page, 'replenishment');

    // a second tab (same session) keeps the suggestion as it was, to ask again after the order is made
    const stale = await page.context().newPage();
    await stale.goto('/replenishment');
    const ordersBefore = (await pendingOrdersOf(acme.id)).length;

    b.expectHttpErrors(422);
    await page.getByLabel('Quantity of Nitrile gloves').fill('lots');
    await page.getByRole('button', { name: 'Create orders' }).click();
    await page
      .locator('#quantity-' + gloves.id + '-error')
      .filter({ hasText: 'must be a decimal number' })
      .waitFor();
    expect(await page.getByLabel('Quantity of Nitrile gloves').inputValue()).toBe('lots');
    expect(await pendingOrdersOf(acme.id)).toHaveLength(ordersBefore);

    await page.getByLabel('Order Nitrile gloves').uncheck();
    await page.getByRole('button', { name: 'Create orders' }).click();
    await page.locator('#itemIds-error').filter({ hasText: 'tick at least one' }).waitFor();

    await page.getByLabel('Order Nitrile gloves').check();
    await page.getByLabel('Quantity of Nitrile gloves').fill('30');
    await page.getByRole('button', { name: 'Create orders' }).click();
    await page.getByRole('status').filter({ hasText: 'Created 1 order(s) from replenishment' }).waitFor();
    const orders = await pendingOrdersOf(acme.id);
    expect(orders).toHaveLength(ordersBefore + 1);
    const created = orders[orders.length - 1];
    expect(
      await b.t.db('order_items').where({ order_id: created.id }).select('item_id', 'quantity', 'unit_cost'),
    ).toEqual([{ item_id: gloves.id, quantity: '30.00', unit_cost: '2.50' }]);
    const link = page
      .getByRole('region', { name: 'Orders created' })
      .getByRole('link', { name: `Order ${created.order_id}` });
    expect(await link.getAttribute('href')).toBe(`/orders/${created.id}`);
    // the gloves' shortfall is on order now
    await page
      .getByRole('region', { name: 'Covered by pending orders' })
      .getByRole('row')
      .filter({ hasText: 'Nitrile gloves' })
      .waitFor();

    await stale.getByRole('button', { name: 'Create orders' }).click();
    await stale.getByRole('status').filter({ hasText: 'Nothing to order' }).waitFor();
    expect(await pendingOrdersOf(acme.id)).toHaveLength(ordersBefore + 1);
  });

  it('the line, supplier and overall totals follow an edited quantity and an unticked line as they change (issue 28)', async () => {
    const manager = await buildUser(b.t.db, { role: 'manager' });
    const beta = await buildSupplier(b.t.db, { name: 'Beta Totals Ltd' });
    const gamma = await buildSupplier(b.t.db, { name: 'Gamma Totals Ltd' });
    // short 8 at 1.25 = 10.00; short 4 at 0.35 = 1.40; short 3 at 12.99 = 38.97
    const swabs = await buildItem(b.t.db, { name: 'Totals swabs', currentStock: '0', minimumStock: '4' });
    const vials = await buildItem(b.t.db, { name: 'Totals vials', currentStock: '0', minimumStock: '2' });
    const flasks = await buildItem(b.t.db, { name: 'Totals flasks', currentStock: '1', minimumStock: '2' });
    await buildItemSource(b.t.db, beta.id, swabs.id, '1.25');
    await buildItemSource(b.t.db, beta.id, vials.id, '0.35');
    await buildItemSource(b.t.db, gamma.id, flasks.id, '12.99');

    const page = await b.openAs(manager, '/replenishment');
    const betaGroup = page.getByRole('group', { name: 'Beta Totals Ltd' });
    const gammaGroup = page.getByRole('group', { name: 'Gamma Totals Ltd' });
    const supplierTotal = (group: typeof betaGroup) => group.locator('tfoot td');
    const overall = page.getByRole('status', { name: 'Total of the orders' });
    const overallBefore = await overall.textContent();
    expect(await supplierTotal(betaGroup).textContent()).toBe('£11.40');
    expect(await supplierTotal(gammaGroup).textContent()).toBe('£38.97');

    // 10.5 swabs at 1.25 = 13.125 -> £13.13; Beta 13.13 + 1.40 = 14.53
    await page.getByLabel('Quantity of Totals swabs').fill('10.5');
    await betaGroup.getByRole('row').filter({ hasText: 'Totals swabs' }).getByText('£13.13').waitFor();
    await supplierTotal(betaGroup).filter({ hasText: '£14.53' }).waitFor();
    const pence = (text: string | null) => Math.round(Number(text!.replace(/[£,]/g, '')) * 100);
    await expect.poll(async () => pence(await overall.textContent())).toBe(pence(overallBefore) + 313);

    // an unticked line is not ordered: out of its supplier's total and the overall one
    await page.getByLabel('Order Totals vials').uncheck();
    await supplierTotal(betaGroup).filter({ hasText: '£13.13' }).waitFor();
    await expect.poll(async () => pence(await overall.textContent())).toBe(pence(overallBefore) + 313 - 140);
    // a quantity that is not a number shows no line total and counts nothing
    await page.getByLabel('Quantity of Totals flasks').fill('lots');
    await supplierTotal(gammaGroup).filter({ hasText: '£0.00' }).waitFor();
    await expect.poll(async () => pence(await overall.textContent())).toBe(pence(overallBefore) + 313 - 140 - 3897);
  });

  it('403 for a user on the page and on a forged post; a post without the form token is refused; nothing is created', async () => {
    const supplier = await buildSupplier(b.t.db);
    const item = await buildItem(b.t.db, { currentStock: '0', minimumStock: '3' });
    await buildItemSource(b.t.db, supplier.id, item.id);
    const user = await b.t.loginAs(await buildUser(b.t.db));
    const token = /name="_csrf" value="([^"]+)"/.exec((await user.get('/suppliers').expect(200)).text)![1];
    await user.get('/replenishment').expect(403);
    await user
      .post('/replenishment/orders')
      .type('form')
      .send({ _csrf: token, itemIds: String(item.id), lineItemId: String(item.id), quantity: '6' })
      .expect(403);

    const manager = await b.t.loginAs(await buildUser(b.t.db, { role: 'manager' }));
    await manager
      .post('/replenishment/orders')
      .type('form')
      .send({ itemIds: String(item.id), lineItemId: String(item.id), quantity: '6' })
      .expect(403);
    expect(await pendingOrdersOf(supplier.id)).toEqual([]);
  });
});
