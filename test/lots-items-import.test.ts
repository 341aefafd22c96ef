import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { binaryBody } from './helpers/binary-body';
import { buildCategory } from './helpers/factories';
import { agentsByRole, movementsOf, type Agents } from './helpers/inventory-factories';
import { day } from './helpers/lots-factories';

/*
 * Issue 42: the items import takes tracking and shelfLifeDays, and for a lot-tracked item the lot
 * its opening stock goes into (lotNumber, expiresOn; UNLOTTED with no expiry when none is named, as
 * POST /api/items does); the export carries tracking and shelf life.
 */

let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  await buildCategory(t.db, { name: 'Solvents' });
});
afterAll(() => t.close());

const row = (sku: string, overrides: Record<string, unknown> = {}) => ({
  name: `Reagent ${sku}`,
  sku,
  categoryName: 'solvents',
  price: '9.00',
  currentStock: 5,
  ...overrides,
});

const lotsOf = async (id: number) =>
  (
    (await as.user.get(`/api/items/${id}/lots?includeEmpty=true`).expect(200)).body as {
      lotNumber: string;
      expiresOn: string | null;
      quantity: number;
      status: string;
    }[]
  ).map(({ lotNumber, expiresOn, quantity, status }) => ({ lotNumber, expiresOn, quantity, status }));

const itemBySku = (sku: string) => t.db('items').where({ sku }).first();

describe('POST /api/items/bulk-import: tracking, shelf life and the opening lot', () => {
  it('200 imports tracked items: opening stock into the lot named, or UNLOTTED with no expiry; tracking in any case, blanks are none', async () => {
    const res = await as.manager
      .post('/api/items/bulk-import')
      .send({
        items: [
          row('LI-1', { tracking: 'lot', shelfLifeDays: 365, lotNumber: 'B2417', expiresOn: day(200) }),
          row('LI-2', { tracking: ' LOT ', shelfLifeDays: '90' }),
          row('LI-3', { tracking: 'lot', lotNumber: 'OLD-1', expiresOn: day(-3), currentStock: 2 }),
          row('LI-4', { tracking: '', shelfLifeDays: '', lotNumber: '', expiresOn: '' }),
          row('LI-5', { tracking: 'lot', currentStock: 0 }),
          row('LI-6', { tracking: 'lot', lotNumber: 'NOEXP' }),
        ],
      })
      .expect(200);
    expect(res.body).toEqual({ successful: 6, failed: 0, errors: [] });

    const one = await itemBySku('LI-1');
    expect([one.tracking, one.shelf_life_days, one.current_stock]).toEqual(['lot', 365, '5.00']);
    expect(await lotsOf(one.id)).toEqual([
      { lotNumber: 'B2417', expiresOn: day(200), quantity: 5, status: 'available' },
    ]);
    expect((await movementsOf(t.db, one.id)).map((m) => [m.type, m.quantity, m.reason])).toEqual([
      ['in', '5.00', 'Initial stock (bulk import)'],
    ]);
    const lotShares = await t.db('stock_movement_lots').whereIn(
      'movement_id',
      (await movementsOf(t.db, one.id)).map((m) => m.id),
    );
    expect(lotShares.map((s) => [s.lot_number, s.quantity])).toEqual([['B2417', '5.00']]);

    // no lot named: UNLOTTED, with no expiry (not the shelf life: nobody knows when it was received)
    const two = await itemBySku('LI-2');
    expect([two.tracking, two.shelf_life_days]).toEqual(['lot', 90]);
    expect(await lotsOf(two.id)).toEqual([
      { lotNumber: 'UNLOTTED', expiresOn: null, quantity: 5, status: 'available' },
    ]);

    // a lot already past its date may be brought over: it is expired at once
    const three = await itemBySku('LI-3');
    expect(await lotsOf(three.id)).toEqual([
      { lotNumber: 'OLD-1', expiresOn: day(-3), quantity: 2, status: 'expired' },
    ]);

    const four = await itemBySku('LI-4');
    expect([four.tracking, four.shelf_life_days, four.current_stock]).toEqual(['none', null, '5.00']);
    expect(await lotsOf(four.id)).toEqual([]);

    const five = await itemBySku('LI-5');
    expect([five.tracking, five.current_stock]).toEqual(['lot', '0.00']);
    expect(await lotsOf(five.id)).toEqual([]);

    const six = await itemBySku('LI-6');
    expect(await lotsOf(six.id)).toEqual([{ lotNumber: 'NOEXP', expiresOn: null, quantity: 5, status: 'available' }]);
  });

  it('200 reports each bad tracking, shelf life, lot or expiry with its position; the good rows are imported', async () => {
    const res = await as.manager
      .post('/api/items/bulk-import')
      .send({
        items: [
          row('LE-1', { tracking: 'batch' }),
          row('LE-2', { tracking: 'lot', shelfLifeDays: 0 }),
          row('LE-3', { shelfLifeDays: '1.5' }),
          row('LE-4', { shelfLifeDays: 36501 }),
          row('LE-5', { lotNumber: 'B1' }),
          row('LE-6', { tracking: 'none', expiresOn: day(10) }),
          row('LE-7', { tracking: 'lot', expiresOn: day(10) }),
          row('LE-8', { tracking: 'lot', lotNumber: 'B1', expiresOn: '2027-02-30' }),
          row('LE-9', { tracking: 'lot', lotNumber: 'x'.repeat(81) }),
          row('LE-10', { tracking: 'lot', lotNumber: 'GOOD', shelfLifeDays: 30 }),
        ],
      })
      .expect(200);
    expect(res.body).toEqual({
      successful: 1,
      failed: 9,
      errors: [
        'Item 1: tracking must be one of none, lot',
        'Item 2: shelfLifeDays must be at least 1',
        'Item 3: shelfLifeDays must be a whole number of days',
        'Item 4: shelfLifeDays must be at most 36500',
        'Item 5: lotNumber is only for an item tracked by lot (tracking: lot)',
        'Item 6: expiresOn is only for an item tracked by lot (tracking: lot)',
        'Item 7: lotNumber is required with expiresOn',
        'Item 8: expiresOn must be a date YYYY-MM-DD',
        'Item 9: lotNumber must be at most 80 characters',
      ],
    });
    expect(
      (await t.db('items').where('sku', 'like', 'LE-%').select('sku', 'tracking', 'shelf_life_days')).map((i) => [
        i.sku,
        i.tracking,
        i.shelf_life_days,
      ]),
    ).toEqual([['LE-10', 'lot', 30]]);
    expect(await t.db('stock_lots').whereIn('lot_number', ['B1'])).toHaveLength(0);
  });
});

describe('POST /api/items/bulk/export: tracking and shelf life', () => {
  it('200 csv and xlsx carry Tracking and Shelf Life Days', async () => {
    await as.manager
      .post('/api/items/bulk-import')
      .send({ items: [row('LX-1', { tracking: 'lot', shelfLifeDays: 180 }), row('LX-2')] })
      .expect(200);
    const ids = (await t.db('items').whereIn('sku', ['LX-1', 'LX-2']).orderBy('sku')).map((i) => i.id as number);
    const csv = await as.user.post('/api/items/bulk/export').send({ itemIds: ids, format: 'csv' }).expect(200);
    const rows = parseCsv(csv.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.SKU, r.Tracking, r['Shelf Life Days']]).sort()).toEqual([
      ['LX-1', 'lot', '180'],
      ['LX-2', 'none', ''],
    ]);

    const xlsx = await as.user
      .post('/api/items/bulk/export')
      .send({ itemIds: [ids[0]] })
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    const { default: ExcelJS } = await import('exceljs');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.body as never);
    const sheet = workbook.getWorksheet('Items')!;
    expect([sheet.getRow(1).getCell(14).value, sheet.getRow(1).getCell(15).value]).toEqual([
      'Tracking',
      'Shelf Life Days',
    ]);
    expect([sheet.getRow(2).getCell(14).value, sheet.getRow(2).getCell(15).value]).toEqual(['lot', 180]);
  });
});
