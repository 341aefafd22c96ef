import ExcelJS from 'exceljs';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';
import {
  agentsByRole,
  buildStockedItem,
  itemCountDrift,
  movementsOf,
  stockOf,
  type Agents,
} from './helpers/inventory-factories';
import { binaryBody } from './helpers/binary-body';

let t: TestApp;
let as: Agents;
let category: { id: number; name: string };
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  category = await buildCategory(t.db, { name: 'Reagents' });
});
afterAll(() => t.close());

const items = (n: number, overrides: Parameters<typeof buildItem>[1] = {}) =>
  Promise.all(Array.from({ length: n }, () => buildItem(t.db, { categoryId: category.id, ...overrides })));

describe('bulk itemIds validation', () => {
  const paths = [
    'delete',
    'set-inactive',
    'set-active',
    'set-stock-zero',
    'add-note',
    'change-vat-rate',
    'change-category',
  ];

  it('400 for missing, empty, non-integer and oversized itemIds on every bulk path', async () => {
    for (const path of paths) {
      await as.manager.post(`/api/items/bulk/${path}`).send({}).expect(400);
      await as.manager.post(`/api/items/bulk/${path}`).send({ itemIds: [] }).expect(400);
      await as.manager
        .post(`/api/items/bulk/${path}`)
        .send({ itemIds: [1, -2, 'x'] })
        .expect(400);
      await as.manager
        .post(`/api/items/bulk/${path}`)
        .send({ itemIds: Array.from({ length: 1001 }, (_, i) => i + 1) })
        .expect(400);
    }
  });

  it('403 for a user and 401 without a session on every mutating bulk path', async () => {
    for (const path of paths) {
      await as.user
        .post(`/api/items/bulk/${path}`)
        .send({ itemIds: [1] })
        .expect(403);
      await t.request
        .post(`/api/items/bulk/${path}`)
        .send({ itemIds: [1] })
        .expect(401);
    }
  });

  it('400 naming ids that do not exist; nothing changes', async () => {
    const [a] = await items(1);
    const res = await as.manager
      .post('/api/items/bulk/set-inactive')
      .send({ itemIds: [a.id, 999998, 999999] })
      .expect(400);
    expect(res.body.message).toContain('999998, 999999');
    expect(res.body.missingIds).toEqual([999998, 999999]);
    expect((await t.db('items').where({ id: a.id }).first()).is_active).toBe(true);
  });
});

describe('POST /api/items/bulk/delete', () => {
  it('200 deletes permanently; movements survive with item_id null and keep name and sku; notes go', async () => {
    const stocked = await buildStockedItem(t.db, 4, { categoryId: category.id, name: 'Gone', sku: 'GONE-1' });
    const [plain] = await items(1);
    await t
      .db('notes')
      .insert({ text: 'n', reference_type: 'item', reference_id: String(stocked.id), created_by: null });
    const res = await as.manager
      .post('/api/items/bulk/delete')
      .send({ itemIds: [stocked.id, plain.id, plain.id] })
      .expect(200);
    expect(res.body).toEqual({ success: true, message: '2 items permanently deleted' });
    expect(await t.db('items').whereIn('id', [stocked.id, plain.id])).toHaveLength(0);
    const survivors = await t.db('stock_movements').where({ item_sku: 'GONE-1' });
    expect(survivors).toEqual([expect.objectContaining({ item_id: null, item_name: 'Gone', new_stock: '4.00' })]);
    expect(await t.db('notes').where({ reference_type: 'item', reference_id: String(stocked.id) })).toHaveLength(0);
  });
});

describe('POST /api/items/bulk/delete of a sold item', () => {
  it('409 with a clear message and nothing deleted: the sale line keeps its item, and a refund still restores stock', async () => {
    const [sold, free] = [
      await buildStockedItem(t.db, 5, { categoryId: category.id }),
      await buildStockedItem(t.db, 5, { categoryId: category.id }),
    ];
    const { code } = await buildChargeCode(t.db);
    const sale = (
      await as.manager
        .post('/api/sales')
        .send({ chargeCode: code, items: [{ itemId: sold.id, quantity: 2 }] })
        .expect(201)
    ).body.sale;

    const res = await as.manager
      .post('/api/items/bulk/delete')
      .send({ itemIds: [free.id, sold.id] })
      .expect(409);
    expect(res.body.message).toMatch(
      /^Cannot delete: some of these items are referenced by records that must keep them/,
    );
    expect(await t.db('items').whereIn('id', [sold.id, free.id])).toHaveLength(2);
    expect((await as.manager.get(`/api/sales/${sale.id}`).expect(200)).body.items).toEqual([
      expect.objectContaining({ itemId: sold.id }),
    ]);

    const refund = await as.admin
      .patch(`/api/sales/${sale.id}/refund`)
      .send({ items: [{ itemId: sold.id, refundQty: 2 }] })
      .expect(200);
    expect(refund.body.refundedItems).toEqual([
      { itemId: sold.id, itemName: sold.name, refundedQty: 2, stockRestored: true },
    ]);
    expect(await stockOf(t.db, sold.id)).toBe('5.00');
  });
});

describe('POST /api/items/bulk/set-inactive and set-active', () => {
  it('200 toggles isActive with the count in the message', async () => {
    const list = await items(3);
    const ids = list.map((i) => i.id);
    expect((await as.manager.post('/api/items/bulk/set-inactive').send({ itemIds: ids }).expect(200)).body).toEqual({
      success: true,
      message: '3 items marked inactive',
    });
    expect(await t.db('items').whereIn('id', ids).where({ is_active: true })).toHaveLength(0);
    await as.admin.post('/api/items/bulk/set-active').send({ itemIds: ids }).expect(200);
    expect(await t.db('items').whereIn('id', ids).where({ is_active: true })).toHaveLength(3);
  });
});

describe('POST /api/items/bulk/set-stock-zero', () => {
  it('200 zeroes stock through the ledger: one adjustment per item that had stock', async () => {
    const a = await buildStockedItem(t.db, 5, { categoryId: category.id });
    const b = await buildStockedItem(t.db, '2.5', { categoryId: category.id });
    const [c] = await items(1);
    const res = await as.manager
      .post('/api/items/bulk/set-stock-zero')
      .send({ itemIds: [a.id, b.id, c.id] })
      .expect(200);
    expect(res.body.message).toContain('3 items');
    for (const item of [a, b]) {
      expect(await stockOf(t.db, item.id)).toBe('0.00');
      const movements = await movementsOf(t.db, item.id);
      expect(movements.at(-1)).toMatchObject({ type: 'adjustment', new_stock: '0.00', performed_by: as.ids.manager });
      expect(movements.reduce((s, m) => s + Number(m.quantity), 0)).toBe(0);
    }
    expect(await movementsOf(t.db, c.id)).toHaveLength(0);
  });
});

describe('POST /api/items/bulk/add-note', () => {
  it('200 adds one note per item', async () => {
    const list = await items(2);
    await as.manager
      .post('/api/items/bulk/add-note')
      .send({ itemIds: list.map((i) => i.id), noteText: 'Recount due' })
      .expect(200);
    const notes = await t
      .db('notes')
      .whereIn(
        'reference_id',
        list.map((i) => String(i.id)),
      )
      .where({ reference_type: 'item' });
    expect(notes.map((n) => [n.text, n.created_by])).toEqual([
      ['Recount due', as.ids.manager],
      ['Recount due', as.ids.manager],
    ]);
  });
  it('400 without noteText', async () => {
    const [a] = await items(1);
    await as.manager
      .post('/api/items/bulk/add-note')
      .send({ itemIds: [a.id] })
      .expect(400);
  });
});

describe('POST /api/items/bulk/change-vat-rate', () => {
  it('200 sets the rate shown as the item vatRate', async () => {
    const [a, b] = await items(2);
    await as.manager
      .post('/api/items/bulk/change-vat-rate')
      .send({ itemIds: [a.id, b.id], vatRate: '0.05' })
      .expect(200);
    expect((await as.user.get(`/api/items/${a.id}`).expect(200)).body.vatRate).toBe('0.0500');
  });
  it('400 for a missing or invalid vatRate', async () => {
    const [a] = await items(1);
    await as.manager
      .post('/api/items/bulk/change-vat-rate')
      .send({ itemIds: [a.id] })
      .expect(400);
    await as.manager
      .post('/api/items/bulk/change-vat-rate')
      .send({ itemIds: [a.id], vatRate: 1.5 })
      .expect(400);
    await as.manager
      .post('/api/items/bulk/change-vat-rate')
      .send({ itemIds: [a.id], vatRate: 'abc' })
      .expect(400);
  });
});

describe('POST /api/items/bulk/change-category', () => {
  it('200 moves the items', async () => {
    const target = await buildCategory(t.db);
    const [a] = await items(1);
    await as.manager
      .post('/api/items/bulk/change-category')
      .send({ itemIds: [a.id], categoryId: target.id })
      .expect(200);
    expect((await t.db('items').where({ id: a.id }).first()).category_id).toBe(target.id);
  });
  it('400 without categoryId; 404 for an unknown category', async () => {
    const [a] = await items(1);
    await as.manager
      .post('/api/items/bulk/change-category')
      .send({ itemIds: [a.id] })
      .expect(400);
    await as.manager
      .post('/api/items/bulk/change-category')
      .send({ itemIds: [a.id], categoryId: 999999 })
      .expect(404);
  });
});

describe('POST /api/items/bulk/export', () => {
  it('200 csv of the selected items, parsed back', async () => {
    const a = await buildStockedItem(t.db, 7, {
      categoryId: category.id,
      name: 'Ethanol, 1L',
      sku: 'EXP-CSV-1',
      price: '12.50',
      minimumStock: 2,
    });
    const res = await as.user
      .post('/api/items/bulk/export')
      .send({ itemIds: [a.id], format: 'csv' })
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="items-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = parseCsv(res.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(rows).toEqual([
      expect.objectContaining({
        SKU: 'EXP-CSV-1',
        Name: 'Ethanol, 1L',
        Category: 'Reagents',
        Price: '12.50',
        'VAT Rate': '0.2000',
        'Current Stock': '7.00',
        'Minimum Stock': '2.00',
      }),
    ]);
  });

  it('200 xlsx (the default) read back with exceljs, prices and rates formatted', async () => {
    const a = await buildStockedItem(t.db, 3, {
      categoryId: category.id,
      name: 'Acetone',
      sku: 'EXP-X-1',
      price: '8.25',
    });
    const b = await buildItem(t.db, { categoryId: category.id, name: 'Buffer', sku: 'EXP-X-2' });
    const res = await as.user
      .post('/api/items/bulk/export')
      .send({ itemIds: [b.id, a.id] })
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers['content-disposition']).toMatch(/filename="items-.*\.xlsx"/);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.body as never);
    const sheet = workbook.getWorksheet('Items')!;
    expect(sheet.getRow(1).getCell(2).value).toBe('SKU');
    expect([sheet.getRow(2).getCell(2).value, sheet.getRow(3).getCell(2).value]).toEqual(['EXP-X-1', 'EXP-X-2']);
    expect(sheet.getRow(2).getCell(6).value).toBe(8.25);
    expect(sheet.getRow(2).getCell(8).value).toBe(3);
    // prices show two decimals and VAT rates four in the spreadsheet, on every row
    expect([2, 3].map((r) => [sheet.getRow(r).getCell(6).numFmt, sheet.getRow(r).getCell(7).numFmt])).toEqual([
      ['0.00', '0.0000'],
      ['0.00', '0.0000'],
    ]);
  });

  it('200 all: true exports every active item', async () => {
    const res = await as.user.post('/api/items/bulk/export').send({ all: true, format: 'csv' }).expect(200);
    const rows = parseCsv(res.text, { bom: true, columns: true }) as Record<string, string>[];
    const [{ count }] = await t.db('items').where({ is_active: true }).count<{ count: number }[]>('* as count');
    expect(rows).toHaveLength(count);
  });

  it('200 all with includeInactive for a manager; 403 for a user', async () => {
    const hidden = await buildItem(t.db, { categoryId: category.id, sku: 'EXP-HIDDEN', isActive: false });
    const res = await as.manager
      .post('/api/items/bulk/export')
      .send({ all: true, includeInactive: true, format: 'csv' })
      .expect(200);
    expect(
      (parseCsv(res.text, { bom: true, columns: true }) as Record<string, string>[]).some((r) => r.SKU === hidden.sku),
    ).toBe(true);
    await as.user.post('/api/items/bulk/export').send({ all: true, includeInactive: true, format: 'csv' }).expect(403);
  });

  it('400 for an unknown format, missing itemIds or unknown ids; 401 without a session', async () => {
    const [a] = await items(1);
    await as.user
      .post('/api/items/bulk/export')
      .send({ itemIds: [a.id], format: 'pdf' })
      .expect(400);
    await as.user.post('/api/items/bulk/export').send({ format: 'csv' }).expect(400);
    await as.user
      .post('/api/items/bulk/export')
      .send({ itemIds: [999999], format: 'csv' })
      .expect(400);
    await t.request
      .post('/api/items/bulk/export')
      .send({ itemIds: [a.id] })
      .expect(401);
  });
});

describe('item_counts (the list total)', () => {
  it('still agrees with a real count after each bulk operation', async () => {
    const [a, b, c] = await items(3);
    const category = await buildCategory(t.db);
    const steps: [string, Record<string, unknown>][] = [
      ['set-inactive', { itemIds: [a.id, b.id] }],
      ['set-active', { itemIds: [a.id] }],
      ['change-category', { itemIds: [b.id, c.id], categoryId: category.id }],
      ['set-stock-zero', { itemIds: [c.id] }],
      ['delete', { itemIds: [a.id, c.id] }],
    ];
    for (const [action, body] of steps) {
      await as.manager.post(`/api/items/bulk/${action}`).send(body).expect(200);
      expect(await itemCountDrift(t.db)).toEqual([]);
    }
  });

  it('is reset by TRUNCATE', async () => {
    await t.db.raw('TRUNCATE items CASCADE');
    expect(await itemCountDrift(t.db)).toEqual([]);
    expect((await as.user.get('/api/items').expect(200)).body).toEqual({ items: [], total: 0 });
  });
});

describe('bulk answers', () => {
  it('200 {success, message}: each action names what it did and how many distinct items, singular for one', async () => {
    const [a, b] = await items(2, { currentStock: 3 });
    const [zero] = await items(1);
    const target = await buildCategory(t.db, { name: 'Bulk answers target' });
    const send = async (path: string, body: object) =>
      (await as.manager.post(`/api/items/bulk/${path}`).send(body).expect(200)).body;

    expect(await send('set-active', { itemIds: [a.id, b.id, a.id] })).toEqual({
      success: true,
      message: '2 items marked active',
    });
    expect(await send('set-inactive', { itemIds: [a.id] })).toEqual({
      success: true,
      message: '1 item marked inactive',
    });
    expect(await send('set-stock-zero', { itemIds: [a.id, b.id, zero.id] })).toEqual({
      success: true,
      message: 'Stock set to zero for 3 items (2 changed)',
    });
    expect(await send('add-note', { itemIds: [b.id], noteText: 'checked' })).toEqual({
      success: true,
      message: 'Note added to 1 item',
    });
    expect(await send('change-vat-rate', { itemIds: [a.id, b.id], vatRate: '0.0500' })).toEqual({
      success: true,
      message: 'VAT rate set to 0.0500 for 2 items',
    });
    expect(await send('change-category', { itemIds: [zero.id], categoryId: target.id })).toEqual({
      success: true,
      message: "1 item moved to category 'Bulk answers target'",
    });
    expect(await send('delete', { itemIds: [zero.id] })).toEqual({
      success: true,
      message: '1 item permanently deleted',
    });
  });
});
