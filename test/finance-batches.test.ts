import { parse as parseCsv } from 'csv-parse/sync';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { D } from '../src/lib/money';
import { testApp, type TestApp } from './helpers/app';
import { binaryBody } from './helpers/binary-body';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { recordedAt, refund, refundsRecordedAt, sell, type SoldSale } from './helpers/finance-factories';
import { buildChargeCode, grantPermission } from './helpers/sales-factories';

let t: TestApp;
let finance: supertest.Agent;
let clerk: supertest.Agent;
let admin: supertest.Agent;
let financeEmail: string;
const items: Record<string, { id: number }> = {};
const s: Record<string, SoldSale> = {};

const thisMonth = () => new Date().toISOString().slice(0, 7).replace('-', '');
const nowIso = () => new Date().toISOString();
const batchCount = async () => Number((await t.db('recharge_batches').count('* as count'))[0].count);
type Entry = {
  kind: string;
  sale_number: string;
  net_amount: string;
  vat_amount: string;
  gross_amount: string;
  cost_centre: string;
};
const entriesOf = async (batchId: number): Promise<Entry[]> =>
  t
    .db('recharge_batch_entries')
    .where({ batch_id: batchId })
    .orderBy('id')
    .select('kind', 'sale_number', 'net_amount', 'vat_amount', 'gross_amount', 'cost_centre');

// Hand-computed fixture (VAT 20% unless off):
//  o1 CHEM-001 recorded 2026-10-31T23:59:59Z: 1 x Beaker 10.00       net 10.00 VAT 2.00 gross 12.00
//  o2 PHYS-001 recorded 2026-11-01T00:00:00Z: 1 x Stand 5.00         net 5.00 VAT 1.00 gross 6.00
//  s1 CHEM-001: 2 x Beaker                                           net 20.00 VAT 4.00 gross 24.00
//  s2 CHEM-001 VAT off: 3 x Stand, 1 x Ethanol 3.33                  net 18.33 VAT 0 gross 18.33; 1 Stand refunded before
//                                                                    the close: refund entry -5.00 / 0 / -5.00
//  s3 PHYS-001: 3 x Ethanol                                          net 9.99 VAT 2.00 gross 11.99
beforeAll(async () => {
  t = await testApp();
  const financeUser = await buildUser(t.db);
  financeEmail = financeUser.email;
  await grantPermission(t.db, financeUser.id, 'finance.export');
  finance = await t.loginAs(financeUser);
  clerk = await t.loginAs(await buildUser(t.db));
  admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
  await buildChargeCode(t.db, { code: 'CHEM-001', costCentre: 'Chemistry' });
  await buildChargeCode(t.db, { code: 'PHYS-001', costCentre: 'Physics' });
  items.beaker = await buildItem(t.db, { name: 'Beaker', price: '10.00', vatRate: '0.2000', currentStock: 1000 });
  items.stand = await buildItem(t.db, { name: 'Stand', price: '5.00', vatRate: '0.2000', currentStock: 1000 });
  items.ethanol = await buildItem(t.db, { name: 'Ethanol', price: '3.33', vatRate: '0.2000', currentStock: 1000 });
});
afterAll(() => t.close());

describe('POST /api/finance/recharge-batches', () => {
  it('401 anonymous, 403 without finance.export', async () => {
    await t.request.post('/api/finance/recharge-batches').send({ to: '2026-10-31' }).expect(401);
    await clerk.post('/api/finance/recharge-batches').send({ to: '2026-10-31' }).expect(403);
    await clerk.get('/api/finance/recharge-batches').expect(403);
  });

  it('400 without to, with a malformed to, or a to in the future; nothing written', async () => {
    expect((await finance.post('/api/finance/recharge-batches').send({}).expect(400)).body.errors[0].field).toBe('to');
    await finance.post('/api/finance/recharge-batches').send({ to: 'November' }).expect(400);
    const future = await finance
      .post('/api/finance/recharge-batches')
      .send({ to: new Date(Date.now() + 3_600_000).toISOString() })
      .expect(400);
    expect(future.body.errors).toEqual([{ field: 'to', message: 'must not be in the future' }]);
    expect(await batchCount()).toBe(0);
  });

  it('409 when nothing is left to close; no batch is created', async () => {
    const res = await finance.post('/api/finance/recharge-batches').send({ to: '2026-10-31' }).expect(409);
    expect(res.body.message).toBe(
      'Nothing to close: every sale and refund recorded before 2026-11-01T00:00:00.000Z is already in a batch',
    );
    expect(await batchCount()).toBe(0);
  });

  it('201 a date closes through the end of its UTC day (to is exclusive of the next midnight); numbered by that month', async () => {
    s.o1 = await sell(clerk, 'CHEM-001', [{ itemId: items.beaker.id, quantity: 1 }]);
    s.o2 = await sell(clerk, 'PHYS-001', [{ itemId: items.stand.id, quantity: 1 }]);
    await recordedAt(t.db, s.o1, '2026-10-31T23:59:59Z');
    await recordedAt(t.db, s.o2, '2026-11-01T00:00:00Z');
    const res = await finance.post('/api/finance/recharge-batches').send({ to: '2026-10-31' }).expect(201);
    expect(res.body).toEqual({
      message: 'Recharge batch RC-202610-1 closed: 1 sales, 0 refund adjustments, gross 12.00',
      batch: {
        id: expect.any(Number),
        number: 'RC-202610-1',
        recordedBefore: '2026-11-01T00:00:00.000Z',
        closedAt: expect.any(String),
        closedBy: financeEmail,
        sales: 1,
        refunds: 0,
        net: '10.00',
        vat: '2.00',
        gross: '12.00',
        costCentres: [
          {
            costCentre: 'Chemistry',
            sales: 1,
            refunds: 0,
            net: '10.00',
            vat: '2.00',
            gross: '12.00',
            chargeCodes: [{ chargeCode: 'CHEM-001', sales: 1, refunds: 0, net: '10.00', vat: '2.00', gross: '12.00' }],
          },
        ],
      },
    });
    expect((await entriesOf(res.body.batch.id)).map((e) => e.sale_number)).toEqual([s.o1.saleId]);
    // the close is in the audit trail, in the same transaction
    const audit = await t
      .db('audit_log')
      .where({ entity_type: 'recharge_batch', entity_id: String(res.body.batch.id) })
      .first();
    expect(audit).toMatchObject({
      action: 'close',
      actor_email: financeEmail,
      after: expect.objectContaining({ number: 'RC-202610-1', gross: '12.00', sales: 1, refunds: 0 }),
    });
  });

  it('201 every sale and refund in no batch yet: sales as sold, a refund as a negative entry; hand-computed totals per cost centre', async () => {
    s.s1 = await sell(clerk, 'CHEM-001', [{ itemId: items.beaker.id, quantity: 2 }]);
    s.s2 = await sell(
      clerk,
      'CHEM-001',
      [
        { itemId: items.stand.id, quantity: 3 },
        { itemId: items.ethanol.id, quantity: 1 },
      ],
      { vatApplied: false },
    );
    s.s3 = await sell(clerk, 'PHYS-001', [{ itemId: items.ethanol.id, quantity: 3 }]);
    await refund(admin, s.s2, [{ itemId: items.stand.id, refundQty: 1 }]);
    const res = await admin.post('/api/finance/recharge-batches').send({ to: nowIso() }).expect(201);
    const batch = res.body.batch;
    // o2 6.00 + s1 24.00 + s2 18.33 - 5.00 + s3 11.99 = 55.32 gross; net 5 + 20 + 18.33 - 5 + 9.99 = 48.32; VAT 1 + 4 + 0 + 0 + 2 = 7.00
    expect(batch).toMatchObject({
      number: `RC-${thisMonth()}-1`,
      sales: 4,
      refunds: 1,
      net: '48.32',
      vat: '7.00',
      gross: '55.32',
    });
    expect(batch.costCentres).toEqual([
      {
        costCentre: 'Chemistry',
        sales: 2,
        refunds: 1,
        net: '33.33',
        vat: '4.00',
        gross: '37.33',
        chargeCodes: [{ chargeCode: 'CHEM-001', sales: 2, refunds: 1, net: '33.33', vat: '4.00', gross: '37.33' }],
      },
      {
        costCentre: 'Physics',
        sales: 2,
        refunds: 0,
        net: '14.99',
        vat: '3.00',
        gross: '17.99',
        chargeCodes: [{ chargeCode: 'PHYS-001', sales: 2, refunds: 0, net: '14.99', vat: '3.00', gross: '17.99' }],
      },
    ]);
    const entries = await entriesOf(batch.id);
    expect(entries.find((e) => e.kind === 'refund')).toMatchObject({
      sale_number: s.s2.saleId,
      net_amount: '-5.00',
      vat_amount: '0.00',
      gross_amount: '-5.00',
    });
    expect(
      entries
        .filter((e) => e.kind === 'sale')
        .map((e) => e.sale_number)
        .sort(),
    ).toEqual([s.o2.saleId, s.s1.saleId, s.s2.saleId, s.s3.saleId].sort());
  });

  it('a refund recorded after its sale was batched lands in the next batch as a negative adjustment; the earlier batch is unchanged', async () => {
    const before = (await finance.get(`/api/finance/recharge-batches/RC-${thisMonth()}-1`).expect(200)).body;
    // 1 of 3 Ethanol on s3 (net 9.99, gross 11.99): gross round(11.99 / 3) = 4.00, net round(9.99 / 3) = 3.33, VAT 0.67
    await refund(admin, s.s3, [{ itemId: items.ethanol.id, refundQty: 1 }]);
    s.s4 = await sell(clerk, 'CHEM-001', [{ itemId: items.stand.id, quantity: 1 }]);
    const res = await finance.post('/api/finance/recharge-batches').send({ to: nowIso() }).expect(201);
    expect(res.body.batch).toMatchObject({
      number: `RC-${thisMonth()}-2`,
      sales: 1,
      refunds: 1,
      net: '1.67',
      vat: '0.33',
      gross: '2.00',
    });
    const entries = await entriesOf(res.body.batch.id);
    expect(entries).toEqual([
      expect.objectContaining({
        kind: 'sale',
        sale_number: s.s4.saleId,
        net_amount: '5.00',
        vat_amount: '1.00',
        gross_amount: '6.00',
        cost_centre: 'Chemistry',
      }),
      expect.objectContaining({
        kind: 'refund',
        sale_number: s.s3.saleId,
        net_amount: '-3.33',
        vat_amount: '-0.67',
        gross_amount: '-4.00',
        cost_centre: 'Physics',
      }),
    ]);
    const after = (await finance.get(`/api/finance/recharge-batches/RC-${thisMonth()}-1`).expect(200)).body;
    expect(after).toEqual(before);
    // everything is batched now
    await finance.post('/api/finance/recharge-batches').send({ to: nowIso() }).expect(409);
  });

  it('a refund is dated when it was recorded: one recorded after `to` waits for a later batch, even when its sale is taken', async () => {
    s.s5 = await sell(clerk, 'PHYS-001', [{ itemId: items.beaker.id, quantity: 2 }]);
    await refund(admin, s.s5, [{ itemId: items.beaker.id, refundQty: 1 }]);
    const cut = nowIso();
    await refundsRecordedAt(t.db, s.s5, new Date(Date.now() + 1000).toISOString());
    const first = await finance.post('/api/finance/recharge-batches').send({ to: cut }).expect(201);
    expect(first.body.batch).toMatchObject({ sales: 1, refunds: 0, gross: '24.00' });
    await refundsRecordedAt(t.db, s.s5, cut); // at `to` exactly: still after the (exclusive) end of the first
    const second = await finance.post('/api/finance/recharge-batches').send({ to: nowIso() }).expect(201);
    expect(second.body.batch).toMatchObject({ sales: 0, refunds: 1, net: '-10.00', vat: '-2.00', gross: '-12.00' });
  });

  it('batches are immutable: the database refuses to update or delete a batch or an entry', async () => {
    const [batch] = await t.db('recharge_batches').select('id').limit(1);
    await expect(t.db('recharge_batches').where({ id: batch.id }).update({ gross_amount: '0' })).rejects.toThrow(
      /immutable/,
    );
    await expect(t.db('recharge_batches').where({ id: batch.id }).del()).rejects.toThrow(/immutable/);
    await expect(
      t.db('recharge_batch_entries').where({ batch_id: batch.id }).update({ net_amount: '0' }),
    ).rejects.toThrow(/immutable/);
    await expect(t.db('recharge_batch_entries').where({ batch_id: batch.id }).del()).rejects.toThrow(/immutable/);
    await expect(t.db('sale_refund_lines').whereNotNull('batch_id').update({ batch_id: null })).rejects.toThrow(
      /immutable/,
    );
  });
});

describe('two concurrent closes', () => {
  it('never put a sale in two batches: one closes, the other finds nothing left (409)', async () => {
    const sold: SoldSale[] = [];
    for (let i = 0; i < 12; i += 1)
      sold.push(await sell(clerk, i % 2 ? 'CHEM-001' : 'PHYS-001', [{ itemId: items.stand.id, quantity: 1 }]));
    await refund(admin, sold[0], [{ itemId: items.stand.id, refundQty: 1 }]);
    const to = nowIso();
    const results = await Promise.all([1, 2, 3].map(() => finance.post('/api/finance/recharge-batches').send({ to })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    const closed = results.find((r) => r.status === 201)!.body.batch;
    expect(closed).toMatchObject({ sales: 12, refunds: 1, gross: '66.00' });
  });

  it('with different ends, they queue: each sale is in exactly one batch', async () => {
    const sold: SoldSale[] = [];
    for (let i = 0; i < 8; i += 1) sold.push(await sell(clerk, 'CHEM-001', [{ itemId: items.beaker.id, quantity: 1 }]));
    const middle = nowIso();
    for (let i = 0; i < 8; i += 1) sold.push(await sell(clerk, 'PHYS-001', [{ itemId: items.beaker.id, quantity: 1 }]));
    const end = nowIso();
    const results = await Promise.all(
      [middle, end].map((to) => finance.post('/api/finance/recharge-batches').send({ to })),
    );
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    const counted = await t
      .db('recharge_batch_entries')
      .whereIn(
        'sale_ref',
        sold.map((x) => x.id),
      )
      .where({ kind: 'sale' })
      .select('sale_ref');
    expect(counted.map((c) => c.sale_ref).sort((a, b) => a - b)).toEqual(sold.map((x) => x.id).sort((a, b) => a - b));
    const { rows } = await t.db.raw(
      `SELECT count(*)::int AS n FROM sales s WHERE NOT EXISTS (SELECT 1 FROM recharge_batch_entries e WHERE e.kind = 'sale' AND e.sale_ref = s.id)`,
    );
    expect(rows[0].n).toBe(0);
  });
});

describe('closing up to now', () => {
  const utcDay = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

  it('400 for to = tomorrow (a date not begun is in the future); nothing written', async () => {
    const before = await batchCount();
    const res = await finance
      .post('/api/finance/recharge-batches')
      .send({ to: utcDay(1) })
      .expect(400);
    expect(res.body.errors).toEqual([{ field: 'to', message: 'must not be in the future' }]);
    expect(await batchCount()).toBe(before);
  });

  it('201 for to = today: the batch runs up to the moment of the close and takes a sale made a moment ago', async () => {
    const justSold = await sell(clerk, 'CHEM-001', [{ itemId: items.beaker.id, quantity: 1 }]);
    const soldAt: Date = (await t.db('sales').where({ id: justSold.id }).first('created_at')).created_at;
    const res = await finance
      .post('/api/finance/recharge-batches')
      .send({ to: utcDay(0) })
      .expect(201);
    const answeredAt = Date.now();
    const recordedBefore = Date.parse(res.body.batch.recordedBefore);
    expect(recordedBefore).toBeGreaterThan(soldAt.getTime());
    expect(recordedBefore).toBeLessThanOrEqual(answeredAt);
    expect(res.body.batch).toMatchObject({
      number: expect.stringMatching(new RegExp(`^RC-${thisMonth()}-\\d+$`)),
      sales: 1,
      refunds: 0,
      gross: '12.00',
    });
    expect((await entriesOf(res.body.batch.id)).map((e) => e.sale_number)).toEqual([justSold.saleId]);
    // the preview of today reads up to now as well, and finds nothing left
    await finance
      .post('/api/finance/recharge-batches')
      .send({ to: utcDay(0) })
      .expect(409);
  });
});

describe('GET /api/finance/recharge-batches', () => {
  it('200 newest first, paged', async () => {
    const res = await finance.get('/api/finance/recharge-batches?limit=2').expect(200);
    const total = await batchCount();
    expect(res.body.pagination).toEqual({ page: 1, limit: 2, total, totalPages: Math.ceil(total / 2) });
    expect(res.body.batches).toHaveLength(2);
    expect(res.body.batches[0].id).toBeGreaterThan(res.body.batches[1].id);
    expect(res.body.batches[0]).not.toHaveProperty('costCentres');
  });

  it('200 by id and by number alike; 404 unknown; 400 malformed', async () => {
    const byNumber = await finance.get('/api/finance/recharge-batches/RC-202610-1').expect(200);
    const byId = await finance.get(`/api/finance/recharge-batches/${byNumber.body.id}`).expect(200);
    expect(byId.body).toEqual(byNumber.body);
    await finance.get('/api/finance/recharge-batches/RC-209901-1').expect(404);
    await finance.get('/api/finance/recharge-batches/99999').expect(404);
    await finance.get('/api/finance/recharge-batches/RC-1').expect(400);
  });
});

describe('GET /api/finance/recharge-batches/{batch}/journal', () => {
  it("200 CSV, one row per entry; its Net, VAT and Gross sum to the batch's totals", async () => {
    const batches = (await finance.get('/api/finance/recharge-batches?limit=100').expect(200)).body.batches as {
      id: number;
      number: string;
      net: string;
      vat: string;
      gross: string;
      sales: number;
      refunds: number;
    }[];
    for (const batch of batches) {
      const res = await finance.get(`/api/finance/recharge-batches/${batch.number}/journal`).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.headers['content-disposition']).toMatch(
        new RegExp(`^attachment; filename="journal-${batch.number}_\\d{4}-\\d{2}-\\d{2}_\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
      );
      const [header, ...rows] = parseCsv(res.text, { bom: true }) as string[][];
      expect(header).toEqual([
        'Date',
        'Batch',
        'Cost centre',
        'Charge code',
        'Sale ID',
        'Description',
        'Net',
        'VAT',
        'Gross',
        'Account code',
        'Debit',
        'Credit',
      ]);
      expect(rows).toHaveLength(batch.sales + batch.refunds);
      const sum = (i: number) => rows.reduce((total, r) => total.plus(r[i]), new D(0)).toFixed(2);
      expect([sum(6), sum(7), sum(8)]).toEqual([batch.net, batch.vat, batch.gross]);
      expect(rows.every((r) => r[1] === batch.number && /^\d{4}-\d{2}-\d{2}$/.test(r[0]))).toBe(true);
    }
  });

  it('describes sales and refunds', async () => {
    const res = await finance.get(`/api/finance/recharge-batches/RC-${thisMonth()}-2/journal`).expect(200);
    const rows = parseCsv(res.text, { bom: true }) as string[][];
    // no finance.accountCodes setting yet: no account code
    expect(rows.slice(1).map((r) => r.slice(2))).toEqual([
      ['Chemistry', 'CHEM-001', s.s4.saleId, `Sale ${s.s4.saleId}: 1 x Stand`, '5.00', '1.00', '6.00', '', '6.00', ''],
      [
        'Physics',
        'PHYS-001',
        s.s3.saleId,
        `Refund on ${s.s3.saleId}: 1 x Ethanol`,
        '-3.33',
        '-0.67',
        '-4.00',
        '',
        '',
        '4.00',
      ],
    ]);
  });

  it('404 for an unknown batch', () => finance.get('/api/finance/recharge-batches/RC-209901-1/journal').expect(404));

  it('is named by the period it covers: from the end of the batch before (or its first entry) to its last day', async () => {
    const res = await finance.get('/api/finance/recharge-batches/RC-202610-1/journal').expect(200);
    expect(res.headers['content-disposition']).toBe(
      'attachment; filename="journal-RC-202610-1_2026-10-31_2026-10-31.csv"',
    );
  });

  it('400 for a finance.accountCodes setting without a default or with an empty code; nothing saved', async () => {
    await admin
      .put('/api/settings/finance.accountCodes')
      .send({ value: { byCategory: { Glassware: '5101' } } })
      .expect(400);
    await admin
      .put('/api/settings/finance.accountCodes')
      .send({ value: { default: '5000', byCategory: { Glassware: ' ' } } })
      .expect(400);
    expect(await t.db('settings').where({ key: 'finance.accountCodes' }).first()).toBeUndefined();
  });

  it('for the ledger: a row per entry and account code (by category id or name, else the default), a sale a debit and a refund a credit, UTF-8 with a BOM', async () => {
    const glass = await buildCategory(t.db, { name: 'Glassware' });
    const chem = await buildCategory(t.db, { name: 'Consumables' });
    await admin
      .put('/api/settings/finance.accountCodes')
      .send({ value: { default: '5000', byCategory: { Glassware: '5101', [String(chem.id)]: '5102' } } })
      .expect(200);
    const flask = await buildItem(t.db, {
      name: 'Flask 250 ml',
      price: '10.00',
      vatRate: '0.2000',
      currentStock: 100,
      categoryId: glass.id,
    });
    const tips = await buildItem(t.db, {
      name: 'Pipette tips 200 µl',
      price: '3.33',
      vatRate: '0.2000',
      currentStock: 100,
      categoryId: chem.id,
    });
    const sold = await sell(clerk, 'CHEM-001', [
      { itemId: flask.id, quantity: 2 },
      { itemId: tips.id, quantity: 1 },
      { itemId: items.stand.id, quantity: 1 },
    ]);
    await refund(admin, sold, [{ itemId: flask.id, refundQty: 1 }]);
    const previous = (await finance.get('/api/finance/recharge-batches?limit=1').expect(200)).body.batches[0];
    const batch = (await finance.post('/api/finance/recharge-batches').send({ to: nowIso() }).expect(201)).body.batch;
    // sale: net 20.00 + 3.33 + 5.00 = 28.33, VAT 4.00 + 0.67 + 1.00 = 5.67, gross 34.00; refund of a flask: -10.00 / -2.00 / -12.00
    expect(batch).toMatchObject({ sales: 1, refunds: 1, net: '18.33', vat: '3.67', gross: '22.00' });

    const res = await finance
      .get(`/api/finance/recharge-batches/${batch.number}/journal`)
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    const bytes = res.body as Buffer;
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.includes(Buffer.from('200 \u00b5l', 'utf8'))).toBe(true); // µ as UTF-8 (C2 B5)
    const day = batch.recordedBefore.slice(0, 10);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="journal-${batch.number}_${previous.recordedBefore.slice(0, 10)}_${day}.csv"`,
    );
    const [header, ...rows] = parseCsv(bytes, { bom: true }) as string[][];
    expect(header).toEqual([
      'Date',
      'Batch',
      'Cost centre',
      'Charge code',
      'Sale ID',
      'Description',
      'Net',
      'VAT',
      'Gross',
      'Account code',
      'Debit',
      'Credit',
    ]);
    const today = new Date().toISOString().slice(0, 10);
    expect(rows).toEqual([
      [
        today,
        batch.number,
        'Chemistry',
        'CHEM-001',
        sold.saleId,
        `Sale ${sold.saleId}: 1 x Stand`,
        '5.00',
        '1.00',
        '6.00',
        '5000',
        '6.00',
        '',
      ],
      [
        today,
        batch.number,
        'Chemistry',
        'CHEM-001',
        sold.saleId,
        `Sale ${sold.saleId}: 2 x Flask 250 ml`,
        '20.00',
        '4.00',
        '24.00',
        '5101',
        '24.00',
        '',
      ],
      [
        today,
        batch.number,
        'Chemistry',
        'CHEM-001',
        sold.saleId,
        `Sale ${sold.saleId}: 1 x Pipette tips 200 µl`,
        '3.33',
        '0.67',
        '4.00',
        '5102',
        '4.00',
        '',
      ],
      [
        today,
        batch.number,
        'Chemistry',
        'CHEM-001',
        sold.saleId,
        `Refund on ${sold.saleId}: 1 x Flask 250 ml`,
        '-10.00',
        '-2.00',
        '-12.00',
        '5101',
        '',
        '12.00',
      ],
    ]);
  });
});
