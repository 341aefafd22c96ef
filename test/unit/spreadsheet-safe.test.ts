import { describe, expect, it } from 'vitest';
import { spreadsheetText } from '../../src/lib/spreadsheet-safe';

describe('text bound for a spreadsheet cell', () => {
  it('prefixes a quote to text a spreadsheet would run as a formula', () => {
    expect(spreadsheetText('=HYPERLINK("http://x","y")')).toBe(`'=HYPERLINK("http://x","y")`);
    expect(spreadsheetText('+cmd|/C calc!A0')).toBe(`'+cmd|/C calc!A0`);
    expect(spreadsheetText('-2+3')).toBe(`'-2+3`);
    expect(spreadsheetText('@SUM(A1:A2)')).toBe(`'@SUM(A1:A2)`);
    expect(spreadsheetText('\t=1')).toBe(`'\t=1`);
    expect(spreadsheetText('\r=1')).toBe(`'\r=1`);
  });

  it('keeps any other text as it is, the formula characters included elsewhere', () => {
    expect(spreadsheetText('Bolts M6 = 100')).toBe('Bolts M6 = 100');
    expect(spreadsheetText(' =1')).toBe(' =1');
    expect(spreadsheetText("'already quoted")).toBe("'already quoted");
    expect(spreadsheetText('ann@example.org')).toBe('ann@example.org');
  });

  it('writes nothing for a missing value', () => {
    expect(spreadsheetText(null)).toBe('');
    expect(spreadsheetText(undefined)).toBe('');
    expect(spreadsheetText('')).toBe('');
  });
});
