import fs from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, screenshot, useBrowserApp } from '../helpers/browser';
import { buildCategory, buildItem, buildUser } from '../helpers/factories';
import { decodeCells, renderPdfPages, type LayoutGeometry } from '../helpers/labels-decode';
import { buildOrder, buildSupplier } from '../helpers/purchasing-factories';
import { day, yymmdd } from '../helpers/lots-factories';
import { buildChargeCode } from '../helpers/sales-factories';
import { LABEL_LAYOUTS } from '../../src/modules/labels/labels.layouts';

const b = useBrowserApp();

let clerk: UserRow;
let manager: UserRow;
beforeAll(async () => {
  [clerk, manager] = await Promise.all([
    buildUser(b.t.db, { firstName: 'Sam', lastName: 'Clerk' }),
    buildUser(b.t.db, { role: 'manager', firstName: 'Mo', lastName: 'Manager' }),
  ]);
});

const layout = (id: string): LayoutGeometry => LABEL_LAYOUTS.find((l) => l.id === id)!;

/** Clicks the button and answers the PDF it downloads, with its file name. */
async function downloadOf(page: Page, button: string): Promise<{ name: string; pdf: Buffer }> {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  return { name: download.suggestedFilename(), pdf: await fs.readFile((await download.path())!) };
}

/** What the PDF's cells decode to, the empty cells left out. */
async function skusIn(pdf: Buffer, layoutId: string): Promise<(string | null)[]> {
  const cells = await decodeCells(await renderPdfPages(pdf), layout(layoutId));
  return cells.map((cell) => cell?.text ?? null);
}

describe('Print labels', () => {
  it("from an item's page: copies, sheet, barcode, start position and price; the PDF downloads and scans", async () => {
    b.expectHttpErrors(422);
    const category = await buildCategory(b.t.db, { name: 'Glassware' });
    const beaker = await buildItem(b.t.db, { name: 'Beaker 250 ml', sku: 'BKR-250', categoryId: category.id });
    const page = await b.openAs(manager, `/items/${beaker.id}`);
    const section = page.getByRole('region', { name: 'Print labels' });
    await section.getByLabel('Copies').fill('3');
    await section.getByLabel('Label sheet').selectOption('avery-l7651');
    await section.getByLabel('Barcode').selectOption('qr');
    await section.getByLabel('Start at label').fill('2');
    await section.getByLabel('Show the price').check();
    await expectAccessible(page);
    await screenshot(page, 'labels-item');
    const { name, pdf } = await downloadOf(page, 'Print labels');
    expect(name).toBe('labels-BKR-250.pdf');
    expect((await skusIn(pdf, 'avery-l7651')).slice(0, 5)).toEqual([null, 'BKR-250', 'BKR-250', 'BKR-250', null]);
    // the page stays where it was
    expect(new URL(page.url()).pathname).toBe(`/items/${beaker.id}`);

    // a start past the sheet: the labels page says what to fix, with what was chosen
    await section.getByLabel('Start at label').fill('66');
    await section.getByRole('button', { name: 'Print labels' }).click();
    await page.getByRole('heading', { name: 'Print labels', level: 1 }).waitFor();
    await page.getByText("startPosition must be between 1 and 65 for layout 'avery-l7651'").waitFor();
    expect(await page.getByLabel('Start at label').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Label sheet').inputValue()).toBe('avery-l7651');
    expect(await page.getByLabel('Copies of Beaker 250 ml').inputValue()).toBe('3');
    await expectAccessible(page);
    await screenshot(page, 'labels-refused');
    await page.getByLabel('Start at label').fill('1');
    const again = await downloadOf(page, 'Print labels');
    expect((await skusIn(again.pdf, 'avery-l7651')).filter(Boolean)).toEqual(['BKR-250', 'BKR-250', 'BKR-250']);
  });

  it('a user sees no print form on the item page', async () => {
    const item = await buildItem(b.t.db, { name: 'Funnel', sku: 'FNL-1' });
    const page = await b.openAs(clerk, `/items/${item.id}`);
    await page.getByRole('heading', { name: 'Funnel' }).waitFor();
    expect(await page.getByRole('region', { name: 'Print labels' }).count()).toBe(0);
  });

  it('from the items list: the ticked items, one copy each, editable', async () => {
    const category = await buildCategory(b.t.db, { name: 'Labelled stock' });
    await buildItem(b.t.db, { name: 'Pipette 10 ml', sku: 'PIP-10', categoryId: category.id });
    await buildItem(b.t.db, { name: 'Flask 500 ml', sku: 'FLK-500', categoryId: category.id });
    b.expectHttpErrors(422);
    const page = await b.openAs(manager, '/items?search=ml');
    // nothing ticked: the labels page says so
    await page.getByRole('button', { name: 'Print labels' }).click();
    await page.getByText('Select at least one item in the table to print labels for').waitFor();
    await page.getByRole('link', { name: '← Back' }).click();
    await page.getByRole('heading', { name: 'Items', level: 1 }).waitFor();
    expect(new URL(page.url()).search).toBe('?search=ml');
    await page.getByLabel('Select Pipette 10 ml').check();
    await page.getByLabel('Select Flask 500 ml').check();
    await page.getByRole('button', { name: 'Print labels' }).click();
    await page.getByRole('heading', { name: 'Print labels', level: 1 }).waitFor();
    expect(await page.getByLabel('Copies of Pipette 10 ml').inputValue()).toBe('1');
    expect(await page.getByLabel('Copies of Flask 500 ml').inputValue()).toBe('1');
    await page.getByLabel('Copies of Flask 500 ml').fill('2');
    await page.getByLabel('Barcode').selectOption('datamatrix');
    await expectAccessible(page);
    await screenshot(page, 'labels-from-list');
    const { name, pdf } = await downloadOf(page, 'Print labels');
    expect(name).toBe('labels-2-items.pdf');
    const skus = (await skusIn(pdf, 'avery-l7160')).filter(Boolean);
    expect(skus.sort()).toEqual(['FLK-500', 'FLK-500', 'PIP-10'].sort());
  });

  it('on an order after receiving: one label a unit received, copies editable', async () => {
    const supplier = await buildSupplier(b.t.db);
    const tape = await buildItem(b.t.db, { name: 'Autoclave tape', sku: 'TAPE-19' });
    const gloves = await buildItem(b.t.db, { name: 'Cryo gloves', sku: 'CRG-M' });
    const { order } = await buildOrder(b.t.db, supplier.id, [
      { itemId: tape.id, name: 'Autoclave tape', quantity: '4', unitCost: '2.00' },
      { itemId: gloves.id, name: 'Cryo gloves', quantity: '2', unitCost: '30.00' },
    ]);
    const page = await b.openAs(manager, `/orders/${order.order_id}`);
    expect(await page.getByRole('region', { name: 'Print labels' }).count()).toBe(0);
    await page.getByLabel('Received quantity of Autoclave tape').fill('3');
    await page.getByRole('button', { name: 'Receive' }).click();
    const section = page.getByRole('region', { name: 'Print labels' });
    await section.waitFor();
    expect(await section.getByLabel('Copies of Autoclave tape').inputValue()).toBe('3');
    // only what was received
    expect(await section.getByLabel('Copies of Cryo gloves').count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'labels-order');
    let { pdf } = await downloadOf(page, 'Print labels');
    expect((await skusIn(pdf, 'avery-l7160')).filter(Boolean)).toEqual(['TAPE-19', 'TAPE-19', 'TAPE-19']);
    await section.getByLabel('Copies of Autoclave tape').fill('1');
    await section.getByLabel('Label sheet').selectOption('roll-62x29');
    ({ pdf } = await downloadOf(page, 'Print labels'));
    expect(await skusIn(pdf, 'roll-62x29')).toEqual(['TAPE-19']);
  });
});

describe('Print labels: lots (issue 42)', () => {
  it('on an order after receiving: the lots received print lot labels, a GS1 DataMatrix with GTIN, expiry and lot', async () => {
    const supplier = await buildSupplier(b.t.db);
    const tape = await buildItem(b.t.db, { name: 'Autoclave tape, 25 mm', sku: 'TAPE-25' });
    const acetone = await buildItem(b.t.db, { name: 'Acetone 2.5 l', sku: 'ACE-25' });
    const ethanol = await buildItem(b.t.db, { name: 'Ethanol 1 l', sku: 'ETH-1' });
    await b.t.db('items').whereIn('id', [acetone.id, ethanol.id]).update({ tracking: 'lot' });
    // the acetone is sold under an EAN-13; the ethanol has no GTIN
    await b.t.db('item_barcodes').insert({
      item_id: acetone.id,
      code: '9501101530003',
      kind: 'ean13',
      lookup_key: '09501101530003',
    });
    const { order } = await buildOrder(b.t.db, supplier.id, [
      { itemId: tape.id, name: 'Autoclave tape', quantity: '2', unitCost: '2.00', receivedQuantity: '2' },
      { itemId: acetone.id, name: 'Acetone', quantity: '3', unitCost: '9.00', receivedQuantity: '3' },
      { itemId: ethanol.id, name: 'Ethanol', quantity: '1', unitCost: '6.00', receivedQuantity: '1' },
    ]);
    // the lots as receiving leaves them: first received on this order
    await b.t.db('stock_lots').insert([
      { item_id: acetone.id, lot_number: 'A-LATE', expires_on: '2031-03-31', quantity: '1', order_id: order.id },
      { item_id: acetone.id, lot_number: 'A-SOON', expires_on: '2030-09-15', quantity: '2', order_id: order.id },
      { item_id: ethanol.id, lot_number: 'E-1', expires_on: null, quantity: '1', order_id: order.id },
    ]);
    const page = await b.openAs(manager, `/orders/${order.order_id}`);
    const section = page.getByRole('region', { name: 'Print labels' });
    await section.waitFor();
    expect(await section.getByLabel('Copies of Autoclave tape, 25 mm').inputValue()).toBe('2');
    expect(await section.getByLabel('Copies of Acetone 2.5 l, lot A-SOON').inputValue()).toBe('2');
    expect(await section.getByLabel('Copies of Acetone 2.5 l, lot A-LATE').inputValue()).toBe('1');
    expect(await section.getByLabel('Copies of Ethanol 1 l, lot E-1').inputValue()).toBe('1');
    // a tracked item prints by lot only
    expect(await section.getByLabel('Copies of Acetone 2.5 l', { exact: true }).count()).toBe(0);
    await section.getByText('Exp 2030-09-15').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'labels-order-lots');
    const { name, pdf } = await downloadOf(page, 'Print labels');
    expect(name).toBe('labels-3-items.pdf');
    expect((await skusIn(pdf, 'avery-l7160')).filter(Boolean)).toEqual([
      'TAPE-25',
      'TAPE-25',
      '(01)09501101530003(17)300915(10)A-SOON',
      '(01)09501101530003(17)300915(10)A-SOON',
      '(01)09501101530003(17)310331(10)A-LATE',
      'ETH-1',
    ]);

    // copies refused: the labels page keeps the lot lines as typed
    b.expectHttpErrors(422);
    await section.getByLabel('Copies of Ethanol 1 l, lot E-1').fill('0');
    await section.getByRole('button', { name: 'Print labels' }).click();
    await page.getByRole('heading', { name: 'Print labels', level: 1 }).waitFor();
    expect(await page.getByLabel('Copies of Ethanol 1 l, lot E-1').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Copies of Acetone 2.5 l, lot A-SOON').inputValue()).toBe('2');
    await page.getByLabel('Copies of Ethanol 1 l, lot E-1').fill('1');
    await page.getByLabel('Copies of Acetone 2.5 l, lot A-SOON').fill('1');
    await page.getByLabel('Copies of Autoclave tape, 25 mm').fill('1');
    const again = await downloadOf(page, 'Print labels');
    expect((await skusIn(again.pdf, 'avery-l7160')).filter(Boolean)).toEqual([
      'TAPE-25',
      '(01)09501101530003(17)300915(10)A-SOON',
      '(01)09501101530003(17)310331(10)A-LATE',
      'ETH-1',
    ]);
  });

  it('after real receipts: a label a unit each receipt put into each lot, a sale since or a lot first received elsewhere too', async () => {
    const api = await b.t.loginAs(manager);
    const category = await buildCategory(b.t.db, { name: 'Solvents' });
    const item = async (name: string, sku: string) =>
      (
        await api
          .post('/api/items')
          .send({ name, sku, categoryId: category.id, price: '12.00', tracking: 'lot' })
          .expect(201)
      ).body as { id: number };
    const hexane = await item('Hexane 1 l', 'HEX-1');
    const dmso = await item('DMSO 500 ml', 'DMSO-500');
    // the hexane is sold under an EAN-13: its lot labels are GS1 DataMatrix; the DMSO has no GTIN: Code 128 of its SKU
    await api.post(`/api/items/${hexane.id}/barcodes`).send({ code: '4006381333931' }).expect(201);
    const supplier = await buildSupplier(b.t.db);
    const receive = (orderId: number, receivedItems: unknown[]) =>
      api.post(`/api/orders/${orderId}/receive`).send({ receivedItems }).expect(200);

    // an earlier order brought the hexane lot H-OLD
    const earlier = await buildOrder(b.t.db, supplier.id, [
      { itemId: hexane.id, name: 'Hexane', quantity: '2', unitCost: '8.00' },
    ]);
    const [soon, late] = [day(120), day(300)];
    await receive(earlier.order.id, [
      {
        orderItemId: earlier.lines[0].id,
        receivedQuantity: 2,
        lots: [{ lotNumber: 'H-OLD', expiresOn: soon, quantity: 2 }],
      },
    ]);

    // this order, received in two receipts: H-NEW twice, more of H-OLD, and 2.5 of DMSO in D-1
    const { order, lines } = await buildOrder(b.t.db, supplier.id, [
      { itemId: hexane.id, name: 'Hexane', quantity: '6', unitCost: '8.00' },
      { itemId: dmso.id, name: 'DMSO', quantity: '2.5', unitCost: '20.00' },
    ]);
    await receive(order.id, [
      {
        orderItemId: lines[0].id,
        receivedQuantity: 3,
        lots: [
          { lotNumber: 'H-NEW', expiresOn: late, quantity: 2 },
          { lotNumber: 'H-OLD', expiresOn: soon, quantity: 1 },
        ],
      },
    ]);
    await receive(order.id, [
      { orderItemId: lines[0].id, receivedQuantity: 3, lots: [{ lotNumber: 'H-NEW', expiresOn: late, quantity: 3 }] },
      { orderItemId: lines[1].id, receivedQuantity: 2.5, lots: [{ lotNumber: 'D-1', quantity: 2.5 }] },
    ]);
    // a sale since takes from the lots (first expiry first: H-OLD's 3, then 1 of H-NEW); the labels count what was received
    const code = await buildChargeCode(b.t.db);
    await api
      .post('/api/sales')
      .send({ chargeCode: code.code, items: [{ itemId: hexane.id, quantity: 4 }], vatApplied: false })
      .expect(201);

    const page = await b.openAs(manager, `/orders/${order.order_id}`);
    const section = page.getByRole('region', { name: 'Print labels' });
    await section.waitFor();
    expect(await section.getByLabel('Copies of Hexane 1 l, lot H-OLD').inputValue()).toBe('1');
    expect(await section.getByLabel('Copies of Hexane 1 l, lot H-NEW').inputValue()).toBe('5');
    expect(await section.getByLabel('Copies of DMSO 500 ml, lot D-1').inputValue()).toBe('3');
    expect(await section.getByLabel('Copies of Hexane 1 l', { exact: true }).count()).toBe(0);
    expect(await section.getByLabel('Copies of DMSO 500 ml', { exact: true }).count()).toBe(0);

    const { pdf } = await downloadOf(page, 'Print labels');
    const hexaneLabel = (lot: string, expiresOn: string) => `(01)04006381333931(17)${yymmdd(expiresOn)}(10)${lot}`;
    expect((await skusIn(pdf, 'avery-l7160')).filter(Boolean)).toEqual([
      hexaneLabel('H-OLD', soon),
      ...Array<string>(5).fill(hexaneLabel('H-NEW', late)),
      ...Array<string>(3).fill('DMSO-500'),
    ]);
    // the earlier order's labels: its own receipt of H-OLD only
    const before = await b.openAs(manager, `/orders/${earlier.order.order_id}`);
    const earlierSection = before.getByRole('region', { name: 'Print labels' });
    await earlierSection.waitFor();
    expect(await earlierSection.getByLabel('Copies of Hexane 1 l, lot H-OLD').inputValue()).toBe('2');
    expect(await earlierSection.getByLabel('Copies of Hexane 1 l, lot H-NEW').count()).toBe(0);
  });
});
