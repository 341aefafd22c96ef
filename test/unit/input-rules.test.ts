import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { DateOrTimestamp, decimalString, IntId, QueryBoolean } from '../../src/http/validate';
import { Quantity } from '../../src/modules/sales/quotes.schemas';

/** The value parsed, or the messages of its issues. */
const outcome = (schema: z.ZodType, input: unknown) => {
  const result = schema.safeParse(input);
  return result.success ? result.data : result.error.issues.map((i) => i.message);
};

describe('decimal input (prices, quantities, rates)', () => {
  const price = decimalString({ places: 2, min: 0, max: 1_000_000 });

  it('keeps the decimal as typed, a number or a trimmed string, never through a float', () => {
    expect(outcome(price, '12.50')).toBe('12.50');
    expect(outcome(price, ' 7 ')).toBe('7');
    expect(outcome(price, 0.1)).toBe('0.1');
    expect(outcome(price, '1000000')).toBe('1000000');
  });

  it('refuses more places than allowed, rather than rounding', () => {
    expect(outcome(price, '1.005')).toEqual(['must have at most 2 decimal places']);
    expect(outcome(price, 1.005)).toEqual(['must have at most 2 decimal places']);
  });

  it('refuses what is not a plain decimal', () => {
    for (const input of ['', '1e3', '1,5', '.5', '5.', '0x10', 'abc', '--1']) {
      expect(outcome(price, input), input).toEqual(['must be a decimal number']);
    }
  });

  it('holds the bounds, both included', () => {
    expect(outcome(price, '0')).toBe('0');
    expect(outcome(price, '-0.01')).toEqual(['must be at least 0']);
    expect(outcome(price, '1000000.01')).toEqual(['must be at most 1000000']);
  });

  it('takes a line quantity above zero with 2 places at most', () => {
    expect(outcome(Quantity, '2.5')).toBe('2.5');
    expect(outcome(Quantity, '0.01')).toBe('0.01');
    expect(outcome(Quantity, '0')).toEqual(['must be greater than 0']);
    expect(outcome(Quantity, '0.001')).toEqual(['must have at most 2 decimal places']);
  });
});

describe('ids, dates and flags from a path or query string', () => {
  it('takes an id as a positive int4', () => {
    expect(outcome(IntId, '42')).toBe(42);
    expect(outcome(IntId, '1.5')).toEqual(['must be a positive integer']);
    expect(outcome(IntId, '0')).toEqual(['must be a positive integer']);
    expect(outcome(IntId, '2147483648')).toEqual(['is too large']);
  });

  it('takes a date or an ISO 8601 timestamp', () => {
    for (const input of ['2026-03-01', '2026-03-01T09:30:00Z', '2026-03-01T09:30:00.123+01:00', ' 2026-03-01 ']) {
      expect(outcome(DateOrTimestamp, input), input).toBe(input.trim());
    }
    for (const input of ['01/03/2026', '2026-3-1', 'yesterday', '2026-02-30T25:00:00Z', '2026-13-01']) {
      expect(outcome(DateOrTimestamp, input), input).toEqual(['must be a date (YYYY-MM-DD) or an ISO 8601 timestamp']);
    }
  });

  it("takes a flag only as 'true', 'false', 1 or 0", () => {
    expect(outcome(QueryBoolean, 'true')).toBe(true);
    expect(outcome(QueryBoolean, '1')).toBe(true);
    expect(outcome(QueryBoolean, 'false')).toBe(false);
    expect(outcome(QueryBoolean, '0')).toBe(false);
    expect(Array.isArray(outcome(QueryBoolean, 'yes'))).toBe(true);
  });
});
