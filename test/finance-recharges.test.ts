import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { binaryBody } from './helpers/binary-body';
import { buildItem, buildUser } from './helpers/factories';
import { recordedAt, refund, sell, type SoldSale } from './helpers/finance-factories';
import { buildChargeCode, grantPermission } from './helpers/sales-factories';

let t: TestApp;
let finance: supertest.Agent;
let clerk: supertest.Agent;
const s: Record<string, SoldSale> = {};

// Hand-computed fixture (VAT 20% unless off; each line rounded half-up; refunds pro rata per line):
//  s1 CHEM-001 (Chemistry) 2 x Beaker 10.00           net 20.00 VAT 4.00 gross 24.00, paid
//  s2 CHEM-001 VAT off: 3 x Stand 5.00, 1 x Ethanol 3.33   net 18.33 VAT 0 gross 18.33; 1 Stand refunded (5.00)
//                                                     -> net 13.33 VAT 0.00 gross 13.33, unpaid
//  s3 CHEM-002 (Chemistry) 3 x Ethanol 3.33           net 9.99 VAT 2.00 (1.998) gross 11.99; 1 refunded:
//                                                     gross round(11.99/3)=4.00, net round(9.99/3)=3.33, VAT 0.67
//                                                     -> net 6.66 VAT 1.33 gross 7.99, unpaid
//  s4 PHYS-001 (Physics) 1 x Beaker, 2 x Stand        net 20.00 VAT 4.00 gross 24.00, paid; the Beaker refunded
//                                                     -> net 10.00 VAT 2.00 gross 12.00, paid
//  s5 PHYS-001 recorded 2025-06-15: 1 x Stand         net 5.00 VAT 1.00 gross 6.00, unpaid
//  s6 FORM-001 (cost centre '=cmd') recorded 2024-01-10: 1 x '@SUM(A1)' 7.50, VAT 0 rate: net 7.50 gross 7.50
//  A draft quote on CHEM-001 is never counted.
beforeAll(async () => {
  t = await testApp();
  const financeUser = await buildUser(t.db, { firstName: 'Fin', lastName: 'Ance' });
  await grantPermission(t.db, financeUser.id, 'finance.export');
  finance = await t.loginAs(financeUser);
  clerk = await t.loginAs(await buildUser(t.db));
  const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
  await buildChargeCode(t.db, { code: 'CHEM-001', costCentre: 'Chemistry' });
  await buildChargeCode(t.db, { code: 'CHEM-002', costCentre: 'Chemistry' });
  await buildChargeCode(t.db, { code: 'PHYS-001', costCentre: 'Physics' });
  await buildChargeCode(t.db, { code: 'FORM-001', costCentre: '=cmd' });
  const beaker = await buildItem(t.db, {
    name: 'Beaker',
    sku: 'BK-1',
    price: '10.00',
    vatRate: '0.2000',
    currentStock: 100,
  });
  const stand = await buildItem(t.db, {
    name: 'Stand',
    sku: 'ST-1',
    price: '5.00',
    vatRate: '0.2000',
    currentStock: 100,
  });
  const ethanol = await buildItem(t.db, {
    name: 'Ethanol',
    sku: 'ET-1',
    price: '3.33',
    vatRate: '0.2000',
    currentStock: 100,
  });
  const formula = await buildItem(t.db, {
    name: '@SUM(A1)',
    sku: '+SKU',
    price: '7.50',
    vatRate: '0.0000',
    currentStock: 100,
  });

  s.s1 = await sell(clerk, 'CHEM-001', [{ itemId: beaker.id, quantity: 2 }]);
  s.s2 = await sell(
    clerk,
    'CHEM-001',
    [
      { itemId: stand.id, quantity: 3 },
      { itemId: ethanol.id, quantity: 1 },
    ],
    { vatApplied: false },
  );
  s.s3 = await sell(clerk, 'CHEM-002', [{ itemId: ethanol.id, quantity: 3 }]);
  s.s4 = await sell(clerk, 'PHYS-001', [
    { itemId: beaker.id, quantity: 1 },
    { itemId: stand.id, quantity: 2 },
  ]);
  s.s5 = await sell(clerk, 'PHYS-001', [{ itemId: stand.id, quantity: 1 }]);
  s.s6 = await sell(clerk, 'FORM-001', [{ itemId: formula.id, quantity: 1 }]);
  await recordedAt(t.db, s.s5, '2025-06-15T10:00:00Z');
  await recordedAt(t.db, s.s6, '2024-01-10T10:00:00Z');
  await manager.patch(`/api/sales/${s.s1.id}/paid`).expect(200);
  await manager.patch(`/api/sales/${s.s4.id}/paid`).expect(200);
  await refund(admin, s.s2, [{ itemId: stand.id, refundQty: 1 }]);
  await refund(admin, s.s3, [{ itemId: ethanol.id, refundQty: 1 }]);
  await refund(admin, s.s4, [{ itemId: beaker.id, refundQty: 1 }]);
  // a draft quote is not a sale
  await clerk
    .post('/api/sales/quotes')
    .send({ sessionId: 'finance-quote', chargeCode: 'CHEM-001', items: [{ itemId: beaker.id, quantity: 5 }] });
});
afterAll(() => t.close());

const RANGE = 'from=2025-07-01';

describe('GET /api/finance/recharges', () => {
  it('401 without a session', () => t.request.get('/api/finance/recharges').expect(401));

  it('403 for a user without finance.export, even a manager', async () => {
    await clerk.get('/api/finance/recharges').expect(403);
    const manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
    await manager.get('/api/finance/recharges').expect(403);
  });

  it('200 for an admin without the explicit permission', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    await admin.get(`/api/finance/recharges?${RANGE}`).expect(200);
  });

  it('200 per cost centre and charge code: net, VAT, gross after refunds, paid and unpaid (hand-computed)', async () => {
    const res = await finance.get(`/api/finance/recharges?${RANGE}`).expect(200);
    expect(res.body.filter).toEqual({ from: '2025-07-01', to: null, costCentre: null, chargeCode: null });
    expect(res.body.groups).toEqual([
      {
        costCentre: 'Chemistry',
        chargeCode: 'CHEM-001',
        sales: 2,
        net: '33.33',
        vat: '4.00',
        gross: '37.33',
        paid: '24.00',
        unpaid: '13.33',
      },
      {
        costCentre: 'Chemistry',
        chargeCode: 'CHEM-002',
        sales: 1,
        net: '6.66',
        vat: '1.33',
        gross: '7.99',
        paid: '0.00',
        unpaid: '7.99',
      },
      {
        costCentre: 'Physics',
        chargeCode: 'PHYS-001',
        sales: 1,
        net: '10.00',
        vat: '2.00',
        gross: '12.00',
        paid: '12.00',
        unpaid: '0.00',
      },
    ]);
    expect(res.body.totals).toEqual({
      sales: 4,
      net: '49.99',
      vat: '7.33',
      gross: '57.32',
      paid: '36.00',
      unpaid: '21.32',
    });
    expect(res.body).not.toHaveProperty('lines');
  });

  it('filters: to (a date covers its day), costCentre and chargeCode exact', async () => {
    const old = await finance.get('/api/finance/recharges?from=2025-06-15&to=2025-06-15').expect(200);
    expect(old.body.groups).toEqual([
      {
        costCentre: 'Physics',
        chargeCode: 'PHYS-001',
        sales: 1,
        net: '5.00',
        vat: '1.00',
        gross: '6.00',
        paid: '0.00',
        unpaid: '6.00',
      },
    ]);
    const chemistry = await finance.get(`/api/finance/recharges?${RANGE}&costCentre=Chemistry`).expect(200);
    expect(chemistry.body.groups.map((g: { chargeCode: string }) => g.chargeCode)).toEqual(['CHEM-001', 'CHEM-002']);
    expect(chemistry.body.totals).toEqual({
      sales: 3,
      net: '39.99',
      vat: '5.33',
      gross: '45.32',
      paid: '24.00',
      unpaid: '21.32',
    });
    const code = await finance.get('/api/finance/recharges?chargeCode=PHYS-001').expect(200);
    expect(code.body.totals).toEqual({
      sales: 2,
      net: '15.00',
      vat: '3.00',
      gross: '18.00',
      paid: '12.00',
      unpaid: '6.00',
    });
    const partial = await finance.get('/api/finance/recharges?chargeCode=PHYS').expect(200);
    expect(partial.body.groups).toEqual([]);
    expect(partial.body.totals).toEqual({
      sales: 0,
      net: '0.00',
      vat: '0.00',
      gross: '0.00',
      paid: '0.00',
      unpaid: '0.00',
    });
  });

  it('lines=true: one row per sale line, oldest sale first, paged', async () => {
    const res = await finance.get(`/api/finance/recharges?${RANGE}&lines=true&limit=3&page=2`).expect(200);
    expect(res.body.linesPagination).toEqual({ page: 2, limit: 3, total: 6, totalPages: 2 });
    // lines in order: s1 beaker | s2 stand, ethanol | s3 ethanol | s4 beaker, stand
    expect(res.body.lines).toEqual([
      {
        saleId: s.s3.saleId,
        date: expect.any(String),
        costCentre: 'Chemistry',
        chargeCode: 'CHEM-002',
        item: 'Ethanol',
        sku: 'ET-1',
        quantity: '3.00',
        unitPrice: '3.33',
        net: '9.99',
        vat: '2.00',
        gross: '11.99',
        refundedQuantity: '1.00',
        netAfterRefunds: '6.66',
        vatAfterRefunds: '1.33',
        grossAfterRefunds: '7.99',
      },
      expect.objectContaining({
        saleId: s.s4.saleId,
        item: 'Beaker',
        gross: '12.00',
        refundedQuantity: '1.00',
        grossAfterRefunds: '0.00',
        vatAfterRefunds: '0.00',
      }),
      expect.objectContaining({
        saleId: s.s4.saleId,
        item: 'Stand',
        net: '10.00',
        vat: '2.00',
        gross: '12.00',
        refundedQuantity: '0.00',
        grossAfterRefunds: '12.00',
      }),
    ]);
  });

  it('CSV: the groups and a Total row', async () => {
    const res = await finance.get(`/api/finance/recharges?${RANGE}&format=csv`).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    // named by the period: from the filter's from to its to (or today, the report running up to now)
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="recharges-2025-07-01_${new Date().toISOString().slice(0, 10)}.csv"`,
    );
    expect(parseCsv(res.text, { bom: true })).toEqual([
      ['Cost centre', 'Charge code', 'Sales', 'Net', 'VAT', 'Gross', 'Paid', 'Unpaid'],
      ['Chemistry', 'CHEM-001', '2', '33.33', '4.00', '37.33', '24.00', '13.33'],
      ['Chemistry', 'CHEM-002', '1', '6.66', '1.33', '7.99', '0.00', '7.99'],
      ['Physics', 'PHYS-001', '1', '10.00', '2.00', '12.00', '12.00', '0.00'],
      ['Total', '', '4', '49.99', '7.33', '57.32', '36.00', '21.32'],
    ]);
  });

  it('CSV with lines: every line and a Total row equal to the report', async () => {
    const res = await finance.get(`/api/finance/recharges?${RANGE}&format=csv&lines=true`).expect(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="recharges-lines-2025-07-01_${new Date().toISOString().slice(0, 10)}.csv"`,
    );
    const rows = parseCsv(res.text, { bom: true }) as string[][];
    expect(rows[0]).toEqual([
      'Date',
      'Sale',
      'Cost centre',
      'Charge code',
      'Item',
      'SKU',
      'Quantity',
      'Unit price',
      'Net',
      'VAT',
      'Gross',
      'Refunded quantity',
      'Net after refunds',
      'VAT after refunds',
      'Gross after refunds',
    ]);
    expect(rows.slice(1, -1).map((r) => [r[1], r[4], r[12], r[13], r[14]])).toEqual([
      [s.s1.saleId, 'Beaker', '20.00', '4.00', '24.00'],
      [s.s2.saleId, 'Stand', '10.00', '0.00', '10.00'],
      [s.s2.saleId, 'Ethanol', '3.33', '0.00', '3.33'],
      [s.s3.saleId, 'Ethanol', '6.66', '1.33', '7.99'],
      [s.s4.saleId, 'Beaker', '0.00', '0.00', '0.00'],
      [s.s4.saleId, 'Stand', '10.00', '2.00', '12.00'],
    ]);
    // as sold: 20 + 18.33 + 9.99 + 20 = 68.32 net, 4 + 0 + 2 + 4 = 10 VAT, 78.32 gross
    expect(rows.at(-1)).toEqual([
      'Total',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '68.32',
      '10.00',
      '78.32',
      '',
      '49.99',
      '7.33',
      '57.32',
    ]);
  });

  it('CSV is formula-safe: text cells starting with = + - @ get a leading apostrophe, amounts stay numbers', async () => {
    const groupsCsv = await finance
      .get('/api/finance/recharges?to=2024-12-31&format=csv')
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    // UTF-8 with a byte order mark, so that Excel reads it as UTF-8; named by the period, from the start
    expect([...(groupsCsv.body as Buffer).subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(groupsCsv.headers['content-disposition']).toBe('attachment; filename="recharges-start_2024-12-31.csv"');
    const groups = parseCsv(groupsCsv.body as Buffer, { bom: true }) as string[][];
    expect(groups[1]).toEqual(["'=cmd", 'FORM-001', '1', '7.50', '0.00', '7.50', '0.00', '7.50']);
    const lines = parseCsv(
      (await finance.get('/api/finance/recharges?to=2024-12-31&format=csv&lines=true').expect(200)).text,
      { bom: true },
    ) as string[][];
    expect(lines[1].slice(2, 6)).toEqual(["'=cmd", 'FORM-001', "'@SUM(A1)", "'+SKU"]);
  });

  it('XLSX: a Recharges sheet with Total, a Lines sheet with lines=true; numbers are number cells, text formula-safe', async () => {
    const res = await finance
      .get(`/api/finance/recharges?${RANGE}&format=xlsx&lines=true`)
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="recharges-lines-2025-07-01_${new Date().toISOString().slice(0, 10)}.xlsx"`,
    );
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.body as never);
    const summary = workbook.getWorksheet('Recharges')!;
    expect(summary.getRow(1).values).toEqual([
      undefined,
      'Cost centre',
      'Charge code',
      'Sales',
      'Net',
      'VAT',
      'Gross',
      'Paid',
      'Unpaid',
    ]);
    expect(summary.getRow(5).values).toEqual([undefined, 'Total', undefined, 4, 49.99, 7.33, 57.32, 36, 21.32]);
    const lines = workbook.getWorksheet('Lines')!;
    expect(lines.rowCount).toBe(8);
    expect(lines.getRow(5).getCell(15).value).toBe(7.99);

    const safe = await finance
      .get('/api/finance/recharges?to=2024-12-31&format=xlsx')
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(safe.body as never);
    expect(book.getWorksheet('Recharges')!.getRow(2).getCell(1).value).toBe("'=cmd");
    expect(book.getWorksheet('Lines')).toBeUndefined();
  });

  it('400 names each invalid field', async () => {
    const res = await finance.get('/api/finance/recharges?from=yesterday&format=pdf&lines=maybe').expect(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['format', 'from', 'lines']);
  });
});

describe('GET /api/docs', () => {
  it('documents the finance routes, their access and their schemas', async () => {
    const doc = (await t.request.get('/api/docs').expect(200)).body;
    const paths = [
      ['/api/finance/recharges', 'get'],
      ['/api/finance/recharge-batches', 'get'],
      ['/api/finance/recharge-batches', 'post'],
      ['/api/finance/recharge-batches/{batch}', 'get'],
      ['/api/finance/recharge-batches/{batch}/journal', 'get'],
    ];
    for (const [path, method] of paths) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.description).toContain('Requires permission `finance.export`');
      expect(op.tags).toEqual(['Finance']);
    }
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['RechargeReport', 'RechargeBatch', 'RechargeBatchList', 'RechargeBatchClosed']),
    );
    expect(doc.paths['/api/finance/recharge-batches/{batch}/journal'].get.responses['200'].content).toHaveProperty(
      'text/csv',
    );
  });
});
