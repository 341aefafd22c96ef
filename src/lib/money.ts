import Decimal from 'decimal.js';

// Money is never a JS float: amounts are decimal strings computed with decimal.js, rounded half-up.
export const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type D = Decimal;
export type DecimalInput = Decimal.Value;

export const money = (value: DecimalInput): string => new D(value).toFixed(2);
export const rate = (value: DecimalInput): string => new D(value).toFixed(4);
/** A stock quantity as the JSON number the spec shows (quantities have at most 2 places). */
export const quantityNumber = (value: DecimalInput): number => new D(value).toDecimalPlaces(2).toNumber();
/** An amount (a decimal string from SQL, null for none) as the JSON number the spec shows for aggregate figures. */
export const amountNumber = (value: DecimalInput | null): number => new D(value ?? 0).toNumber();
