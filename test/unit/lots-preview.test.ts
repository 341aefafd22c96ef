import { describe, expect, it } from 'vitest';
import { D } from '../../src/lib/money';
import { fefoPreview, type WorkingLot } from '../../src/modules/lots/lots.picking';

const TODAY = '2026-11-29';

const lot = (lotNumber: string, quantity: number, expiresOn: string | null, quarantined = false): WorkingLot => ({
  id: lotNumber.charCodeAt(0),
  itemId: 1,
  lotNumber,
  expiresOn,
  quantity: new D(quantity),
  receivedAt: new Date('2026-01-01T00:00:00Z'),
  quarantined,
  orderId: null,
  supplierId: null,
});

const shown = (lines: ReturnType<typeof fefoPreview>) =>
  lines.map((moves) => moves.map((m) => [m.lot.lotNumber, m.quantity.toNumber()]));

describe('fefoPreview: what basket lines would take', () => {
  it('takes the earliest expiry first, lots without one last', () => {
    const lots = [lot('N', 5, null), lot('L', 2, '2027-06-01'), lot('E', 1, '2026-12-10')];
    expect(shown(fefoPreview(lots, [{ quantity: new D(4) }], TODAY))).toEqual([
      [
        ['E', -1],
        ['L', -2],
        ['N', -1],
      ],
    ]);
  });

  it('a second line of the item takes what the first left, in line order', () => {
    const lots = [lot('A', 2, '2027-01-01'), lot('B', 3, '2027-02-01')];
    expect(shown(fefoPreview(lots, [{ quantity: new D(1) }, { quantity: new D(3) }], TODAY))).toEqual([
      [['A', -1]],
      [
        ['A', -1],
        ['B', -2],
      ],
    ]);
  });

  it('never offers an expired or a quarantined lot', () => {
    const lots = [lot('X', 5, '2026-11-28'), lot('Q', 5, '2026-12-01', true), lot('G', 5, '2027-01-01')];
    expect(shown(fefoPreview(lots, [{ quantity: new D(2) }], TODAY))).toEqual([[['G', -2]]]);
  });

  it('a line the lots cannot cover takes what there is, and the lots themselves do not move', () => {
    const lots = [lot('A', 2, '2027-01-01')];
    expect(shown(fefoPreview(lots, [{ quantity: new D(5) }, { quantity: new D(1) }], TODAY))).toEqual([
      [['A', -2]],
      [],
    ]);
    expect(lots[0].quantity.toNumber()).toBe(2);
  });

  it('a line naming its lot takes that lot only, and the lines after it take what it left', () => {
    const lots = [lot('A', 2, '2027-01-01'), lot('B', 3, '2027-02-01')];
    const lines = [
      { quantity: new D(2), lotNumber: 'B' },
      { quantity: new D(3) },
      { quantity: new D(1), lotNumber: 'X' },
    ];
    expect(shown(fefoPreview(lots, lines, TODAY))).toEqual([
      [['B', -2]],
      [
        ['A', -2],
        ['B', -1],
      ],
      [],
    ]);
  });
});
