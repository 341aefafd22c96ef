import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, scanBurst, screenshot, useBrowserApp } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { movementsOf, stockOf } from '../helpers/inventory-factories';
import { buildOrder, buildSupplier } from '../helpers/purchasing-factories';

const b = useBrowserApp();

let manager: UserRow;
beforeAll(async () => {
  manager = await buildUser(b.t.db, { role: 'manager', firstName: 'Rae', lastName: 'Receiver' });
});

const isFocused = (locator: Locator) => locator.evaluate((el) => el === el.ownerDocument.activeElement);

const result = (page: Page) => page.locator('#receive-scan-result');
/** Waits until the scan box's announcement says `text` (its live region, role status). */
const announced = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();

describe('/orders/:id: receiving by scan', () => {
  it('each scan adds one to its line, a burst of scans is neither lost nor merged, a code not on the order changes nothing; Receive posts the stock', async () => {
    b.expectHttpErrors(404, 422);
    const [tips, gloves, elsewhere] = await Promise.all([
      buildItem(b.t.db, { name: 'Pipette tips', sku: 'RS-TIPS', currentStock: 10 }),
      buildItem(b.t.db, { name: 'Nitrile gloves', sku: 'RS-GLOVES', currentStock: 2 }),
      buildItem(b.t.db, { name: 'Beaker 250 ml', sku: 'RS-BEAKER', currentStock: 1 }),
    ]);
    const supplier = await buildSupplier(b.t.db, { name: 'Scanning Supplies Ltd' });
    const { order } = await buildOrder(b.t.db, supplier.id, [
      { itemId: tips.id, name: 'Pipette tips', quantity: '5', unitCost: '4.00' },
      { itemId: gloves.id, name: 'Nitrile gloves', quantity: '2', unitCost: '6.00' },
      { name: 'Cryo labels', quantity: '3', unitCost: '1.00' },
    ]);
    const page = await b.openAs(manager, `/orders/${order.order_id}`);
    const scanBox = page.getByLabel('Scan to receive');
    const tipsQuantity = page.getByLabel('Received quantity of Pipette tips');
    const glovesQuantity = page.getByLabel('Received quantity of Nitrile gloves');
    await scanBox.focus();

    // four scans straight after each other, none waiting for the one before (SKUs in any case, as the lookup matches them)
    for (const code of ['RS-TIPS', 'rs-gloves', 'RS-TIPS', 'RS-TIPS']) await scanBurst(page, code);
    await expect.poll(() => tipsQuantity.inputValue()).toBe('3');
    await expect.poll(() => glovesQuantity.inputValue()).toBe('1');
    await announced(page, 'Pipette tips: 3 of 5 outstanding');
    expect(await scanBox.inputValue()).toBe('');
    expect(await isFocused(scanBox)).toBe(true);

    // a code of an item not on this order, and a code of no item: announced, nothing changes
    await scanBurst(page, 'RS-BEAKER');
    await announced(page, "'RS-BEAKER' is not on this order");
    await scanBurst(page, 'NO-SUCH-CODE');
    await announced(page, "No item with code 'NO-SUCH-CODE'");
    expect(await result(page).getAttribute('class')).toContain('refused');
    // both refusals stay in the scan log, newest first, below the four scans added
    const log = page.getByRole('log', { name: 'Scans, newest first' }).getByRole('listitem');
    await expect.poll(() => log.count()).toBe(6);
    const entries = await log.allTextContents();
    expect(entries[0]).toMatch(/^Refused NO-SUCH-CODE No item with code 'NO-SUCH-CODE'$/);
    expect(entries[1]).toMatch(/^Refused RS-BEAKER 'RS-BEAKER' is not on this order$/);
    expect(entries[2]).toBe('Added RS-TIPS Pipette tips: 3 of 5 outstanding');
    expect(entries[5]).toBe('Added RS-TIPS Pipette tips: 1 of 5 outstanding');
    expect(await tipsQuantity.inputValue()).toBe('3');
    expect(await glovesQuantity.inputValue()).toBe('1');
    expect(await page.getByLabel('Received quantity of Cryo labels').inputValue()).toBe('');
    expect(await isFocused(scanBox)).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'orders-receive-scan');

    // more gloves than are outstanding: the last is refused, the quantity stays at what is outstanding
    await scanBurst(page, 'RS-GLOVES');
    await announced(page, 'Nitrile gloves: 2 of 2 outstanding');
    await scanBurst(page, 'RS-GLOVES');
    await announced(page, 'Nitrile gloves: all 2 outstanding are already entered');
    expect(await glovesQuantity.inputValue()).toBe('2');

    // a scan while a quantity has the focus is a scan too: it leaves the quantity as it was and does not submit the form
    await tipsQuantity.focus();
    await scanBurst(page, 'RS-TIPS');
    await announced(page, 'Pipette tips: 4 of 5 outstanding');
    expect(await tipsQuantity.inputValue()).toBe('4');
    expect(new URL(page.url()).pathname).toBe(`/orders/${order.order_id}`);
    expect(await stockOf(b.t.db, tips.id)).toBe('10.00');
    // and a scan where nothing takes text (the page itself) goes into the scan box
    await page.locator('h1').click();
    await scanBurst(page, 'RS-TIPS');
    await announced(page, 'Pipette tips: 5 of 5 outstanding');
    expect(await isFocused(scanBox)).toBe(true);

    await page.getByRole('button', { name: 'Receive', exact: true }).click();
    await page.getByText(`Order ${order.order_id} partially received`).waitFor();
    expect(await stockOf(b.t.db, tips.id)).toBe('15.00');
    expect(await stockOf(b.t.db, gloves.id)).toBe('4.00');
    expect(await stockOf(b.t.db, elsewhere.id)).toBe('1.00');
    const movements = [...(await movementsOf(b.t.db, tips.id)), ...(await movementsOf(b.t.db, gloves.id))];
    expect(movements.map((m) => [m.item_id, m.type, m.quantity, m.reference_type, m.reference_id])).toEqual([
      [tips.id, 'in', '5.00', 'order', order.order_id],
      [gloves.id, 'in', '2.00', 'order', order.order_id],
    ]);
    const lines = await b.t.db('order_items').where({ order_id: order.id }).orderBy('id');
    expect(lines.map((line) => line.received_quantity)).toEqual(['5.00', '2.00', '0.00']);
  });

  it('the lookup answers the open lines of the item a code names, or why it cannot be received', async () => {
    const agent = await b.t.loginAs(manager);
    const clerk = await b.t.loginAs(await buildUser(b.t.db));
    const item = await buildItem(b.t.db, { name: 'Wash bottle', sku: 'RS-WASH' });
    const done = await buildItem(b.t.db, { name: 'Funnel', sku: 'RS-FUNNEL' });
    const supplier = await buildSupplier(b.t.db, { name: 'Lookup Labware' });
    const { order, lines } = await buildOrder(b.t.db, supplier.id, [
      { itemId: item.id, name: 'Wash bottle', quantity: '4', unitCost: '2.00', receivedQuantity: '1' },
      { itemId: done.id, name: 'Funnel', quantity: '2', unitCost: '1.00', receivedQuantity: '2' },
    ]);
    const lookup = (code?: string, who = agent) =>
      who
        .get(`/orders/${order.order_id}/receive/lookup`)
        .query(code === undefined ? {} : { code })
        .set('Accept', 'application/json');

    const found = await lookup(' rs-wash ').expect(200);
    expect(found.body).toEqual({
      code: 'rs-wash',
      itemId: item.id,
      tracked: false,
      lot: null,
      lines: [{ orderItemId: lines[0].id, name: 'Wash bottle', outstandingQuantity: 3 }],
    });
    expect((await lookup('RS-FUNNEL').expect(422)).body).toEqual({
      message: 'Funnel is already received in full on this order',
    });
    expect((await lookup('NOPE-1').expect(404)).body).toEqual({ message: "No item with code 'NOPE-1'" });
    expect((await lookup('').expect(400)).body).toEqual({ message: 'Scan or type a code' });
    expect((await lookup().expect(400)).body).toEqual({ message: 'Scan or type a code' });
    await lookup('RS-WASH', clerk).expect(403);

    await b.t.db('orders').where({ id: order.id }).update({ status: 'cancelled' });
    expect((await lookup('RS-WASH').expect(409)).body).toEqual({ message: `Order ${order.order_id} is cancelled` });
  });
});
