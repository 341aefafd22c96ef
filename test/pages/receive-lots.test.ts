import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { gs1CheckDigit } from '../../src/lib/gs1';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, scanBurst, screenshot, useBrowserApp } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { stockOf } from '../helpers/inventory-factories';
import { buildOrder, buildSupplier } from '../helpers/purchasing-factories';
import { day, yymmdd } from '../helpers/lots-factories';

/*
 * Issue 42: the receive form of a lot-tracked line has a row per lot (Add lot), and a wedge
 * scanner's GS1 string of a bottle, GS separators and all, adds one to its lot's row.
 */

const b = useBrowserApp();

let manager: UserRow;
beforeAll(async () => {
  manager = await buildUser(b.t.db, { role: 'manager', firstName: 'Lou', lastName: 'Lotman' });
});

/** Waits until the scan box's announcement says `text`. */
const announced = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();

describe('/orders/:id: receiving a lot-tracked item', () => {
  it('a GS1 scan adds one to its lot (its row made when new), Add lot takes a typed lot; Receive puts each lot in with its order', async () => {
    b.expectHttpErrors(422);
    const ethanol = await buildItem(b.t.db, { name: 'Ethanol absolute 1 l', sku: `RL-ETOH-${Date.now()}` });
    await b.t.db('items').where({ id: ethanol.id }).update({ tracking: 'lot' });
    const body = `95${String(Date.now()).slice(-11)}`;
    const gtin = body + gs1CheckDigit(body);
    const agent = await b.t.loginAs(manager);
    await agent.post(`/api/items/${ethanol.id}/barcodes`).send({ code: gtin }).expect(201);
    const supplier = await buildSupplier(b.t.db, { name: 'Solvents Direct' });
    const { order } = await buildOrder(b.t.db, supplier.id, [
      { itemId: ethanol.id, name: 'Ethanol absolute 1 l', quantity: '6', unitCost: '9.00' },
    ]);
    const early = day(60);
    const late = day(300);

    const page = await b.openAs(manager, `/orders/${order.order_id}`);
    const lots = page.getByRole('group', { name: 'Lots of Ethanol absolute 1 l' });
    const received = page.getByLabel('Received quantity of Ethanol absolute 1 l');
    await page.getByLabel('Scan to receive').focus();

    // two bottles of one lot (expiry then lot, then GS and a serial) and one of another (lot, GS, expiry)
    await scanBurst(page, `01${gtin}17${yymmdd(early)}10A-17\x1d21S001`);
    await scanBurst(page, `01${gtin}17${yymmdd(early)}10A-17\x1d21S002`);
    await scanBurst(page, `01${gtin}10B-04\x1d17${yymmdd(late)}`);
    await announced(page, 'Ethanol absolute 1 l: lot B-04 1, 3 of 6 outstanding');
    await expect.poll(() => received.inputValue()).toBe('3');
    expect(await lots.getByLabel('Lot 1 of Ethanol absolute 1 l', { exact: true }).inputValue()).toBe('A-17');
    expect(await lots.getByLabel('Expires (lot 1 of Ethanol absolute 1 l)', { exact: true }).inputValue()).toBe(early);
    expect(await lots.getByLabel('Quantity (lot 1 of Ethanol absolute 1 l)', { exact: true }).inputValue()).toBe('2');
    expect(await lots.getByLabel('Lot 2 of Ethanol absolute 1 l', { exact: true }).inputValue()).toBe('B-04');
    expect(await lots.getByLabel('Expires (lot 2 of Ethanol absolute 1 l)', { exact: true }).inputValue()).toBe(late);
    expect(await lots.getByLabel('Quantity (lot 2 of Ethanol absolute 1 l)', { exact: true }).inputValue()).toBe('1');

    // its SKU carries no lot: refused, nothing changes
    await scanBurst(page, ethanol.sku);
    await announced(page, 'Ethanol absolute 1 l is tracked by lot');
    expect(await received.inputValue()).toBe('3');

    // a lot typed by hand in a row Add lot makes, keyboard only; an expiry in the past is refused on its field
    await page.getByRole('button', { name: 'Add lot of Ethanol absolute 1 l' }).click();
    const third = lots.getByLabel('Lot 3 of Ethanol absolute 1 l', { exact: true });
    expect(await third.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await page.keyboard.type('HAND-1');
    await lots.getByLabel('Expires (lot 3 of Ethanol absolute 1 l)', { exact: true }).fill(day(-2));
    await lots.getByLabel('Quantity (lot 3 of Ethanol absolute 1 l)', { exact: true }).fill('1');
    await expect.poll(() => received.inputValue()).toBe('4');
    await expectAccessible(page);
    await screenshot(page, 'orders-receive-lots');

    await page.getByRole('button', { name: 'Receive', exact: true }).click();
    const pastError = page.locator('#lotExpiresOn-' + (await orderLineId(order.id)) + '-2-error');
    await pastError.waitFor();
    expect(await pastError.textContent()).toContain('must not be in the past');
    expect(await stockOf(b.t.db, ethanol.id)).toBe('0.00');
    // the rows come back as typed
    expect(await lots.getByLabel('Lot 3 of Ethanol absolute 1 l', { exact: true }).inputValue()).toBe('HAND-1');
    expect(await lots.getByLabel('Quantity (lot 1 of Ethanol absolute 1 l)', { exact: true }).inputValue()).toBe('2');

    await lots.getByLabel('Expires (lot 3 of Ethanol absolute 1 l)', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Receive', exact: true }).click();
    await page.getByText(`Order ${order.order_id} partially received`).waitFor();
    expect(await stockOf(b.t.db, ethanol.id)).toBe('4.00');
    const stored = await b.t
      .db('stock_lots')
      .where({ item_id: ethanol.id })
      .orderBy('lot_number')
      .select(
        'lot_number',
        'quantity',
        'order_id',
        'supplier_id',
        b.t.db.raw(`to_char(expires_on, 'YYYY-MM-DD') AS expires_on`),
      );
    expect(stored).toEqual([
      { lot_number: 'A-17', quantity: '2.00', order_id: order.id, supplier_id: supplier.id, expires_on: early },
      { lot_number: 'B-04', quantity: '1.00', order_id: order.id, supplier_id: supplier.id, expires_on: late },
      { lot_number: 'HAND-1', quantity: '1.00', order_id: order.id, supplier_id: supplier.id, expires_on: null },
    ]);
  });
});

const orderLineId = async (orderId: number) =>
  ((await b.t.db('order_items').where({ order_id: orderId }).first('id')) as { id: number }).id;
