import { describe, expect, it } from 'vitest';
import { periodStart } from '../../src/modules/sales/sales.analytics';
import { byDepartment, type ChargeCodeFiguresRow } from '../../src/modules/sales/sales.figures';

const code = (key: string, costCentre: string | null, sales: number, total: string, refunded: string) => ({
  key,
  cost_centre: costCentre,
  sales,
  total_amount: total,
  refunded_amount: refunded,
  net_amount: (Number(total) - Number(refunded)).toFixed(2),
});
const plain = (departments: ReturnType<typeof byDepartment>) =>
  departments.map((d) => ({
    ...d,
    totalAmount: d.totalAmount.toFixed(2),
    refundedAmount: d.refundedAmount.toFixed(2),
    netAmount: d.netAmount.toFixed(2),
  }));

describe('sales figures per department', () => {
  const codes: ChargeCodeFiguresRow[] = [
    code('PHY-1', 'Physics', 3, '100.10', '0.00'),
    code('PHY-2', 'Physics', 1, '0.20', '0.20'),
    code('CHEM-1', 'Chemistry', 2, '150.00', '60.00'),
    code('OLD-1', null, 1, '5.00', '0.00'),
    code('OLD-2', '', 1, '5.00', '0.00'),
  ];

  it("sums each department's codes in decimal; a code without a cost centre is Unassigned", () => {
    expect(plain(byDepartment(codes, 'totalAmount'))).toEqual([
      {
        department: 'Chemistry',
        sales: 2,
        totalAmount: '150.00',
        refundedAmount: '60.00',
        netAmount: '90.00',
        chargeCodes: 1,
      },
      {
        department: 'Physics',
        sales: 4,
        totalAmount: '100.30',
        refundedAmount: '0.20',
        netAmount: '100.10',
        chargeCodes: 2,
      },
      {
        department: 'Unassigned',
        sales: 2,
        totalAmount: '10.00',
        refundedAmount: '0.00',
        netAmount: '10.00',
        chargeCodes: 2,
      },
    ]);
  });

  it('orders by the amount asked for, net of refunds or not', () => {
    expect(byDepartment(codes, 'netAmount').map((d) => d.department)).toEqual(['Physics', 'Chemistry', 'Unassigned']);
  });

  it("breaks ties by name in code-point order, capitals first, as PostgreSQL's C collation", () => {
    const tied = [
      code('A', 'biology', 1, '10.00', '0'),
      code('B', 'Zoology', 1, '10.00', '0'),
      code('C', 'Art', 1, '10.00', '0'),
    ];
    expect(byDepartment(tied, 'totalAmount').map((d) => d.department)).toEqual(['Art', 'Zoology', 'biology']);
  });

  it('keeps a department whose refunds exceed its sales, net negative, last', () => {
    const refunded = [code('A', 'Physics', 1, '10.00', '0'), code('B', 'Chemistry', 1, '5.00', '7.50')];
    const departments = byDepartment(refunded, 'netAmount');
    expect(departments.map((d) => [d.department, d.netAmount.toFixed(2)])).toEqual([
      ['Physics', '10.00'],
      ['Chemistry', '-2.50'],
    ]);
  });

  it('gives no department for no codes', () => {
    expect(byDepartment([], 'totalAmount')).toEqual([]);
  });
});

describe('the trailing period of the analytics', () => {
  const now = new Date('2026-03-01T12:00:00Z');

  it('goes 7, 30 or 365 whole days back from now', () => {
    expect(periodStart('week', now)).toEqual(new Date('2026-02-22T12:00:00Z'));
    expect(periodStart('month', now)).toEqual(new Date('2026-01-30T12:00:00Z'));
    expect(periodStart('year', now)).toEqual(new Date('2025-03-01T12:00:00Z'));
  });

  it('counts days, not calendar months or years', () => {
    // 365 days back over 29 February 2028 is 2 March 2027
    expect(periodStart('year', new Date('2028-03-01T12:00:00Z'))).toEqual(new Date('2027-03-02T12:00:00Z'));
    expect(periodStart('month', new Date('2026-03-31T00:00:00Z'))).toEqual(new Date('2026-03-01T00:00:00Z'));
  });

  it('has no start for all time', () => {
    expect(periodStart(undefined, now)).toBeUndefined();
  });
});
