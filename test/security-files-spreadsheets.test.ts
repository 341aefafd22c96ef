// Security review, finding 4 (issue 14): text written to a spreadsheet (the items export as CSV
// and XLSX, the sales report CSV) that starts with =, +, -, @, a tab or a carriage return is
// prefixed with a single quote (OWASP), while numeric columns stay numbers.
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spreadsheetText } from '../src/lib/spreadsheet-safe';
import { testApp, type TestApp } from './helpers/app';
import { binaryBody } from './helpers/binary-body';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';

const HYPERLINK = '=HYPERLINK("http://evil","x")';

describe('spreadsheetText', () => {
  it.each([
    [HYPERLINK, `'${HYPERLINK}`],
    ['+SUM(1,2)', "'+SUM(1,2)"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tcmd', "'\tcmd"],
    ['\rcmd', "'\rcmd"],
    ['plain, "quoted"', 'plain, "quoted"'],
    ['a=b', 'a=b'],
    ["'already", "'already"],
    ['', ''],
    [null, ''],
    [undefined, ''],
  ])('%j -> %j', (value, expected) => {
    expect(spreadsheetText(value)).toBe(expected);
  });
});

let t: TestApp;
let user: supertest.Agent;
let item: { id: number };
beforeAll(async () => {
  t = await testApp();
  const clerk = await buildUser(t.db, { firstName: '@Ann', lastName: 'Teller' });
  user = await t.loginAs(clerk);
  const category = await buildCategory(t.db, { name: '+Reagents' });
  item = await buildItem(t.db, {
    categoryId: category.id,
    name: HYPERLINK,
    sku: '-SKU-1',
    description: '@SUM(1+1)*cmd|" /C calc"!A0',
    price: '12.50',
    currentStock: 7,
    minimumStock: 2,
  });
  await t.db('item_barcodes').insert({ item_id: item.id, code: '=1+1', lookup_key: '=1+1', kind: 'code128' });
  // issue 43: the hazard's storage text is a text cell like the others
  await t.db('items').where({ id: item.id }).update({ hazard_storage: '=HYPERLINK("http://evil")' });
});
afterAll(() => t.close());

describe('POST /api/items/bulk/export', () => {
  it('200 csv: text cells starting with = + - @ get a leading quote, numbers are unchanged', async () => {
    const res = await user
      .post('/api/items/bulk/export')
      .send({ itemIds: [item.id], format: 'csv' })
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const rows = parseCsv(res.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(rows).toEqual([
      {
        ID: String(item.id),
        SKU: "'-SKU-1",
        Name: `'${HYPERLINK}`,
        Description: `'@SUM(1+1)*cmd|" /C calc"!A0`,
        Category: "'+Reagents",
        Price: '12.50',
        'VAT Rate': expect.any(String),
        'Current Stock': '7.00',
        'Minimum Stock': '2.00',
        'Reorder Quantity': '',
        Active: 'yes',
        'Created At': expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        Barcodes: "'=1+1",
        Tracking: 'none',
        'Shelf Life Days': '',
        'Signal Word': '',
        Pictograms: '',
        'H Statements': '',
        'P Statements': '',
        'CAS Number': '',
        'UN Number': '',
        'Hazard Storage': `'=HYPERLINK("http://evil")`,
        'COSHH Required': 'no',
        Restricted: 'no',
      },
    ]);
    // the database keeps the values as typed
    expect(await t.db('items').where({ id: item.id }).first()).toMatchObject({ name: HYPERLINK, sku: '-SKU-1' });
  });

  it('200 xlsx: the same text cells are strings with a leading quote, numeric cells are numbers', async () => {
    const res = await user
      .post('/api/items/bulk/export')
      .send({ itemIds: [item.id], format: 'xlsx' })
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.body as never);
    const row = workbook.getWorksheet('Items')!.getRow(2);
    const cell = (n: number) => ({ value: row.getCell(n).value, type: row.getCell(n).type });
    expect(cell(2)).toEqual({ value: "'-SKU-1", type: ExcelJS.ValueType.String });
    expect(cell(3)).toEqual({ value: `'${HYPERLINK}`, type: ExcelJS.ValueType.String });
    expect(cell(4)).toEqual({ value: `'@SUM(1+1)*cmd|" /C calc"!A0`, type: ExcelJS.ValueType.String });
    expect(cell(5)).toEqual({ value: "'+Reagents", type: ExcelJS.ValueType.String });
    expect(cell(1)).toEqual({ value: item.id, type: ExcelJS.ValueType.Number });
    expect(cell(6)).toEqual({ value: 12.5, type: ExcelJS.ValueType.Number });
    expect(cell(8)).toEqual({ value: 7, type: ExcelJS.ValueType.Number });
    expect(cell(9)).toEqual({ value: 2, type: ExcelJS.ValueType.Number });
    // no cell of the sheet is a formula
    row.eachCell((c) => expect(c.type).not.toBe(ExcelJS.ValueType.Formula));
  });
});

describe('GET /api/sales/reports?format=csv', () => {
  it('200: notes, recipients and names starting with + - @ tab CR get a leading quote; totals stay numbers, a negative one too', async () => {
    await buildChargeCode(t.db, { code: 'SAFE-001' });
    const sale = (
      await user
        .post('/api/sales')
        .send({ chargeCode: 'SAFE-001', items: [{ itemId: item.id, quantity: 2 }], customerNotes: '+1+1' })
        .expect(201)
    ).body.sale;
    await user
      .patch(`/api/sales/${sale.id}/recipient`)
      .send({ deliveredTo: '-2-2', deliveredToEmail: 'x@example.ac.uk' })
      .expect(200);
    // values the API would trim: written as an older client or an import might have left them
    await t.db.raw(
      `INSERT INTO sales (sale_id, charge_code, subtotal_amount, vat_amount, total_amount, customer_notes, delivered_to, created_at)
       VALUES ('SALE-SAFE-TAB', 'SAFE-001', 0, 0, 3, E'\\tTAB note', E'\\rCR recipient', now()),
              ('SALE-SAFE-NEG', 'SAFE-001', 0, 0, -5.00, '-5', '@home', now())`,
    );

    const res = await user.get('/api/sales/reports').query({ format: 'csv', chargeCode: 'SAFE' }).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const rows = parseCsv(res.text, { columns: true, relax_quotes: false }) as Record<string, string>[];
    const byId = Object.fromEntries(rows.map((r) => [r['Sale ID'], r]));
    expect(Object.keys(byId).sort()).toEqual([sale.saleId, 'SALE-SAFE-NEG', 'SALE-SAFE-TAB'].sort());

    expect(byId[sale.saleId]).toMatchObject({
      'Total Amount': sale.totalAmount,
      'Customer Info': "'-2-2 <x@example.ac.uk>",
      Notes: "'+1+1",
      'Processed By': "'@Ann Teller",
      'Items Count': '1',
    });
    expect(byId['SALE-SAFE-TAB']).toMatchObject({
      'Total Amount': '3.00',
      'Customer Info': "'\rCR recipient",
      Notes: "'\tTAB note",
    });
    expect(byId['SALE-SAFE-NEG']).toMatchObject({ 'Total Amount': '-5.00', 'Customer Info': "'@home", Notes: "'-5" });
    expect(Number(byId['SALE-SAFE-NEG']['Total Amount'])).toBe(-5);
    // the sale keeps its values as typed
    expect(await t.db('sales').where({ id: sale.id }).first()).toMatchObject({
      customer_notes: '+1+1',
      delivered_to: '-2-2',
    });
  });
});
