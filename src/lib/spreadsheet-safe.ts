/**
 * Text bound for a spreadsheet (a CSV or XLSX cell), neutralised by OWASP's rule against
 * formula injection: a value that starts with `=`, `+`, `-`, `@`, a tab or a carriage return
 * is prefixed with a single quote, so Excel, LibreOffice and Sheets show it as text instead of
 * running it (`=HYPERLINK(...)`, `+cmd|...`, `@SUM(...)`). The value is otherwise kept; quoting
 * is left to the CSV library. Only text columns go through this: numbers (prices, quantities,
 * totals, a negative stock) are written as they are and stay numbers.
 */
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);

export function spreadsheetText(value: string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  return FORMULA_START.has(value[0]) ? `'${value}` : value;
}
