import { describe, expect, it } from 'vitest';
import { D } from '../../src/lib/money';
import {
  addDays,
  fefoOrder,
  lotStatus,
  moveLots,
  startTrackingMoves,
  stopTrackingMoves,
  type LotChange,
  type WorkingLot,
} from '../../src/modules/lots/lots.picking';

/* Issue 42: the lot rules of a stock change, without the database. */

const TODAY = '2026-11-29';
const item: { id: number; name: string; sku: string; shelfLifeDays: number | null } = {
  id: 7,
  name: 'Acetone',
  sku: 'ACE-1',
  shelfLifeDays: null,
};

let ids = 0;
function lot(
  lotNumber: string,
  quantity: number,
  expiresOn: string | null,
  extra: Partial<WorkingLot> = {},
): WorkingLot & { id: number } {
  const id = ++ids;
  return {
    itemId: item.id,
    lotNumber,
    expiresOn,
    quantity: new D(quantity),
    receivedAt: new Date(Date.UTC(2026, 0, id)),
    quarantined: false,
    orderId: null,
    supplierId: null,
    ...extra,
    id,
  };
}

const shortMessage = (available: D, suffix: string) => `short: ${available.toString()}${suffix}`;
const move = (lots: WorkingLot[], change: LotChange, it = item) =>
  moveLots(it, lots, change, { today: TODAY, shortMessage }).map((m) => [m.lot.lotNumber, m.quantity.toNumber()]);
const levels = (lots: WorkingLot[]) => Object.fromEntries(lots.map((l) => [l.lotNumber, l.quantity.toNumber()]));

describe('lotStatus', () => {
  it('is empty without stock, then quarantined, expired after its date, expiring within the warning days', () => {
    expect(lotStatus({ expiresOn: '2020-01-01', quarantined: true, quantity: '0' }, TODAY, 30)).toBe('empty');
    expect(lotStatus({ expiresOn: '2020-01-01', quarantined: true, quantity: '1' }, TODAY, 30)).toBe('quarantined');
    expect(lotStatus({ expiresOn: '2026-11-28', quarantined: false, quantity: '1' }, TODAY, 30)).toBe('expired');
    expect(lotStatus({ expiresOn: '2026-12-29', quarantined: false, quantity: '1' }, TODAY, 30)).toBe('expiring');
    expect(lotStatus({ expiresOn: '2026-12-30', quarantined: false, quantity: '1' }, TODAY, 30)).toBe('available');
    expect(lotStatus({ expiresOn: null, quarantined: false, quantity: '1' }, TODAY, 30)).toBe('available');
  });

  it('keeps a lot sellable on its expiry day itself', () => {
    expect(lotStatus({ expiresOn: TODAY, quarantined: false, quantity: '2' }, TODAY, 30)).toBe('expiring');
  });
});

describe('fefoOrder', () => {
  it('puts the earliest expiry first, lots without expiry last, then the earlier receipt', () => {
    const lots = [
      lot('none', 1, null),
      lot('late', 1, '2027-05-01'),
      lot('soon', 1, '2027-01-01'),
      lot('soon-2', 1, '2027-01-01'),
    ];
    expect(lots.sort(fefoOrder).map((l) => l.lotNumber)).toEqual(['soon', 'soon-2', 'late', 'none']);
  });
});

describe('moveLots: a sale', () => {
  it('takes first expiry first, splitting across lots and passing over expired and quarantined ones', () => {
    const lots = [
      lot('C', 5, '2027-09-01'),
      lot('PAST', 9, '2026-11-01'),
      lot('A', 2, '2026-12-10'),
      lot('Q', 9, '2026-12-01', { quarantined: true }),
      lot('B', 3, '2027-03-01'),
    ];
    expect(move(lots, { type: 'out', quantity: new D(6), sale: true })).toEqual([
      ['A', -2],
      ['B', -3],
      ['C', -1],
    ]);
    expect(levels(lots)).toEqual({ C: 4, PAST: 9, A: 0, Q: 9, B: 0 });
  });

  it('refuses a shortfall with the sellable quantity and what expired or quarantined lots hold', () => {
    const lots = [lot('OK', 1, null), lot('PAST', 4, '2026-01-01'), lot('Q', 2, null, { quarantined: true })];
    expect(() => move(lots, { type: 'out', quantity: new D(2), sale: true })).toThrow(
      'short: 1 (6 in expired or quarantined lots)',
    );
    expect(levels(lots)).toEqual({ OK: 1, PAST: 4, Q: 2 });
  });

  it('takes a named lot only, and refuses a named expired or quarantined lot with 409', () => {
    const lots = [lot('EARLY', 5, '2026-12-05'), lot('NAMED', 5, '2027-12-05'), lot('PAST', 1, '2025-01-01')];
    lots.push(lot('HELD', 1, null, { quarantined: true }));
    expect(move(lots, { type: 'out', quantity: new D(2), sale: true, lot: { lotNumber: 'NAMED' } })).toEqual([
      ['NAMED', -2],
    ]);
    expect(() => move(lots, { type: 'out', quantity: new D(1), sale: true, lot: { lotNumber: 'PAST' } })).toThrow(
      expect.objectContaining({ status: 409, message: 'Lot PAST of ACE-1 is expired' }),
    );
    expect(() => move(lots, { type: 'out', quantity: new D(1), sale: true, lot: { lotNumber: 'HELD' } })).toThrow(
      expect.objectContaining({ status: 409, message: 'Lot HELD of ACE-1 is quarantined' }),
    );
    expect(() => move(lots, { type: 'out', quantity: new D(1), sale: true, lot: { lotNumber: 'NOPE' } })).toThrow(
      expect.objectContaining({ status: 404, message: 'Lot NOPE of ACE-1 not found' }),
    );
  });
});

describe('moveLots: stock in, out and adjustments', () => {
  it('needs a lot for an out or an adjustment that is not a sale, and may take from an expired lot', () => {
    const lots = [lot('PAST', 3, '2025-01-01')];
    expect(() => move(lots, { type: 'out', quantity: new D(1), sale: false })).toThrow(
      expect.objectContaining({ status: 400, message: 'Lot number is required for ACE-1' }),
    );
    expect(() => move(lots, { type: 'adjustment', quantity: new D(1) })).toThrow('Lot number is required for ACE-1');
    expect(move(lots, { type: 'out', quantity: new D(3), sale: false, lot: { lotNumber: 'PAST' } })).toEqual([
      ['PAST', -3],
    ]);
  });

  it('creates a new lot with its expiry, or the shelf life from today, or none', () => {
    const lots: WorkingLot[] = [];
    move(lots, { type: 'in', quantity: new D(2), lot: { lotNumber: 'GIVEN', expiresOn: '2027-01-31' } });
    move(lots, { type: 'in', quantity: new D(2), lot: { lotNumber: 'SHELF' } }, { ...item, shelfLifeDays: 90 });
    move(
      lots,
      { type: 'in', quantity: new D(2), lot: { lotNumber: 'NONE', expiresOn: null } },
      { ...item, shelfLifeDays: 90 },
    );
    expect(lots.map((l) => [l.lotNumber, l.expiresOn, l.id, l.itemId])).toEqual([
      ['GIVEN', '2027-01-31', null, 7],
      ['SHELF', '2027-02-27', null, 7],
      ['NONE', null, null, 7],
    ]);
  });

  it('adds to a known lot, and refuses a different expiry for it with 409', () => {
    const lots = [lot('L1', 1, '2027-01-01')];
    expect(move(lots, { type: 'in', quantity: new D(2), lot: { lotNumber: 'L1' } })).toEqual([['L1', 2]]);
    expect(() =>
      move(lots, { type: 'in', quantity: new D(2), lot: { lotNumber: 'L1', expiresOn: '2027-02-01' } }),
    ).toThrow(
      expect.objectContaining({ status: 409, message: 'Lot L1 of ACE-1 expires on 2027-01-01, not 2027-02-01' }),
    );
    expect(levels(lots)).toEqual({ L1: 3 });
  });

  it('sets a lot to an adjustment’s level, moving it by the difference', () => {
    const lots = [lot('L1', 5, null)];
    expect(move(lots, { type: 'adjustment', quantity: new D(2), lot: { lotNumber: 'L1' } })).toEqual([['L1', -3]]);
    expect(move(lots, { type: 'adjustment', quantity: new D(4), lot: { lotNumber: 'NEW', expiresOn: null } })).toEqual([
      ['NEW', 4],
    ]);
  });
});

describe('moveLots: a refund', () => {
  it('goes back into the lots the sale took, the latest-expiring first, each up to what it gave', () => {
    const early = lot('EARLY', 0, '2026-12-20');
    const later = lot('LATER', 3, '2027-06-01');
    const lots = [early, later];
    const returnTo = [
      { lotId: early.id, quantity: new D(2) },
      { lotId: later.id, quantity: new D(2) },
    ];
    expect(move(lots, { type: 'in', quantity: new D(3), returnTo })).toEqual([
      ['LATER', 2],
      ['EARLY', 1],
    ]);
  });

  it('goes into UNLOTTED when the sale took no lot (sold before the item was tracked)', () => {
    const lots = [lot('L1', 1, null)];
    expect(move(lots, { type: 'in', quantity: new D(2), returnTo: [] })).toEqual([['UNLOTTED', 2]]);
    expect(levels(lots)).toEqual({ L1: 1, UNLOTTED: 2 });
  });
});

describe('addDays', () => {
  it('crosses month and year ends and leap days', () => {
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
  });
});

describe('turning tracking by lot on and off', () => {
  it('on: the stock no lot holds goes into UNLOTTED, an empty one reused without its expiry; nothing to move, no move', () => {
    const fresh: WorkingLot[] = [];
    const moves = startTrackingMoves({ ...item, shelfLifeDays: 30 }, fresh, new D(10), TODAY);
    expect(moves.map((m) => [m.lot.lotNumber, m.lot.id, m.lot.expiresOn, m.quantity.toNumber()])).toEqual([
      ['UNLOTTED', null, null, 10],
    ]);
    const reused = [lot('A', 0, '2027-01-01'), lot('UNLOTTED', 0, '2027-02-01')];
    expect(
      startTrackingMoves(item, reused, new D(4), TODAY).map((m) => [m.lot.lotNumber, m.quantity.toNumber()]),
    ).toEqual([['UNLOTTED', 4]]);
    expect(reused[1]).toMatchObject({ expiresOn: null });
    expect(levels(reused)).toEqual({ A: 0, UNLOTTED: 4 });
    expect(startTrackingMoves(item, [], new D(0), TODAY)).toEqual([]);
  });

  it('off: every lot holding stock emptied, each a move of what it held', () => {
    const lots = [lot('A', 0, null), lot('UNLOTTED', 7, null)];
    expect(stopTrackingMoves(lots).map((m) => [m.lot.lotNumber, m.quantity.toNumber()])).toEqual([['UNLOTTED', -7]]);
    expect(levels(lots)).toEqual({ A: 0, UNLOTTED: 0 });
  });
});
