import { describe, expect, it } from 'vitest';
import { checkBarcode, gs1Gtin, gtin14, gtinForms, guessKind, lookupKey, readScan } from '../../src/lib/barcodes';
import { cleanScan, gs1CheckDigit, hasValidCheckDigit } from '../../src/lib/gs1';

const GS = '\x1d';

describe('GS1 check digits', () => {
  it('tells a valid GS1 check digit from a wrong one (EAN-13, UPC-A, GTIN-14, EAN-8)', () => {
    const cases: [string, ...unknown[]][] = [
      ['4006381333931', true], // EAN-13 (Stabilo)
      ['5901234123457', true], // EAN-13, GS1 example
      ['036000291452', true], // UPC-A (Wrigley)
      ['09501101530003', true], // GTIN-14, GS1 example
      ['96385074', true], // EAN-8
      ['4006381333932', false],
      ['036000291453', false],
      ['09501101530004', false],
      ['12a4', false],
      ['', false],
    ];
    for (const [code, valid] of cases) expect([code, hasValidCheckDigit(code)]).toEqual([code, valid]);
  });

  it('computes the digit from the body', () => {
    expect(gs1CheckDigit('400638133393')).toBe(1);
    expect(gs1CheckDigit('03600029145')).toBe(2);
    expect(gs1CheckDigit('0950110153000')).toBe(3);
  });
});

describe('kind guessing', () => {
  it('guesses 13 digits ean13, 12 upca, 14 gtin14, printable ASCII code128, anything else other', () => {
    const cases: [string, ...unknown[]][] = [
      ['4006381333931', 'ean13'],
      ['036000291452', 'upca'],
      ['09501101530003', 'gtin14'],
      ['96385074', 'code128'],
      ['PIP-0001', 'code128'],
      ['123', 'code128'],
      ['Pipette 5 ml', 'code128'],
      ['Ölfilter', 'other'],
    ];
    for (const [code, kind] of cases) expect([code, guessKind(code)]).toEqual([code, kind]);
  });
});

describe('normalisation', () => {
  it('a UPC-A, its EAN-13 and its GTIN-14 forms share one key', () => {
    expect(lookupKey('036000291452')).toBe('00036000291452');
    expect(lookupKey('0036000291452')).toBe('00036000291452');
    expect(lookupKey('00036000291452')).toBe('00036000291452');
    expect(gtin14('96385074')).toBe('00000096385074');
  });

  it('other codes are keyed by their lower-case text; a wrong check digit is no GTIN', () => {
    expect(lookupKey('PIP-0001')).toBe('pip-0001');
    expect(lookupKey('4006381333932')).toBe('4006381333932');
    expect(gtin14('4006381333932')).toBeUndefined();
  });

  it('lists the texts a GTIN-14 is written as', () => {
    expect(gtinForms('00036000291452')).toEqual(['00036000291452', '0036000291452', '036000291452']);
    expect(gtinForms('04006381333931')).toEqual(['04006381333931', '4006381333931']);
    expect(gtinForms('09501101530003')).toEqual(['09501101530003', '9501101530003']);
    expect(gtinForms('00000096385074')).toEqual(['00000096385074', '0000096385074', '000096385074', '96385074']);
  });
});

describe('scans', () => {
  it('strips the Enter, tabs, a leading FNC1 and a symbology identifier', () => {
    expect(cleanScan('  4006381333931\r\n')).toEqual({ code: '4006381333931', symbology: undefined });
    expect(cleanScan(']E04006381333931')).toEqual({ code: '4006381333931', symbology: ']E0' });
    expect(cleanScan(`]d2${GS}0109501101530003`)).toEqual({ code: '0109501101530003', symbology: ']d2' });
  });

  it('finds the GTIN in a bracketed string, with GS separators, after a symbology identifier, or in a Digital Link', () => {
    const cases: [string, ...unknown[]][] = [
      ['(01)09501101530003(17)251231(10)AB12', undefined],
      ['(01) 09501101530003', undefined],
      ['(01)09501101530003', undefined],
      ['0109501101530003', undefined],
      ['010950110153000317251231', undefined],
      [`01095011015300031725123110AB12${GS}21XYZ`, undefined],
      [`10AB12${GS}0109501101530003`, ']d2'],
      [`10AB12${GS}0109501101530003`, undefined],
      ['01095011015300031725123110AB12', ']Q3'],
      [`21SERIAL${GS}17251231${GS}0109501101530003`, ']C1'],
      ['https://id.gs1.org/01/09501101530003/10/AB12?17=251231', undefined],
      ['https://example.com/01/9501101530003', undefined],
    ];
    for (const [text, symbology] of cases)
      expect([text, gs1Gtin(text, symbology as string | undefined)]).toEqual([text, '09501101530003']);
  });

  it('finds the GTIN of a valid (01) beside an element that is not valid', () => {
    expect(gs1Gtin('(01)09501101530003(17)251331(10)AB12')).toBe('09501101530003');
    expect(gs1Gtin('(14)x(01)09501101530003')).toBe('09501101530003');
    expect(gs1Gtin(`0109501101530003${GS}14251231`)).toBe('09501101530003');
  });

  it('finds no GTIN where there is none or its check digit is wrong', () => {
    expect(gs1Gtin('(01)09501101530004(17)251231')).toBeUndefined();
    expect(gs1Gtin('(17)251231(10)AB12')).toBeUndefined();
    expect(gs1Gtin('0109501101530004')).toBeUndefined();
    expect(gs1Gtin('PIP-0001')).toBeUndefined();
    expect(gs1Gtin('https://example.com/items/01')).toBeUndefined();
  });

  it('reads a scan into its exact text, SKU forms and key', () => {
    expect(readScan(' Pip-0001\n')).toEqual({
      exact: 'Pip-0001',
      skus: ['pip-0001'],
      key: 'pip-0001',
      gtin: undefined,
    });
    expect(readScan('0036000291452')).toEqual({
      exact: '0036000291452',
      skus: ['0036000291452', '00036000291452', '036000291452'],
      key: '00036000291452',
      gtin: '00036000291452',
    });
    const gs1 = readScan(`]d2${GS}0109501101530003${GS}10LOT7\r`)!;
    expect(gs1.key).toBe('09501101530003');
    expect(gs1.skus).toContain('9501101530003');
    expect(readScan(' \r\n')).toBeUndefined();
  });
});

describe('checkBarcode', () => {
  it('guesses the kind and keys the code', () => {
    expect(checkBarcode('4006381333931')).toEqual({ code: '4006381333931', kind: 'ean13', key: '04006381333931' });
    expect(checkBarcode(' 036000291452 ')).toEqual({ code: '036000291452', kind: 'upca', key: '00036000291452' });
    expect(checkBarcode('SHELF-A1')).toEqual({ code: 'SHELF-A1', kind: 'code128', key: 'shelf-a1' });
    expect(checkBarcode('Ölfilter 5')).toEqual({ code: 'Ölfilter 5', kind: 'other', key: 'ölfilter 5' });
  });

  it('stores a GS1 string as the GTIN it carries', () => {
    expect(checkBarcode('(01)09501101530003(17)251231(10)AB12')).toEqual({
      code: '09501101530003',
      kind: 'gtin14',
      key: '09501101530003',
    });
    expect(checkBarcode(`0109501101530003${GS}10AB12`)).toMatchObject({ code: '09501101530003' });
  });

  it('refuses a wrong check digit, given or guessed kind', () => {
    expect(checkBarcode('4006381333932')).toEqual({ error: "Invalid check digit in '4006381333932'" });
    expect(checkBarcode('036000291453', 'upca')).toEqual({ error: "Invalid check digit in '036000291453'" });
    expect(checkBarcode('09501101530004')).toEqual({ error: "Invalid check digit in '09501101530004'" });
  });

  it('refuses a GTIN kind of the wrong length and other bad codes', () => {
    expect(checkBarcode('036000291452', 'ean13')).toEqual({
      error: "'036000291452' is not a valid EAN-13: it must be 13 digits",
    });
    expect(checkBarcode('ABC', 'gtin14')).toEqual({ error: "'ABC' is not a valid GTIN-14: it must be 14 digits" });
    expect(checkBarcode('Ölfilter', 'code128')).toHaveProperty('error');
    expect(checkBarcode('A|B')).toEqual({ error: "Barcode 'A|B' must not contain '|'" });
    expect(checkBarcode(`A${GS}B`)).toEqual({ error: "Barcode 'A\\x1dB' contains control characters" });
    expect(checkBarcode('x'.repeat(101))).toEqual({ error: 'Barcode must be at most 100 characters' });
    expect(checkBarcode(' \r')).toEqual({ error: 'Barcode is required' });
  });

  it('a code128 kind may hold 13 digits with any check digit', () => {
    expect(checkBarcode('4006381333932', 'code128')).toEqual({
      code: '4006381333932',
      kind: 'code128',
      key: '4006381333932',
    });
  });
});
