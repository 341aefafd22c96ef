import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../src/modules/audit/audit.actor';
import { byDepartment, chargeCodeFigures, periodFigures } from '../src/modules/sales/sales.figures';
import { applySalesFilter, resolveSalesFilter, type SalesFilterInput } from '../src/modules/sales/sales.filters';
import { salesAnalytics } from '../src/modules/sales/sales.analytics';
import { salesReports } from '../src/modules/sales/sales.reports';
import { CreateSale, RefundBody } from '../src/modules/sales/sales.schemas';
import { salesService } from '../src/modules/sales/sales.service';
import type { UserRow } from '../src/modules/users/users.service';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import { buildChargeCode, sessionId } from './helpers/sales-factories';

const DAY_MS = 86_400_000;
// Every sale lands in these ten UTC days, so random ranges cut through sales, whole days and both edges.
const FIRST_DAY = Date.parse('2026-03-01T00:00:00.000Z');
const DAYS = 10;

let t: TestApp;
let clerk: UserRow;
let agent: supertest.Agent;
let seed = 20261123;
/** A deterministic generator, so a failure can be replayed. */
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];

/** A random instant of the ten days; one in four on a midnight, or within a second of one. */
function randomInstant(): Date {
  const day = FIRST_DAY + Math.floor(random() * DAYS) * DAY_MS;
  const r = random();
  if (r < 0.125) return new Date(day);
  if (r < 0.25) return new Date(day + DAY_MS - 1 - Math.floor(random() * 1000));
  return new Date(day + Math.floor(random() * DAY_MS));
}

/** A random range bound: none, a plain date (a day before, inside or after the ten days), or a timestamp. */
function randomBound(): string | undefined {
  const r = random();
  if (r < 0.2) return undefined;
  if (r < 0.55)
    return new Date(FIRST_DAY + (Math.floor(random() * (DAYS + 2)) - 1) * DAY_MS).toISOString().slice(0, 10);
  return randomInstant().toISOString();
}

const randomFilter = (): SalesFilterInput => ({
  chargeCode: pick([undefined, undefined, 'chem', 'CHEM-00', '-1', 'phys', 'misc', 'zz', '%']),
  startDate: randomBound(),
  endDate: randomBound(),
  unpaidOnly: random() < 0.4,
});

/** The figures straight from the sales: one aggregate over the filtered rows per key, as the reports computed them before the rollup. */
const straightFigures = (filter: SalesFilterInput, key: string, ...more: string[]) =>
  applySalesFilter(t.db('sales as s').leftJoin('charge_codes as c', 'c.code', 's.charge_code'), filter)
    .groupByRaw([key, ...more].join(', '))
    .orderByRaw(key)
    .select(
      t.db.raw(`${key} AS key`),
      ...more,
      t.db.raw('count(*)::int AS sales'),
      t.db.raw('sum(s.total_amount)::text AS total_amount'),
      t.db.raw('sum(s.refunded_amount)::text AS refunded_amount'),
      t.db.raw('sum(s.total_amount - s.refunded_amount)::text AS net_amount'),
      t.db.raw('count(DISTINCT s.charge_code)::int AS charge_codes'),
    );

const DEPARTMENT = `coalesce(nullif(c.cost_centre, ''), 'Unassigned')`;

beforeAll(async () => {
  t = await testApp();
  clerk = await buildUser(t.db, { role: 'admin' });
  agent = await t.loginAs(clerk);
  await buildChargeCode(t.db, { code: 'CHEM-001', costCentre: 'Chemistry' });
  await buildChargeCode(t.db, { code: 'CHEM-002', costCentre: 'Chemistry' });
  await buildChargeCode(t.db, { code: 'PHYS-001', costCentre: 'Physics' });
  await buildChargeCode(t.db, { code: 'MISC-1', costCentre: '' });
  const items = await Promise.all(
    ['3.33', '0.01', '12.50', '7.99'].map((price, i) =>
      buildItem(t.db, { name: `Rollup item ${i}`, sku: `RU-${i}`, price, currentStock: 10_000 }),
    ),
  );
  const sales = salesService(t.db);
  const codes = ['CHEM-001', 'CHEM-002', 'PHYS-001', 'MISC-1'];
  const lines = () =>
    Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
      itemId: pick(items).id,
      quantity: 1 + Math.floor(random() * 4),
    }));

  // Direct sales through the service, and some quotes processed through the API.
  const saleIds: number[] = [];
  for (let i = 0; i < 120; i += 1)
    saleIds.push(
      (
        await sales.create(
          clerk,
          CreateSale.parse({ chargeCode: pick(codes), items: lines(), vatApplied: random() < 0.7 }),
        )
      ).sale.id,
    );
  for (let i = 0; i < 6; i += 1) {
    const saved = await agent
      .post('/api/sales/quotes')
      .send({ chargeCode: pick(codes), sessionId: sessionId(), items: lines() })
      .expect(200);
    saleIds.push((await agent.post(`/api/sales/quotes/${saved.body.quote.id}/process`).expect(200)).body.sale.id);
  }
  // Spread over the ten days (an UPDATE of created_at moves a sale between rollup days).
  for (const id of saleIds) await t.db('sales').where({ id }).update({ created_at: randomInstant() });

  // Paid and unpaid changes, twice over some sales, and refunds (partial and full), drawn first and
  // then run eight sales at a time, so they reach the database over several connections (rollup slots).
  const changes = [];
  for (const id of saleIds) {
    const [paid, unpaid, refund, whole] = [random() < 0.5, random() < 0.15, random() < 0.35, random() < 0.5];
    changes.push(async () => {
      if (paid) await sales.markPaid(SYSTEM_ACTOR, id);
      if (unpaid) await sales.markUnpaid(SYSTEM_ACTOR, id);
      if (refund) {
        const [line] = await t.db('sale_items').where({ sale_id: id }).orderBy('id').select('item_id', 'quantity');
        await sales.refund(
          SYSTEM_ACTOR,
          id,
          RefundBody.parse({ items: [{ itemId: line.item_id, refundQty: whole ? Number(line.quantity) : 1 }] }),
        );
      }
    });
  }
  for (let i = 0; i < changes.length; i += 8) await Promise.all(changes.slice(i, i + 8).map((change) => change()));
  // A charge code renamed (its sales follow through ON UPDATE CASCADE), and sales deleted as an archive purge deletes them.
  await t.db('charge_codes').where({ code: 'CHEM-002' }).update({ code: 'CHEM-020' });
  await t
    .db('sales')
    .whereIn(
      'id',
      saleIds.filter(() => random() < 0.1),
    )
    .delete();
}, 60_000);
afterAll(() => t.close());

describe('sales figures from the rollup', () => {
  it("the rollup's slots sum to exactly the per-day, per-code, per-paid-state sums of the sales", async () => {
    const { rows: drift } = await t.db.raw(`
      SELECT * FROM (
        SELECT day, charge_code, is_paid, sum(sales_count), sum(total_amount), sum(refunded_amount) FROM sales_daily_totals GROUP BY 1, 2, 3 HAVING sum(sales_count) <> 0
        EXCEPT
        SELECT (created_at AT TIME ZONE 'UTC')::date, charge_code, is_paid, count(*), sum(total_amount), sum(refunded_amount) FROM sales GROUP BY 1, 2, 3
      ) extra
      UNION ALL
      SELECT * FROM (
        SELECT (created_at AT TIME ZONE 'UTC')::date, charge_code, is_paid, count(*), sum(total_amount), sum(refunded_amount) FROM sales GROUP BY 1, 2, 3
        EXCEPT
        SELECT day, charge_code, is_paid, sum(sales_count), sum(total_amount), sum(refunded_amount) FROM sales_daily_totals GROUP BY 1, 2, 3 HAVING sum(sales_count) <> 0
      ) missing`);
    expect(drift).toEqual([]);
    const [{ striped }] = (
      await t.db.raw(
        `SELECT count(*)::int AS striped FROM (SELECT 1 FROM sales_daily_totals GROUP BY day, charge_code, is_paid HAVING count(*) > 1) k`,
      )
    ).rows;
    expect(striped).toBeGreaterThan(0);
    const [{ paid, refunded }] = (
      await t.db.raw(
        `SELECT count(*) FILTER (WHERE is_paid)::int AS paid, count(*) FILTER (WHERE refunded_amount > 0)::int AS refunded FROM sales`,
      )
    ).rows;
    expect(paid).toBeGreaterThan(10);
    expect(refunded).toBeGreaterThan(10);
  });

  it('answers as the straight aggregate over random ranges and filters, per charge code, month and department', async () => {
    for (let i = 0; i < 100; i += 1) {
      const filter = randomFilter();
      const resolved = await resolveSalesFilter(t.db, filter);
      const byCode = await chargeCodeFigures(t.db, resolved);
      const message = JSON.stringify(filter);
      expect(byCode, message).toEqual(
        (await straightFigures(filter, 's.charge_code', 'c.cost_centre')).map(({ charge_codes: _, ...row }) => row),
      );
      expect(await periodFigures(t.db, resolved, 'month'), message).toEqual(
        (await straightFigures(filter, `to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM')`)).map(
          ({ charge_codes: _, ...row }) => row,
        ),
      );
      for (const by of ['totalAmount', 'netAmount'] as const) {
        const order =
          by === 'totalAmount' ? 'sum(s.total_amount) DESC' : 'sum(s.total_amount - s.refunded_amount) DESC';
        const straight = await straightFigures(filter, DEPARTMENT).clearOrder().orderByRaw(`${order}, 1`);
        expect(
          byDepartment(byCode, by).map((d) => ({
            key: d.department,
            sales: d.sales,
            total_amount: d.totalAmount.toFixed(2),
            refunded_amount: d.refundedAmount.toFixed(2),
            net_amount: d.netAmount.toFixed(2),
            charge_codes: d.chargeCodes,
          })),
          message,
        ).toEqual(straight);
      }
    }
  });

  it("the JSON report's summary and departments and the sales list's total equal the straight aggregate, also right after a refund and a paid change", async () => {
    const reports = salesReports(t.db);
    const sales = salesService(t.db);
    const check = async (filter: SalesFilterInput) => {
      const report = await reports.json(filter, 1, 10);
      const [summary] = await applySalesFilter(t.db('sales as s'), filter).select(
        t.db.raw('count(*)::int AS "totalSales"'),
        t.db.raw('coalesce(sum(s.total_amount), 0.00)::text AS "totalAmount"'),
        t.db.raw('count(DISTINCT s.charge_code)::int AS "uniqueChargeCodes"'),
      );
      const departments = await straightFigures(filter, DEPARTMENT);
      expect({ ...report.summary, totalAmount: report.summary.totalAmount.toFixed(2) }, JSON.stringify(filter)).toEqual(
        summary,
      );
      // The sales list (no unpaidOnly there) counts its total from the same figures.
      if (!filter.unpaidOnly) expect((await sales.list(filter, 1, 1)).total).toBe(summary.totalSales);
      expect(report.departments.map((d) => [d.department, d.totalSales, d.totalAmount.toFixed(2)]).sort()).toEqual(
        departments.map((d) => [d.key, d.sales, d.total_amount]).sort(),
      );
    };
    for (let i = 0; i < 20; i += 1) await check(randomFilter());

    const [unpaid] = await t.db('sales').where({ is_paid: false, refunded_amount: 0 }).orderBy('id').limit(1);
    const [line] = await t.db('sale_items').where({ sale_id: unpaid.id }).limit(1);
    await sales.refund(SYSTEM_ACTOR, unpaid.id, RefundBody.parse({ items: [{ itemId: line.item_id, refundQty: 1 }] }));
    await sales.markPaid(SYSTEM_ACTOR, unpaid.id);
    const day = unpaid.created_at.toISOString().slice(0, 10);
    for (const filter of [
      { unpaidOnly: true },
      { startDate: day, endDate: day },
      { startDate: day, unpaidOnly: true },
      {},
    ])
      await check(filter);
  });

  it("the dashboard's sales per UK day equal the straight count of each UK calendar day, in GMT and across BST midnights", async () => {
    const analytics = salesAnalytics(t.db);
    const straightDailySales = async (days: number, now: Date) =>
      (
        await t.db.raw(
          `SELECT to_char(d.day, 'YYYY-MM-DD') AS day, count(s.id)::int AS sales, coalesce(sum(s.total_amount), 0)::text AS value
             FROM (SELECT (?::timestamptz AT TIME ZONE 'Europe/London')::date - i AS day FROM generate_series(0, ?::int) i) d
             LEFT JOIN sales s ON (s.created_at AT TIME ZONE 'Europe/London')::date = d.day
            GROUP BY d.day ORDER BY d.day`,
          [now, days - 1],
        )
      ).rows;
    const check = async (days: number, now: Date) =>
      expect(await analytics.dailySales(days, now), now.toISOString()).toEqual(await straightDailySales(days, now));

    await check(30, new Date('2026-03-10T12:00:00Z'));
    await check(5, new Date('2026-03-06T00:00:00Z'));
    // A third of the sales to June (BST), each within 90 minutes of a UK or UTC midnight.
    const ids = (await t.db('sales').select('id').orderBy('id'))
      .map((r: { id: number }) => r.id)
      .filter((_, i) => i % 3 === 0);
    for (const id of ids) {
      const midnight = Date.parse('2026-06-01T00:00:00Z') + Math.floor(random() * 10) * DAY_MS;
      const offset = Math.floor((random() * 3 - 1.5) * 3_600_000);
      await t
        .db('sales')
        .where({ id })
        .update({ created_at: new Date(midnight + offset) });
    }
    for (const now of ['2026-06-10T22:59:59Z', '2026-06-10T23:00:00Z', '2026-06-11T00:30:00Z', '2026-06-05T12:00:00Z'])
      await check(12, new Date(now));
    await check(120, new Date('2026-06-12T00:00:00Z'));
  });
});
