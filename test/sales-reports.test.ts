import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';

let t: TestApp;
let user: supertest.Agent;
let manager: supertest.Agent;
const ids: Record<string, number> = {};
let items: { a: { id: number }; b: { id: number } };

// Fixture: three sales on two departments, one dated in 2025, one paid, one with a partial refund.
beforeAll(async () => {
  t = await testApp();
  const clerk = await buildUser(t.db, { firstName: 'Ann', lastName: 'Teller' });
  user = await t.loginAs(clerk);
  manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  await buildChargeCode(t.db, { code: 'CHEM-001', costCentre: 'Chemistry' });
  await buildChargeCode(t.db, { code: 'CHEM-002', costCentre: 'Chemistry' });
  await buildChargeCode(t.db, { code: 'PHYS-001', costCentre: 'Physics' });
  items = {
    a: await buildItem(t.db, {
      name: 'Beaker, 250 "ml"',
      sku: 'BK-250',
      price: '10.00',
      currentStock: 100,
      minimumStock: 0,
    }),
    b: await buildItem(t.db, { name: 'Stand', sku: 'ST-1', price: '5.00', currentStock: 100 }),
  };
  const sell = async (chargeCode: string, lines: { itemId: number; quantity: number }[], customerNotes?: string) =>
    (await user.post('/api/sales').send({ chargeCode, items: lines, customerNotes }).expect(201)).body.sale;
  const s1 = await sell('CHEM-001', [{ itemId: items.a.id, quantity: 2 }], 'Lab, "urgent"');
  const s2 = await sell('CHEM-002', [
    { itemId: items.b.id, quantity: 1 },
    { itemId: items.a.id, quantity: 1 },
  ]);
  const s3 = await sell('PHYS-001', [{ itemId: items.b.id, quantity: 4 }]);
  Object.assign(ids, { s1: s1.id, s2: s2.id, s3: s3.id });
  await t
    .db('sales')
    .where({ id: s1.id })
    .update({ created_at: new Date('2025-06-15T10:00:00Z') });
  await manager.patch(`/api/sales/${s2.id}/paid`).expect(200);
  await user
    .patch(`/api/sales/${s1.id}/recipient`)
    .send({ deliveredTo: 'Dr Jones', deliveredToEmail: 'jones@example.ac.uk' })
    .expect(200);
  const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
  await admin
    .patch(`/api/sales/${s3.id}/refund`)
    .send({ items: [{ itemId: items.b.id, refundQty: 1 }] })
    .expect(200);
});
afterAll(() => t.close());

describe('GET /api/sales/reports', () => {
  it('200 JSON report: summary, departmentSummary, sales in report form, pagination', async () => {
    const res = await user.get('/api/sales/reports').expect(200);
    // s1 24.00, s2 18.00, s3 24.00
    expect(res.body.success).toBe(true);
    expect(res.body.data.summary).toEqual({ totalSales: 3, totalAmount: 66, uniqueChargeCodes: 3 });
    expect(res.body.data.departmentSummary).toEqual([
      { department: 'Chemistry', totalSales: 2, totalAmount: 42 },
      { department: 'Physics', totalSales: 1, totalAmount: 24 },
    ]);
    expect(res.body.data.pagination).toEqual({ page: 1, limit: 50, total: 3, totalPages: 1 });
    const sales = res.body.data.sales;
    expect(sales.map((s: { id: number }) => s.id)).toEqual([ids.s3, ids.s2, ids.s1]);
    expect(sales[1]).toMatchObject({
      saleId: expect.stringMatching(/^SALE-/),
      chargeCode: 'CHEM-002',
      totalAmount: '18.00',
      total: 18,
      status: 'paid',
      isPaid: true,
      processedBy: { firstName: 'Ann', lastName: 'Teller' },
      items: [
        { itemName: 'Stand', itemSku: 'ST-1', quantity: '1.00', unitPrice: '5.00' },
        { itemName: 'Beaker, 250 "ml"', itemSku: 'BK-250', quantity: '1.00', unitPrice: '10.00' },
      ],
    });
    expect(sales[1].processedBy).not.toHaveProperty('email');
  });

  it('filters: chargeCode partial, inclusive dates, unpaidOnly, paging', async () => {
    const chem = await user.get('/api/sales/reports').query({ chargeCode: 'chem' }).expect(200);
    expect(chem.body.data.summary).toMatchObject({ totalSales: 2, uniqueChargeCodes: 2 });
    const day = await user
      .get('/api/sales/reports')
      .query({ startDate: '2025-06-15', endDate: '2025-06-15' })
      .expect(200);
    expect(day.body.data.sales.map((s: { id: number }) => s.id)).toEqual([ids.s1]);
    const after = await user.get('/api/sales/reports').query({ startDate: '2025-06-16' }).expect(200);
    expect(after.body.data.summary.totalSales).toBe(2);
    const unpaid = await user.get('/api/sales/reports').query({ unpaidOnly: 'true' }).expect(200);
    expect(unpaid.body.data.sales.map((s: { id: number }) => s.id)).toEqual([ids.s3, ids.s1]);
    const page2 = await user.get('/api/sales/reports').query({ limit: 2, page: 2 }).expect(200);
    expect(page2.body.data.sales.map((s: { id: number }) => s.id)).toEqual([ids.s1]);
    expect(page2.body.data.pagination).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 });
    expect(page2.body.data.summary.totalSales).toBe(3);
  });

  it('400 bad parameters; 401 anonymous', async () => {
    await user.get('/api/sales/reports').query({ limit: 101 }).expect(400);
    await user.get('/api/sales/reports').query({ format: 'xml' }).expect(400);
    await user.get('/api/sales/reports').query({ unpaidOnly: 'maybe' }).expect(400);
    await t.request.get('/api/sales/reports').expect(401);
  });

  it('200 CSV: exact header, every value quoted, read back', async () => {
    const res = await user
      .get('/api/sales/reports')
      .query({ format: 'csv' })
      .buffer(true)
      .parse((r, cb) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (text += c));
        r.on('end', () => cb(null, text));
      })
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/attachment; filename="sales-report-\d{8}\.csv"/);
    const text = res.body as string;
    const [header, ...lines] = text.trimEnd().split('\n');
    expect(header).toBe('Sale ID,Charge Code,Total Amount,Customer Info,Notes,Status,Processed By,Date,Items Count');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(/^"[^]*"$/);
    const rows = parseCsv(text, { columns: true }) as Record<string, string>[];
    const s1 = rows.find((r) => r['Charge Code'] === 'CHEM-001')!;
    expect(s1).toEqual({
      'Sale ID': expect.stringMatching(/^SALE-/),
      'Charge Code': 'CHEM-001',
      'Total Amount': '24.00',
      'Customer Info': 'Dr Jones <jones@example.ac.uk>',
      Notes: 'Lab, "urgent"',
      Status: 'completed',
      'Processed By': 'Ann Teller',
      Date: '2025-06-15T10:00:00.000Z',
      'Items Count': '1',
    });
    expect(rows.find((r) => r['Charge Code'] === 'CHEM-002')!['Items Count']).toBe('2');
    expect(rows.find((r) => r['Charge Code'] === 'PHYS-001')!.Status).toBe('partially_refunded');

    const filtered = await user.get('/api/sales/reports').query({ format: 'csv', chargeCode: 'PHYS' }).expect(200);
    expect(filtered.text.trimEnd().split('\n')).toHaveLength(2);
  });
});

describe('GET /api/sales/analytics/most-sold-items', () => {
  it('200 by quantity net of refunds', async () => {
    const res = await user.get('/api/sales/analytics/most-sold-items').expect(200);
    expect(res.body.items).toEqual([
      { itemId: items.b.id, itemName: 'Stand', itemSku: 'ST-1', totalQuantity: 4, totalRevenue: 20, salesCount: 2 },
      {
        itemId: items.a.id,
        itemName: 'Beaker, 250 "ml"',
        itemSku: 'BK-250',
        totalQuantity: 3,
        totalRevenue: 30,
        salesCount: 2,
      },
    ]);
    const week = await user.get('/api/sales/analytics/most-sold-items').query({ period: 'week', limit: 1 }).expect(200);
    expect(week.body.items).toEqual([expect.objectContaining({ itemId: items.b.id, totalQuantity: 4 })]);
    const weekA = await user.get('/api/sales/analytics/most-sold-items').query({ period: 'week' }).expect(200);
    expect(weekA.body.items[1]).toMatchObject({ itemId: items.a.id, totalQuantity: 1 });
    await user.get('/api/sales/analytics/most-sold-items').query({ period: 'decade' }).expect(400);
  });
});

describe('POST /api/sales/stock-check', () => {
  it('200 availability per line, summed per item', async () => {
    const low = await buildItem(t.db, { currentStock: 3 });
    const res = await user
      .post('/api/sales/stock-check')
      .send({
        items: [
          { itemId: low.id, quantity: 2 },
          { itemId: items.a.id, quantity: 1 },
        ],
      })
      .expect(200);
    expect(res.body).toEqual({
      allAvailable: true,
      items: [
        { itemId: low.id, itemName: expect.any(String), available: true, currentStock: 3, requested: 2 },
        { itemId: items.a.id, itemName: 'Beaker, 250 "ml"', available: true, currentStock: 97, requested: 1 },
      ],
    });
    const short = await user
      .post('/api/sales/stock-check')
      .send({
        items: [
          { itemId: low.id, quantity: 2 },
          { itemId: low.id, quantity: 2 },
          { itemId: 999999, quantity: 1 },
        ],
      })
      .expect(200);
    expect(short.body.allAvailable).toBe(false);
    expect(short.body.items.map((i: { available: boolean }) => i.available)).toEqual([false, false, false]);
    await user.post('/api/sales/stock-check').send({ items: [] }).expect(400);
  });
});

describe('GET /api/sales/low-stock-report', () => {
  it('200 active items at or below minimum', async () => {
    const low = await buildItem(t.db, { name: 'Low one', currentStock: 1, minimumStock: 5 });
    await buildItem(t.db, { name: 'Low inactive', currentStock: 1, minimumStock: 5, isActive: false });
    const res = await user.get('/api/sales/low-stock-report').expect(200);
    const entry = res.body.items.find((i: { id: number }) => i.id === low.id);
    expect(entry).toMatchObject({
      name: 'Low one',
      currentStock: 1,
      minimumStock: 5,
      shortfall: 4,
      category: { id: expect.any(Number) },
    });
    expect(res.body.items.some((i: { name: string }) => i.name === 'Low inactive')).toBe(false);
    expect(res.body.total).toBe(res.body.items.length);
  });
});

describe('MCP analytics', () => {
  it('GET /api/mcp/charge-code-analytics: spending net of refunds per code and month', async () => {
    const res = await user.get('/api/mcp/charge-code-analytics').expect(200);
    // net: s1 24, s2 18, s3 24 - 6 = 18
    expect(res.body.totalSpending).toBe(60);
    expect(res.body.chargeCodeBreakdown).toEqual([
      { code: 'CHEM-001', spent: 24, percentage: 40, salesCount: 1 },
      { code: 'CHEM-002', spent: 18, percentage: 30, salesCount: 1 },
      { code: 'PHYS-001', spent: 18, percentage: 30, salesCount: 1 },
    ]);
    const month = new Date().toISOString().slice(0, 7);
    expect(res.body.monthlyTrends).toEqual([
      { month: '2025-06', spending: 24 },
      { month, spending: 36 },
    ]);
  });

  it('GET /api/mcp/top-sellers and /api/mcp/department-performance', async () => {
    const top = await user.get('/api/mcp/top-sellers').query({ limit: 1 }).expect(200);
    expect(top.body).toEqual({
      period: 'all',
      items: [expect.objectContaining({ itemId: items.b.id, totalQuantity: 4 })],
    });
    const dept = await user.get('/api/mcp/department-performance').expect(200);
    expect(dept.body.departments).toEqual([
      {
        department: 'Chemistry',
        totalSales: 2,
        totalAmount: 42,
        refundedAmount: 0,
        netAmount: 42,
        averageSale: 21,
        chargeCodes: 2,
      },
      {
        department: 'Physics',
        totalSales: 1,
        totalAmount: 24,
        refundedAmount: 6,
        netAmount: 18,
        averageSale: 24,
        chargeCodes: 1,
      },
    ]);
  });

  it('open to a bearer token; 401 anonymous', async () => {
    const token = (await user.post('/api/auth/tokens').send({ name: 'mcp' }).expect(201)).body.token as string;
    await t.request.get('/api/mcp/charge-code-analytics').set('Authorization', `Bearer ${token}`).expect(200);
    for (const path of ['charge-code-analytics', 'top-sellers', 'department-performance']) {
      await t.request.get(`/api/mcp/${path}`).expect(401);
    }
  });
});

describe('GET /api/sales/reports?format=csv across batches', () => {
  it('streams every sale exactly once when many share a timestamp', async () => {
    await buildChargeCode(t.db, { code: 'BULKCSV-1' });
    await t.db.raw(
      `INSERT INTO sales (sale_id, charge_code, subtotal_amount, vat_amount, total_amount, created_at)
       SELECT 'SALE-CSV-' || g, 'BULKCSV-1', 1, 0, 1, timestamptz '2026-03-01 10:00:00.123456+00' + (g % 3) * interval '1 microsecond'
         FROM generate_series(1, 4500) g`,
    );
    try {
      const res = await user.get('/api/sales/reports').query({ format: 'csv', chargeCode: 'BULKCSV' }).expect(200);
      const rows = parseCsv(res.text, { columns: true }) as Record<string, string>[];
      expect(rows).toHaveLength(4500);
      expect(new Set(rows.map((r) => r['Sale ID'])).size).toBe(4500);
    } finally {
      // the analytics tests of this file count every sale
      await t.db('sales').where({ charge_code: 'BULKCSV-1' }).delete();
    }
  });
});
