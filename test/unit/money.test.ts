import { describe, expect, it } from 'vitest';
import { amountNumber, money, quantityNumber, rate } from '../../src/lib/money';

describe('money and rates as decimal strings', () => {
  it('rounds an amount half-up to 2 places in decimal, not in binary floating point', () => {
    // 1.005 is 1.00499999999999989... as a float: Number#toFixed gives 1.00
    expect(money('1.005')).toBe('1.01');
    expect(money(1.005)).toBe('1.01');
    expect(money('2.345')).toBe('2.35');
    expect(money('2.344999')).toBe('2.34');
    expect(money('0.125')).toBe('0.13');
    expect(money(0)).toBe('0.00');
    expect(money('12')).toBe('12.00');
  });

  it('rounds a negative half away from zero, as a refund mirrors its sale', () => {
    expect(money('-0.005')).toBe('-0.01');
    expect(money('-2.345')).toBe('-2.35');
    expect(money('-2.344')).toBe('-2.34');
  });

  it('keeps amounts too large for a float exact', () => {
    expect(money('12345678901234567.895')).toBe('12345678901234567.90');
  });

  it('refuses what is not a number', () => {
    expect(() => money('abc')).toThrow(/Invalid argument/);
    expect(() => money(' 3 ')).toThrow(/Invalid argument/);
  });

  it('writes a VAT rate with 4 places, rounded half-up', () => {
    expect(rate('0.2')).toBe('0.2000');
    expect(rate('0.175')).toBe('0.1750');
    expect(rate('0.12345')).toBe('0.1235');
    expect(rate('0.00005')).toBe('0.0001');
    expect(rate(0)).toBe('0.0000');
  });

  it('gives quantities and aggregate amounts as JSON numbers', () => {
    expect(quantityNumber('2.005')).toBe(2.01);
    expect(quantityNumber('-2.005')).toBe(-2.01);
    expect(quantityNumber('3.00')).toBe(3);
    expect(amountNumber('12.50')).toBe(12.5);
    expect(amountNumber(null)).toBe(0);
  });
});
