import { D, type DecimalInput } from './money';

// What people read: en-GB dates and pounds. Amounts stay decimal strings until here.
const POUNDS = new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' });
const DATE = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'Europe/London',
});
const DATE_TIME = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZone: 'Europe/London',
});
const QUANTITY = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 2 });

const toDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));

/** £1,234.50; nothing for a missing amount. Rounded with decimal.js first, so 2.675 shows as £2.68. */
export const formatMoney = (value: DecimalInput | null | undefined): string =>
  value === null || value === undefined || value === ''
    ? ''
    : POUNDS.format(new D(value).toDecimalPlaces(2).toNumber());

/** 23 Nov 2026 */
export const formatDate = (value: Date | string | null | undefined): string =>
  value ? DATE.format(toDate(value)) : '';

/** 23 Nov 2026, 14:05 (UK time) */
export const formatDateTime = (value: Date | string | null | undefined): string =>
  value ? DATE_TIME.format(toDate(value)) : '';

/** 1,250 or 2.5 */
export const formatQuantity = (value: DecimalInput | null | undefined): string =>
  value === null || value === undefined || value === ''
    ? ''
    : QUANTITY.format(new D(value).toDecimalPlaces(2).toNumber());

/** 20% from a rate of 0.2000 */
export const formatRate = (value: DecimalInput | null | undefined): string =>
  value === null || value === undefined || value === ''
    ? ''
    : `${new D(value).times(100).toDecimalPlaces(2).toString()}%`;

export const FORMATTERS = { formatMoney, formatDate, formatDateTime, formatQuantity, formatRate };
