import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import { buildChargeCode } from './helpers/sales-factories';

let t: TestApp;
let user: supertest.Agent;
type Sold = { id: number; saleId: string };
const s: Record<'ada' | 'grace' | 'tips', Sold> = {} as never;

// Three sales, oldest first:
//  ada   SRCH-A  1 x GLS-BK-250 "Beaker 250 ml"       to Ada Lovelace <ada@maths.example.ac.uk>
//  grace SRCH-B  1 x PIP-TIP-200 "Pipette tips 200 µl" to Grace Hopper <grace@cs.example.ac.uk>
//  tips  SRCH-A  1 x PIP-TIP-200 "Pipette tips 200 µl" no recipient
beforeAll(async () => {
  t = await testApp();
  user = await t.loginAs(await buildUser(t.db));
  await buildChargeCode(t.db, { code: 'SRCH-A' });
  await buildChargeCode(t.db, { code: 'SRCH-B' });
  const beaker = await buildItem(t.db, { sku: 'GLS-BK-250', name: 'Beaker 250 ml', currentStock: 10 });
  const tips = await buildItem(t.db, { sku: 'PIP-TIP-200', name: 'Pipette tips 200 µl', currentStock: 10 });
  const sell = async (
    chargeCode: string,
    itemId: number,
    recipient?: { deliveredTo: string; deliveredToEmail: string },
  ) => {
    const { sale } = (
      await user
        .post('/api/sales')
        .send({ chargeCode, items: [{ itemId, quantity: 1 }] })
        .expect(201)
    ).body;
    if (recipient) await user.patch(`/api/sales/${sale.id}/recipient`).send(recipient).expect(200);
    return { id: sale.id as number, saleId: sale.saleId as string };
  };
  s.ada = await sell('SRCH-A', beaker.id, { deliveredTo: 'Ada Lovelace', deliveredToEmail: 'ada@maths.example.ac.uk' });
  s.grace = await sell('SRCH-B', tips.id, { deliveredTo: 'Grace Hopper', deliveredToEmail: 'grace@cs.example.ac.uk' });
  s.tips = await sell('SRCH-A', tips.id);
});
afterAll(() => t.close());

/** The sale numbers GET /api/sales answers for the query, newest first, and its total. */
async function found(query: Record<string, string>) {
  const res = await user.get('/api/sales').query(query).expect(200);
  return {
    saleIds: res.body.sales.map((sale: { saleId: string }) => sale.saleId) as string[],
    total: res.body.pagination.total as number,
  };
}

describe('GET /api/sales?search=', () => {
  it('200 finds a sale by its number, exact or by prefix, in any case', async () => {
    expect(await found({ search: s.grace.saleId })).toEqual({ saleIds: [s.grace.saleId], total: 1 });
    expect(await found({ search: s.ada.saleId.toLowerCase() })).toEqual({ saleIds: [s.ada.saleId], total: 1 });
    const prefix = s.ada.saleId.slice(0, s.ada.saleId.lastIndexOf('-') + 1).toLowerCase(); // "sale-20261126-"
    expect(await found({ search: prefix })).toEqual({
      saleIds: [s.tips.saleId, s.grace.saleId, s.ada.saleId],
      total: 3,
    });
    // a number is matched from its start: its day alone is not a sale number
    expect(await found({ search: s.ada.saleId.slice(5, 13) })).toEqual({ saleIds: [], total: 0 });
  });

  it("200 finds a sale by part of its recipient's name or email", async () => {
    expect(await found({ search: 'lovel' })).toEqual({ saleIds: [s.ada.saleId], total: 1 });
    expect(await found({ search: 'CS.EXAMPLE' })).toEqual({ saleIds: [s.grace.saleId], total: 1 });
  });

  it("200 finds a sale by part of any line's item SKU or name", async () => {
    expect(await found({ search: 'bk-25' })).toEqual({ saleIds: [s.ada.saleId], total: 1 });
    expect(await found({ search: 'pipette' })).toEqual({ saleIds: [s.tips.saleId, s.grace.saleId], total: 2 });
    expect(await found({ search: '200 µl' })).toEqual({ saleIds: [s.tips.saleId, s.grace.saleId], total: 2 });
  });

  it('200 combines the search with the filters of the list, paged', async () => {
    expect(await found({ search: 'pipette', chargeCode: 'srch-b' })).toEqual({ saleIds: [s.grace.saleId], total: 1 });
    const today = new Date().toISOString().slice(0, 10);
    expect(await found({ search: 'pipette', startDate: today, endDate: today, limit: '1' })).toEqual({
      saleIds: [s.tips.saleId],
      total: 2,
    });
    expect(await found({ search: 'pipette', endDate: '2020-01-01' })).toEqual({ saleIds: [], total: 0 });
  });

  it('200 takes the characters of a LIKE pattern literally; an empty search is no search', async () => {
    expect(await found({ search: '%' })).toEqual({ saleIds: [], total: 0 });
    expect(await found({ search: 'GLS_BK' })).toEqual({ saleIds: [], total: 0 });
    expect((await found({ search: '' })).total).toBe(3);
  });

  it('400 for a search longer than 200 characters', async () => {
    const res = await user
      .get('/api/sales')
      .query({ search: 'x'.repeat(201) })
      .expect(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: 'search' }));
  });
});

describe('GET /api/sales/reports?search=', () => {
  it('200 the report and its figures cover the sales the search finds', async () => {
    const res = await user.get('/api/sales/reports').query({ search: 'pipette' }).expect(200);
    expect(res.body.data.summary).toEqual({ totalSales: 2, totalAmount: expect.any(Number), uniqueChargeCodes: 2 });
    expect(res.body.data.sales.map((sale: { saleId: string }) => sale.saleId)).toEqual([s.tips.saleId, s.grace.saleId]);
    const csv = await user.get('/api/sales/reports').query({ search: 'lovelace', format: 'csv' }).expect(200);
    const rows = csv.text.trim().split('\n').slice(1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(s.ada.saleId);
  });
});
