/* eslint-disable no-control-regex -- a scan's control characters (FNC1/GS, Enter) are what these patterns look for */
/**
 * GS1 element strings as a scanner sends them (issue 42): the check digit, the scanner's noise and
 * symbology identifier, and one table-driven parser of the Application Identifiers (AIs) a
 * stores needs: what identifies a product, a lot, a serial, its dates and its measures. Pure: no
 * database, no I/O.
 *
 * The parser reads both written forms of an element string (GS1 General Specifications, 3.2):
 * - bracketed, as printed under a symbol: `(01)09501101530003(17)251231(10)AB12`;
 * - unbracketed, as a scanner transmits it: `01095011015300031725123110AB12<GS>21XYZ`, where a
 *   variable-length field ends at the FNC1 separator (sent as GS, \x1d) or at the end, and a
 *   fixed-length field at its length.
 * Each AI's data is checked against the table: its length, its characters (digits, or GS1's
 * character set 82), its date, its check digit. Dates YYMMDD become `YYYY-MM-DD`: day 00 is the
 * month's last day, and the century is the one that puts the year within -49..+50 years of today
 * (GS1 General Specifications, 7.12).
 */

/** The FNC1 separator as scanners transmit it: ASCII GS. */
export const GS = '\x1d';

/** The GS1 check digit of a body of digits (the GTIN without its last digit): weights 3,1,3,... from the right. */
export function gs1CheckDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i += 1) {
    const digit = body.charCodeAt(body.length - 1 - i) - 48;
    sum += i % 2 === 0 ? digit * 3 : digit;
  }
  return (10 - (sum % 10)) % 10;
}

const DIGITS = /^\d+$/;

/** Whether the digits (any length of 2 or more) end in their GS1 check digit. */
export function hasValidCheckDigit(digits: string): boolean {
  if (digits.length < 2 || !DIGITS.test(digits)) return false;
  return gs1CheckDigit(digits.slice(0, -1)) === digits.charCodeAt(digits.length - 1) - 48;
}

/** Control characters (C0, DEL, C1) and white space at either end of a scan: the scanner's Enter, tab, a leading FNC1/GS. */
const EDGE_NOISE = /^[\s\x00-\x1f\x7f-\x9f]+|[\s\x00-\x1f\x7f-\x9f]+$/g;
/** An AIM symbology identifier a scanner may prefix: `]` then the symbology letter and a modifier (`]C1`, `]d2`, `]Q3`, `]E0`). */
const SYMBOLOGY_ID = /^\][A-Za-z][0-9A-Za-z]/;
/** The identifiers of symbols that carry GS1 element strings: GS1-128, GS1 DataMatrix, GS1 QR, GS1 DataBar, GS1 DotCode. */
export const GS1_SYMBOLOGIES: ReadonlySet<string> = new Set([']C1', ']d2', ']Q3', ']e0', ']J1']);

/** A scan without the scanner's noise: the code, and the AIM symbology identifier it began with, if any. */
export function cleanScan(text: string): { code: string; symbology: string | undefined } {
  let code = text.replace(EDGE_NOISE, '');
  const symbology = SYMBOLOGY_ID.exec(code)?.[0];
  if (symbology) code = code.slice(symbology.length).replace(EDGE_NOISE, '');
  return { code, symbology };
}

/** What an AI's data is: digits, GS1's character set 82 (printable ASCII but space, #, $, @, [, \, ], ^, `, {, |, }, ~), or a YYMMDD date. */
export type Gs1Format = 'digits' | 'alphanumeric' | 'date';

/**
 * One Application Identifier: its data is exactly `length` characters (`fixed`) or 1 to `length`;
 * `checkDigit` when the data ends in a GS1 check digit; `decimals` for a measure's AI, whose last
 * digit is the number of decimals in its six digits (3103 001250 is 1.250).
 */
export type Gs1Ai = {
  ai: string;
  name: string;
  format: Gs1Format;
  length: number;
  fixed: boolean;
  checkDigit?: boolean;
  decimals?: number;
};

type Row = [
  ai: string,
  name: string,
  format: Gs1Format,
  length: number,
  fixed: 'fixed' | 'up to',
  checkDigit?: 'check digit',
];

/** The AIs read (GS1 General Specifications, 3.2). An AI outside it is refused as unknown. */
const AI_ROWS: Row[] = [
  ['00', 'SSCC', 'digits', 18, 'fixed', 'check digit'],
  ['01', 'GTIN', 'digits', 14, 'fixed', 'check digit'],
  ['02', 'GTIN of contained trade items', 'digits', 14, 'fixed', 'check digit'],
  ['10', 'Batch or lot number', 'alphanumeric', 20, 'up to'],
  ['11', 'Production date', 'date', 6, 'fixed'],
  ['12', 'Due date', 'date', 6, 'fixed'],
  ['13', 'Packaging date', 'date', 6, 'fixed'],
  ['15', 'Best before date', 'date', 6, 'fixed'],
  ['16', 'Sell by date', 'date', 6, 'fixed'],
  ['17', 'Expiry date', 'date', 6, 'fixed'],
  ['20', 'Variant', 'digits', 2, 'fixed'],
  ['21', 'Serial number', 'alphanumeric', 20, 'up to'],
  ['22', 'Consumer product variant', 'alphanumeric', 20, 'up to'],
  ['240', 'Additional product identification', 'alphanumeric', 30, 'up to'],
  ['241', 'Customer part number', 'alphanumeric', 30, 'up to'],
  ['250', 'Secondary serial number', 'alphanumeric', 30, 'up to'],
  ['251', 'Reference to source entity', 'alphanumeric', 30, 'up to'],
  ['253', 'Global Document Type Identifier', 'alphanumeric', 30, 'up to'],
  ['254', 'GLN extension component', 'alphanumeric', 20, 'up to'],
  ['30', 'Variable count', 'digits', 8, 'up to'],
  ['37', 'Count of trade items', 'digits', 8, 'up to'],
  ['400', "Customer's purchase order number", 'alphanumeric', 30, 'up to'],
  ['401', 'Global Identification Number for Consignment', 'alphanumeric', 30, 'up to'],
  ['402', 'Global Shipment Identification Number', 'digits', 17, 'fixed', 'check digit'],
  ['403', 'Routing code', 'alphanumeric', 30, 'up to'],
  ['410', 'Ship to GLN', 'digits', 13, 'fixed', 'check digit'],
  ['411', 'Bill to GLN', 'digits', 13, 'fixed', 'check digit'],
  ['412', 'Purchased from GLN', 'digits', 13, 'fixed', 'check digit'],
  ['413', 'Ship for GLN', 'digits', 13, 'fixed', 'check digit'],
  ['414', 'Location GLN', 'digits', 13, 'fixed', 'check digit'],
  ['415', 'Invoicing party GLN', 'digits', 13, 'fixed', 'check digit'],
  ['416', 'Production or service location GLN', 'digits', 13, 'fixed', 'check digit'],
  ['417', 'Party GLN', 'digits', 13, 'fixed', 'check digit'],
  ['420', 'Ship to postal code', 'alphanumeric', 20, 'up to'],
  ['422', 'Country of origin', 'digits', 3, 'fixed'],
  ['7003', 'Expiration date and time', 'digits', 10, 'fixed'],
  ['8004', 'Global Individual Asset Identifier', 'alphanumeric', 30, 'up to'],
  ['90', 'Internal: mutually agreed', 'alphanumeric', 30, 'up to'],
  ...['91', '92', '93', '94', '95', '96', '97', '98', '99'].map((ai): Row => [
    ai,
    'Internal: company',
    'alphanumeric',
    90,
    'up to',
  ]),
];

/** The measures' AIs: the first three digits; the fourth is the number of decimals, 0 to 5. */
const MEASURES: [prefix: string, name: string][] = [
  ['310', 'Net weight (kg)'],
  ['311', 'Length (m)'],
  ['312', 'Width (m)'],
  ['313', 'Depth (m)'],
  ['314', 'Area (m²)'],
  ['315', 'Net volume (l)'],
  ['316', 'Net volume (m³)'],
  ['320', 'Net weight (lb)'],
  ['330', 'Logistic weight (kg)'],
  ['335', 'Logistic volume (l)'],
];

export const GS1_AIS: ReadonlyMap<string, Gs1Ai> = new Map([
  ...AI_ROWS.map(([ai, name, format, length, fixed, checkDigit]): [string, Gs1Ai] => [
    ai,
    { ai, name, format, length, fixed: fixed === 'fixed', ...(checkDigit ? { checkDigit: true } : {}) },
  ]),
  ...MEASURES.flatMap(([prefix, name]) =>
    [0, 1, 2, 3, 4, 5].map((decimals): [string, Gs1Ai] => [
      `${prefix}${decimals}`,
      { ai: `${prefix}${decimals}`, name, format: 'digits', length: 6, fixed: true, decimals },
    ]),
  ),
]);

/** AIs are prefix-free: the one starting a field is the table's 2-, 3- or 4-digit AI that begins it. */
function aiAt(text: string, at: number): Gs1Ai | undefined {
  for (const length of [2, 3, 4]) {
    const ai = GS1_AIS.get(text.slice(at, at + length));
    if (ai) return ai;
  }
  return undefined;
}

/** GS1 character set 82 (GS1 General Specifications, 7.11, figure 7.11-1). */
const CHARACTER_SET_82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]+$/;

export type Gs1ErrorReason =
  'empty' | 'syntax' | 'unknown-ai' | 'length' | 'characters' | 'date' | 'check-digit' | 'duplicate';
export type Gs1Error = { reason: Gs1ErrorReason; ai: string | undefined; message: string };

/**
 * What a GS1 element string carries. `elements` maps each AI to its data (dates as `YYYY-MM-DD`,
 * measures as decimal text such as `1.250`); the named fields are the ones a stores uses.
 */
export type Gs1Data = {
  elements: Record<string, string>;
  gtin: string | undefined;
  sscc: string | undefined;
  lotNumber: string | undefined;
  serial: string | undefined;
  expiresOn: string | undefined;
  bestBefore: string | undefined;
  productionDate: string | undefined;
};

/**
 * The parse: ok with the data, or the first error found with the elements that were valid (a
 * caller that needs only the GTIN may still use `elements['01']`; the rest of an unbracketed
 * string is unreadable after an unknown AI or a field cut short).
 */
export type Gs1Result = ({ ok: true } & Gs1Data) | { ok: false; error: Gs1Error; elements: Record<string, string> };

const label = (ai: Gs1Ai) => `(${ai.ai}) ${ai.name}`;
const lastDayOfMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** A YYMMDD date as `YYYY-MM-DD` (day 00: the month's last day; the century within -49..+50 years of today), or undefined. */
function gs1Date(yymmdd: string, today: Date): string | undefined {
  const [yy, month, day] = [0, 2, 4].map((at) => Number(yymmdd.slice(at, at + 2)));
  const thisYear = today.getUTCFullYear();
  const century = thisYear - (thisYear % 100);
  const difference = yy - (thisYear % 100);
  const year = century + yy + (difference > 50 ? -100 : difference < -49 ? 100 : 0);
  if (month < 1 || month > 12 || day > lastDayOfMonth(year, month)) return undefined;
  const date = day === 0 ? lastDayOfMonth(year, month) : day;
  return `${year}-${String(month).padStart(2, '0')}-${String(date).padStart(2, '0')}`;
}

/** An AI's data checked against its table row: the value to keep, or the error. */
function readValue(ai: Gs1Ai, data: string, today: Date): { value: string } | { error: Gs1Error } {
  const fail = (reason: Gs1ErrorReason, message: string) => ({
    error: { reason, ai: ai.ai, message: `${label(ai)}: ${message}` },
  });
  if (data.length === 0 || data.length > ai.length || (ai.fixed && data.length !== ai.length))
    return fail('length', `'${data}' must be ${ai.fixed ? '' : '1 to '}${ai.length} characters`);
  if (ai.format === 'alphanumeric' ? !CHARACTER_SET_82.test(data) : !DIGITS.test(data))
    return fail(
      'characters',
      `'${data}' may hold only ${ai.format === 'alphanumeric' ? 'GS1 characters (set 82)' : 'digits'}`,
    );
  if (ai.checkDigit && !hasValidCheckDigit(data)) return fail('check-digit', `invalid check digit in '${data}'`);
  if (ai.format === 'date') {
    const date = gs1Date(data, today);
    return date ? { value: date } : fail('date', `'${data}' is not a date (YYMMDD)`);
  }
  if (ai.decimals !== undefined) return { value: (Number(data) / 10 ** ai.decimals).toFixed(ai.decimals) };
  return { value: data };
}

type Field = { ai: Gs1Ai; data: string } | { error: Gs1Error };

/** `(01)09501101530003(10)AB 12`: the fields of a bracketed string (white space and GS, which no AI's data holds, dropped). */
function bracketedFields(text: string): Field[] {
  const fields: Field[] = [];
  let at = 0;
  while (at < text.length) {
    const close = text.indexOf(')', at);
    const code = text.slice(at + 1, close);
    if (text[at] !== '(' || close === -1 || !DIGITS.test(code))
      return [
        ...fields,
        { error: { reason: 'syntax', ai: undefined, message: `'${text.slice(at)}' is not an (AI)data element` } },
      ];
    const open = text.indexOf('(', close);
    const end = open === -1 ? text.length : open;
    const ai = GS1_AIS.get(code);
    fields.push(
      ai
        ? { ai, data: text.slice(close + 1, end).replace(/[\s\x1d]/g, '') }
        : { error: { reason: 'unknown-ai', ai: code, message: `Unknown GS1 Application Identifier (${code})` } },
    );
    at = end;
  }
  return fields;
}

/** `0109501101530003<GS>10AB12`: the fields of an unbracketed string, up to an unknown AI or a field cut short. */
function unbracketedFields(text: string): Field[] {
  const fields: Field[] = [];
  let at = 0;
  while (at < text.length) {
    if (text[at] === GS) {
      at += 1;
      continue;
    }
    const ai = aiAt(text, at);
    if (!ai)
      return [
        ...fields,
        {
          error: {
            reason: 'unknown-ai',
            ai: undefined,
            message: `Unknown GS1 Application Identifier at '${text.slice(at).replaceAll(GS, '<GS>')}'`,
          },
        },
      ];
    const start = at + ai.ai.length;
    const separator = text.indexOf(GS, start);
    const end = ai.fixed ? start + ai.length : separator === -1 ? text.length : separator;
    const data = text.slice(start, end);
    if (ai.fixed && (end > text.length || data.includes(GS))) {
      const cut = data.split(GS)[0];
      return [
        ...fields,
        { error: { reason: 'length', ai: ai.ai, message: `${label(ai)}: '${cut}' must be ${ai.length} characters` } },
      ];
    }
    fields.push({ ai, data });
    at = end;
  }
  return fields;
}

/**
 * Parses a GS1 element string, bracketed or not, as scanned (the scanner's Enter, a leading FNC1
 * and a symbology identifier such as `]d2` or `]C1` are dropped). `today` sets the century of the
 * dates. Never throws: a string that is not GS1, an unknown AI, a wrong length, a character outside
 * the AI's set, a bad date, a wrong check digit or an AI given twice with different data is an
 * error value.
 */
export function parseGs1(scan: string, today: Date = new Date()): Gs1Result {
  const { code } = cleanScan(scan);
  if (code === '')
    return { ok: false, error: { reason: 'empty', ai: undefined, message: 'The scan is empty' }, elements: {} };
  const fields = code.startsWith('(') ? bracketedFields(code) : unbracketedFields(code);
  const elements: Record<string, string> = {};
  let firstError: Gs1Error | undefined;
  for (const field of fields) {
    if ('error' in field) {
      firstError ??= field.error;
      continue;
    }
    const read = readValue(field.ai, field.data, today);
    const earlier = elements[field.ai.ai];
    if ('error' in read) firstError ??= read.error;
    else if (earlier === undefined) elements[field.ai.ai] = read.value;
    else if (earlier !== read.value)
      firstError ??= {
        reason: 'duplicate',
        ai: field.ai.ai,
        message: `${label(field.ai)} is given twice with different data`,
      };
  }
  if (firstError) return { ok: false, error: firstError, elements };
  return {
    ok: true,
    elements,
    gtin: elements['01'],
    sscc: elements['00'],
    lotNumber: elements['10'],
    serial: elements['21'],
    expiresOn: elements['17'],
    bestBefore: elements['15'],
    productionDate: elements['11'],
  };
}
