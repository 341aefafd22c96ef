import { describe, expect, it } from 'vitest';
import { presentStocktakeLine } from '../../src/modules/stocktakes/stocktakes.present';
import { totalsOf, varianceOf, type StocktakeLineRow } from '../../src/modules/stocktakes/stocktakes.service';

const line = (overrides: Partial<StocktakeLineRow>): StocktakeLineRow => ({
  id: 1,
  item_id: 1,
  sku: 'SKU-1',
  name: 'Beaker',
  lot_number: null,
  lot_expires_on: null,
  found: false,
  expected: null,
  counted: null,
  unit_price: '2.50',
  counted_by: null,
  counted_at: null,
  counter_email: null,
  counter_first_name: null,
  counter_last_name: null,
  ...overrides,
});

describe('stocktake lines', () => {
  it('have a variance only once counted: counted - expected', () => {
    expect(varianceOf(line({}))).toBeNull();
    expect(varianceOf(line({ expected: '10.00', counted: '7.50' }))!.toString()).toBe('-2.5');
  });

  it('total the counted lines, those with a variance and its net value', () => {
    expect(
      totalsOf([
        line({ expected: '10.00', counted: '8.00' }),
        line({ expected: '4.00', counted: '5.00', unit_price: '0.99', found: true }),
        line({ expected: '3.00', counted: '3.00' }),
        line({}),
      ]),
    ).toEqual({ linesTotal: 4, linesCounted: 3, linesFound: 1, itemsWithVariance: 2, varianceValue: '-4.01' });
  });

  it('leave out expected, variance and their value for a blind view', () => {
    const counted = line({ expected: '10.00', counted: '8.00' });
    expect(presentStocktakeLine(counted, { expected: true })).toMatchObject({
      expected: 10,
      counted: 8,
      variance: -2,
      unitPrice: '2.50',
      varianceValue: '-5.00',
    });
    expect(presentStocktakeLine(counted, { expected: false })).toMatchObject({
      expected: null,
      counted: 8,
      variance: null,
      unitPrice: null,
      varianceValue: null,
    });
  });
});
