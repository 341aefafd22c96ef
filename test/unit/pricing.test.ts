import { describe, expect, it } from 'vitest';
import { priceLines, type LineInput } from '../../src/modules/sales/sales.pricing';

const line = (quantity: string, unitPrice: string, vatRate: string, itemSku = 'SKU-1'): LineInput => ({
  itemId: 1,
  itemName: `Item ${itemSku}`,
  itemSku,
  quantity,
  unitPrice,
  vatRate,
});

describe('pricing a quote or sale', () => {
  it('prices a line: subtotal, VAT on the subtotal, and their sum, as 2-place strings', () => {
    const { lines, ...totals } = priceLines([line('2', '9.99', '0.2')], true);
    expect(lines).toEqual([
      {
        ...line('2', '9.99', '0.2'),
        quantity: '2.00',
        unitPrice: '9.99',
        vatRate: '0.2000',
        subtotal: '19.98',
        vatAmount: '4.00',
        totalWithVat: '23.98',
      },
    ]);
    expect(totals).toEqual({ subtotalAmount: '19.98', vatAmount: '4.00', totalAmount: '23.98' });
  });

  it("rounds a line's subtotal half-up from a fractional quantity", () => {
    // 1.5 x 2.33 = 3.495; 0.5 x 0.01 = 0.005
    expect(priceLines([line('1.5', '2.33', '0')], true).lines[0].subtotal).toBe('3.50');
    expect(priceLines([line('0.5', '0.01', '0')], true).lines[0].subtotal).toBe('0.01');
    expect(priceLines([line('0.49', '0.01', '0')], true).lines[0].subtotal).toBe('0.00');
  });

  it("rounds a line's VAT half-up, from the rounded subtotal", () => {
    // 0.10 x 5% = 0.005
    expect(priceLines([line('1', '0.10', '0.05')], true).lines[0]).toMatchObject({
      subtotal: '0.10',
      vatAmount: '0.01',
      totalWithVat: '0.11',
    });
    // 0.45 x 5% = 0.0225
    expect(priceLines([line('1', '0.45', '0.05')], true).lines[0].vatAmount).toBe('0.02');
    // 1.5 x 2.33 = 3.495, rounded to 3.50 first: VAT 0.70 (0.699 from the unrounded subtotal)
    expect(priceLines([line('1.5', '2.33', '0.2')], true).lines[0].vatAmount).toBe('0.70');
  });

  it('totals are the sums of the rounded lines, not the rounded sum', () => {
    const lines = ['A', 'B', 'C'].map((sku) => line('1', '0.10', '0.05', sku));
    const priced = priceLines(lines, true);
    expect(priced.lines.map((l) => l.vatAmount)).toEqual(['0.01', '0.01', '0.01']);
    // 3 x 0.005 = 0.015 would round to 0.02
    expect(priced).toMatchObject({ subtotalAmount: '0.30', vatAmount: '0.03', totalAmount: '0.33' });
  });

  it('mixes VAT rates line by line, a zero rate giving no VAT', () => {
    const priced = priceLines(
      [line('3', '1.20', '0.2', 'A'), line('2', '4.99', '0', 'B'), line('1', '10', '0.05', 'C')],
      true,
    );
    expect(priced.lines.map((l) => [l.subtotal, l.vatAmount, l.totalWithVat])).toEqual([
      ['3.60', '0.72', '4.32'],
      ['9.98', '0.00', '9.98'],
      ['10.00', '0.50', '10.50'],
    ]);
    expect(priced).toMatchObject({ subtotalAmount: '23.58', vatAmount: '1.22', totalAmount: '24.80' });
  });

  it("without VAT applied every VAT amount is zero and each line keeps its item's rate", () => {
    const priced = priceLines([line('2.5', '9.99', '0.2')], false);
    expect(priced.lines[0]).toMatchObject({
      vatRate: '0.2000',
      subtotal: '24.98',
      vatAmount: '0.00',
      totalWithVat: '24.98',
    });
    expect(priced).toMatchObject({ subtotalAmount: '24.98', vatAmount: '0.00', totalAmount: '24.98' });
  });

  it('prices no lines as zero', () => {
    expect(priceLines([], true)).toEqual({ lines: [], subtotalAmount: '0.00', vatAmount: '0.00', totalAmount: '0.00' });
  });

  it('keeps large amounts exact', () => {
    const priced = priceLines([line('1000000000', '99999.99', '0.2')], true);
    expect(priced).toMatchObject({
      subtotalAmount: '99999990000000.00',
      vatAmount: '19999998000000.00',
      totalAmount: '119999988000000.00',
    });
  });
});
