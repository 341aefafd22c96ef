import { describe, expect, it } from 'vitest';
import { formatDate, formatDateTime, formatMoney, formatQuantity, formatRate } from '../../src/lib/format';

describe('what people read: pounds, quantities, rates and UK dates', () => {
  it('shows money in pounds with thousands separators, rounded half-up in decimal', () => {
    expect(formatMoney('1234.5')).toBe('£1,234.50');
    expect(formatMoney('1000000')).toBe('£1,000,000.00');
    expect(formatMoney(0)).toBe('£0.00');
    // 2.675 is 2.67499999... as a float, which Intl alone would show as £2.67
    expect(formatMoney('2.675')).toBe('£2.68');
    expect(formatMoney('-1.5')).toBe('-£1.50');
    expect(formatMoney('-2.675')).toBe('-£2.68');
  });

  it('shows nothing for a missing value', () => {
    for (const format of [formatMoney, formatQuantity, formatRate, formatDate, formatDateTime]) {
      expect(format(null)).toBe('');
      expect(format(undefined)).toBe('');
      expect(format('')).toBe('');
    }
  });

  it('shows quantities with at most 2 places and no trailing zeros', () => {
    expect(formatQuantity('1250')).toBe('1,250');
    expect(formatQuantity('2.5')).toBe('2.5');
    expect(formatQuantity('2.00')).toBe('2');
    expect(formatQuantity('2.555')).toBe('2.56');
    expect(formatQuantity('-3.25')).toBe('-3.25');
    expect(formatQuantity(0)).toBe('0');
  });

  it('shows a VAT rate as a percentage', () => {
    expect(formatRate('0.2000')).toBe('20%');
    expect(formatRate('0.175')).toBe('17.5%');
    expect(formatRate('0.12345')).toBe('12.35%');
    expect(formatRate(0)).toBe('0%');
  });

  it('shows dates as the UK calendar has them, across the clock changes', () => {
    expect(formatDate('2026-11-23T00:00:00Z')).toBe('23 Nov 2026');
    expect(formatDate(new Date('2026-11-23T23:59:59Z'))).toBe('23 Nov 2026');
    // 23:30 UTC in summer is 00:30 the next day in London; in winter it is the same day
    expect(formatDate('2026-06-30T23:30:00Z')).toBe('1 Jul 2026');
    expect(formatDate('2026-12-31T23:30:00Z')).toBe('31 Dec 2026');
  });

  it('shows times in UK time, 24-hour', () => {
    expect(formatDateTime('2026-11-23T14:05:00Z')).toBe('23 Nov 2026, 14:05');
    expect(formatDateTime('2026-07-01T14:05:00Z')).toBe('1 Jul 2026, 15:05');
    // British Summer Time starts at 01:00 UTC on the last Sunday of March
    expect(formatDateTime('2026-03-29T00:59:00Z')).toBe('29 Mar 2026, 00:59');
    expect(formatDateTime('2026-03-29T01:00:00Z')).toBe('29 Mar 2026, 02:00');
  });
});
