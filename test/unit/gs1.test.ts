import { describe, expect, it } from 'vitest';
import { GS1_AIS, parseGs1, type Gs1ErrorReason, type Gs1Result } from '../../src/lib/gs1';

const GS = '\x1d';
/** The dates' century is set by today: these tests parse as on 15 June 2026. */
const TODAY = new Date(Date.UTC(2026, 5, 15));
const parse = (scan: string, today = TODAY) => parseGs1(scan, today);

const GTIN = '09501101530003';
const SSCC = '106141412345678908';
const GLN = '4012345000009';

/** The error of a parse that must fail. */
function errorOf(result: Gs1Result) {
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.elements)}`);
  return result.error;
}

/** Asserts the reason and AI of each failing scan, as [scan, reason, ai]. */
function expectErrors(cases: [string, Gs1ErrorReason, string | undefined][]) {
  for (const [scan, reason, ai] of cases) {
    const error = errorOf(parse(scan));
    expect([scan, error.reason, error.ai]).toEqual([scan, reason, ai]);
    expect(error.message.length).toBeGreaterThan(0);
  }
}

describe('GS1 element strings: the two written forms', () => {
  it('reads a bracketed string into its elements and the named fields', () => {
    expect(parse(`(01)${GTIN}(17)251231(10)AB12(21)SN-7(11)250101(15)251130`)).toEqual({
      ok: true,
      elements: {
        '01': GTIN,
        '17': '2025-12-31',
        '10': 'AB12',
        '21': 'SN-7',
        '11': '2025-01-01',
        '15': '2025-11-30',
      },
      gtin: GTIN,
      sscc: undefined,
      lotNumber: 'AB12',
      serial: 'SN-7',
      expiresOn: '2025-12-31',
      bestBefore: '2025-11-30',
      productionDate: '2025-01-01',
    });
  });

  it('reads the same string unbracketed, a GS ending each variable-length field but the last', () => {
    const bracketed = parse(`(01)${GTIN}(17)251231(10)AB12(21)SN-7`);
    expect(parse(`01${GTIN}17251231${'10'}AB12${GS}21SN-7`)).toEqual(bracketed);
    expect(parse(`10AB12${GS}21SN-7${GS}01${GTIN}17251231`)).toEqual(bracketed);
  });

  it('needs no separator after a fixed-length field, and tolerates one', () => {
    const expected = { '01': GTIN, '17': '2025-12-31', '10': 'AB12' };
    expect(parse(`01${GTIN}1725123110AB12`)).toMatchObject({ ok: true, elements: expected });
    expect(parse(`01${GTIN}${GS}17251231${GS}10AB12${GS}`)).toMatchObject({ ok: true, elements: expected });
  });

  it('carries parentheses in data only unbracketed, where they cannot be read as an AI', () => {
    expect(parse(`01${GTIN}21SN(2)`)).toMatchObject({ ok: true, serial: 'SN(2)' });
    expect(parse(`(01)${GTIN}(21)SN(2)`)).toMatchObject({ ok: false, error: { reason: 'unknown-ai', ai: '2' } });
  });

  it("drops the scanner's symbology identifier, leading FNC1 and Enter", () => {
    const expected = parse(`(01)${GTIN}(17)251231(10)LOT7`);
    for (const scan of [
      `]d2${GS}01${GTIN}17251231${'10'}LOT7\r\n`,
      `]C1${'01'}${GTIN}1725123110LOT7`,
      `]Q3${'01'}${GTIN}1725123110LOT7`,
      `]e0${'01'}${GTIN}1725123110LOT7`,
      `${GS}01${GTIN}1725123110LOT7\t`,
      ` ]d2(01)${GTIN}(17)251231(10)LOT7 `,
    ])
      expect([JSON.stringify(scan), parse(scan)]).toEqual([JSON.stringify(scan), expected]);
  });

  it('drops the white space and GS of a bracketed string as printed or typed', () => {
    expect(parse(`(01) ${GTIN} (10) AB12${GS}(17)251231`)).toMatchObject({
      ok: true,
      elements: { '01': GTIN, '10': 'AB12', '17': '2025-12-31' },
    });
  });
});

describe('GS1 Application Identifiers: the table', () => {
  it('reads each kind of AI: identifiers with check digits, digits, GS1 text, dates and measures', () => {
    const cases: [string, string, string][] = [
      ['00', SSCC, SSCC],
      ['01', GTIN, GTIN],
      ['02', '95011015300090', '95011015300090'],
      ['10', 'Lot/42-a_B.c', 'Lot/42-a_B.c'],
      ['11', '240229', '2024-02-29'],
      ['12', '270101', '2027-01-01'],
      ['13', '260615', '2026-06-15'],
      ['15', '261031', '2026-10-31'],
      ['16', '261030', '2026-10-30'],
      ['17', '281231', '2028-12-31'],
      ['20', '07', '07'],
      ['21', "SN!%&'*+,:;<=>?", "SN!%&'*+,:;<=>?"],
      ['22', 'CPV1', 'CPV1'],
      ['240', 'ADD-ID', 'ADD-ID'],
      ['30', '12345678', '12345678'],
      ['37', '48', '48'],
      ['400', 'PO-17', 'PO-17'],
      ['402', '12345678901234560', '12345678901234560'],
      ['410', GLN, GLN],
      ['414', GLN, GLN],
      ['422', '276', '276'],
      ['90', 'INT-90', 'INT-90'],
      ['99', 'X'.repeat(90), 'X'.repeat(90)],
      ['3100', '000025', '25'],
      ['3103', '001250', '1.250'],
      ['3155', '150000', '1.50000'],
      ['3302', '012345', '123.45'],
    ];
    for (const [ai, data, value] of cases) {
      // Bracketed, and unbracketed with the separator a variable-length field needs before the next AI.
      expect([ai, parse(`(${ai})${data}(01)${GTIN}`)]).toMatchObject([ai, { ok: true, elements: { [ai]: value } }]);
      expect([ai, parse(`${ai}${data}${GS}01${GTIN}`)]).toMatchObject([ai, { ok: true, elements: { [ai]: value } }]);
    }
  });

  it('names each AI with its length, format and check digit', () => {
    expect(GS1_AIS.get('17')).toEqual({ ai: '17', name: 'Expiry date', format: 'date', length: 6, fixed: true });
    expect(GS1_AIS.get('10')).toEqual({
      ai: '10',
      name: 'Batch or lot number',
      format: 'alphanumeric',
      length: 20,
      fixed: false,
    });
    expect(GS1_AIS.get('01')).toMatchObject({ format: 'digits', length: 14, fixed: true, checkDigit: true });
    expect(GS1_AIS.get('3103')).toMatchObject({ name: 'Net weight (kg)', length: 6, fixed: true, decimals: 3 });
    expect(GS1_AIS.get('3106')).toBeUndefined();
  });
});

describe('GS1 dates', () => {
  it('reads day 00 as the last day of the month', () => {
    const cases: [string, string][] = [
      ['251200', '2025-12-31'],
      ['260400', '2026-04-30'],
      ['260200', '2026-02-28'],
      ['280200', '2028-02-29'],
      ['000200', '2000-02-29'],
    ];
    for (const [yymmdd, date] of cases)
      expect([yymmdd, parse(`(17)${yymmdd}`, TODAY)]).toMatchObject([yymmdd, { expiresOn: date }]);
  });

  it('puts the year within -49..+50 years of today (GS1 General Specifications, 7.12)', () => {
    const cases: [Date, string, string][] = [
      [TODAY, '760101', '2076-01-01'],
      [TODAY, '770101', '1977-01-01'],
      [TODAY, '000101', '2000-01-01'],
      [new Date(Date.UTC(2050, 0, 1)), '000101', '2100-01-01'],
      [new Date(Date.UTC(2050, 0, 1)), '010101', '2001-01-01'],
      [new Date(Date.UTC(2050, 0, 1)), '990101', '2099-01-01'],
      [new Date(Date.UTC(1999, 11, 31)), '490101', '2049-01-01'],
      [new Date(Date.UTC(1999, 11, 31)), '500101', '1950-01-01'],
    ];
    for (const [today, yymmdd, date] of cases)
      expect([today.toISOString(), yymmdd, parse(`(17)${yymmdd}`, today)]).toMatchObject([
        today.toISOString(),
        yymmdd,
        { expiresOn: date },
      ]);
  });

  it('takes today from the clock when none is given', () => {
    const thisYear = new Date().getUTCFullYear();
    expect(parseGs1(`(17)${String(thisYear % 100).padStart(2, '0')}0615`)).toMatchObject({
      expiresOn: `${thisYear}-06-15`,
    });
  });
});

describe('GS1 errors: a value, never a throw', () => {
  it('refuses an empty scan and text that is not an element string', () => {
    expectErrors([
      [' \r\n', 'empty', undefined],
      [`(01${GTIN}`, 'syntax', undefined],
      [`(01)${GTIN}(1O)AB`, 'syntax', undefined],
      ['PIP-0001', 'unknown-ai', undefined],
    ]);
  });

  it('refuses an unknown Application Identifier', () => {
    expectErrors([
      [`(01)${GTIN}(14)251231`, 'unknown-ai', '14'],
      [`(3106)000001`, 'unknown-ai', '3106'],
      [`01${GTIN}14251231`, 'unknown-ai', undefined],
    ]);
  });

  it('refuses data of the wrong length', () => {
    expectErrors([
      [`(01)${GTIN.slice(1)}`, 'length', '01'],
      [`(17)2512310`, 'length', '17'],
      [`(10)${'A'.repeat(21)}`, 'length', '10'],
      ['(10)', 'length', '10'],
      [`01${GTIN.slice(0, 10)}`, 'length', '01'],
      [`01${GTIN.slice(0, 10)}${GS}10AB12`, 'length', '01'],
      [`01${GTIN}10${GS}17251231`, 'length', '10'],
    ]);
  });

  it('refuses characters outside the AI’s set', () => {
    expectErrors([
      ['(10)AB#12', 'characters', '10'],
      ['(21)Größe', 'characters', '21'],
      ['(30)12A', 'characters', '30'],
      [`(01)0950110153000A`, 'characters', '01'],
      ['(17)25I231', 'characters', '17'],
    ]);
  });

  it('refuses a date that is not one', () => {
    expectErrors([
      ['(17)251331', 'date', '17'],
      ['(17)250001', 'date', '17'],
      ['(17)250230', 'date', '17'],
      ['(15)270229', 'date', '15'],
      ['(11)250432', 'date', '11'],
    ]);
  });

  it('refuses a wrong check digit in a GTIN, an SSCC and a GLN', () => {
    expectErrors([
      ['(01)09501101530004', 'check-digit', '01'],
      ['(02)09501101530004', 'check-digit', '02'],
      ['(00)106141412345678907', 'check-digit', '00'],
      ['(410)4012345000008', 'check-digit', '410'],
    ]);
  });

  it('refuses an AI given twice with different data, and accepts it repeated alike', () => {
    expectErrors([[`(10)A(10)B`, 'duplicate', '10']]);
    expect(parse(`(10)A(10)A`)).toMatchObject({ ok: true, lotNumber: 'A' });
  });

  it('says which AI is wrong and why in its message', () => {
    expect(errorOf(parse('(17)251331'))).toEqual({
      reason: 'date',
      ai: '17',
      message: "(17) Expiry date: '251331' is not a date (YYMMDD)",
    });
    expect(errorOf(parse('(01)09501101530004')).message).toBe("(01) GTIN: invalid check digit in '09501101530004'");
    expect(errorOf(parse(`01${GTIN}14251231${GS}10AB`)).message).toBe(
      "Unknown GS1 Application Identifier at '14251231<GS>10AB'",
    );
  });

  it('keeps the valid elements beside the error', () => {
    expect(parse(`(01)${GTIN}(17)251331(10)AB12`)).toMatchObject({ ok: false, elements: { '01': GTIN, '10': 'AB12' } });
    expect(parse(`01${GTIN}10AB12${GS}14251231`)).toMatchObject({ ok: false, elements: { '01': GTIN, '10': 'AB12' } });
  });
});
