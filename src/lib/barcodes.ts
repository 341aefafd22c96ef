/* eslint-disable no-control-regex -- a scan's control characters (FNC1/GS, Enter) are what these patterns look for */
/**
 * Barcodes as a stores scans them (issue 31): the kind of a code, the GTIN a GS1 element string
 * carries (read by src/lib/gs1.ts, which also owns check digits and the scanner's noise), and the one lookup key every code is stored and compared by. Pure: no
 * database, no I/O.
 *
 * The normalisation rule. A numeric GTIN (8, 12, 13 or 14 digits with a valid GS1 check digit:
 * EAN-8, UPC-A, EAN-13, GTIN-14) is keyed by its GTIN-14 form, zero-padded on the left, so the
 * UPC-A 036000291452, its EAN-13 form 0036000291452 and the GTIN-14 00036000291452 are one code.
 * Any other code is keyed by its text in lower case (codes, like SKUs, are matched case-insensitively).
 * A scanned GS1 element string carrying AI (01) — `(01)09501101530003(17)251231`, or the same
 * without parentheses with the FNC1/GS (\x1d) separator a scanner sends, or a GS1 Digital Link
 * URL `https://id.gs1.org/01/09501101530003` — is keyed by the GTIN it carries.
 */

import { cleanScan, GS, GS1_SYMBOLOGIES, hasValidCheckDigit, parseGs1 } from './gs1';

export const BARCODE_KINDS = ['ean13', 'upca', 'gtin14', 'code128', 'other'] as const;
export type BarcodeKind = (typeof BARCODE_KINDS)[number];

/** The GTIN kinds and the number of digits each has. */
const GTIN_LENGTH: Partial<Record<BarcodeKind, number>> = { ean13: 13, upca: 12, gtin14: 14 };
const GTIN_NAME: Partial<Record<BarcodeKind, string>> = { ean13: 'EAN-13', upca: 'UPC-A', gtin14: 'GTIN-14' };

const DIGITS = /^\d+$/;
/** Lengths of GTIN-8 (EAN-8), GTIN-12 (UPC-A), GTIN-13 (EAN-13) and GTIN-14. */
const GTIN_LENGTHS = new Set([8, 12, 13, 14]);
/** Printable ASCII: what Code 128 encodes (besides its function characters). */
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** The GTIN-14 form of a GTIN-8/12/13/14 with a valid check digit (zero-padded on the left); undefined for anything else. */
export function gtin14(code: string): string | undefined {
  if (!DIGITS.test(code) || !GTIN_LENGTHS.has(code.length) || !hasValidCheckDigit(code)) return undefined;
  return code.padStart(14, '0');
}

/**
 * The texts a GTIN-14 is written as: itself, and its 13-, 12- and 8-digit forms where its leading
 * zeros allow (00036000291452 is also 0036000291452 and 036000291452). An item whose SKU is
 * written as one of them answers to the GTIN.
 */
export function gtinForms(gtin: string): string[] {
  const forms = [gtin];
  for (const length of [13, 12, 8]) {
    if (/^0+$/.test(gtin.slice(0, 14 - length))) forms.push(gtin.slice(14 - length));
  }
  return forms;
}

/**
 * The kind of a code from its text: 13 digits is ean13, 12 upca, 14 gtin14 (their check digits
 * are checked by checkBarcode, not here); any other printable ASCII text (an EAN-8, an internal
 * code, a SKU) is code128, which prints it; anything else (non-ASCII text) is other.
 */
export function guessKind(code: string): BarcodeKind {
  if (DIGITS.test(code)) {
    if (code.length === 13) return 'ean13';
    if (code.length === 12) return 'upca';
    if (code.length === 14) return 'gtin14';
  }
  return PRINTABLE_ASCII.test(code) ? 'code128' : 'other';
}

/** A GS1 Digital Link URI (`https://id.gs1.org/01/09501101530003/10/AB12?17=251231`): the GTIN-14 of its /01/ path. */
function gtinInDigitalLink(text: string): string | undefined {
  const match = /^https?:\/\/[^/?#\s]+(?:\/[^?#\s]*)?\/01\/(\d{8}|\d{12,14})(?:[/?#]|$)/i.exec(text);
  return match ? gtin14(match[1]) : undefined;
}

/**
 * The GTIN-14 a GS1 element string carries in AI (01): bracketed, or unbracketed with GS
 * separators (read as such when the scanner named a GS1 symbology, when it holds a GS, or when it
 * starts with 01 and a valid GTIN-14), or a GS1 Digital Link URI. Undefined when the
 * text is none of these or its GTIN's check digit is wrong; a valid (01) counts even when another
 * element of the string is not (a bad expiry date does not hide the product). The text is as
 * cleanScan leaves it.
 */
export function gs1Gtin(text: string, symbology?: string): string | undefined {
  if (/^https?:/i.test(text)) return gtinInDigitalLink(text);
  const looksGs1 =
    text.startsWith('(') ||
    (symbology !== undefined && GS1_SYMBOLOGIES.has(symbology)) ||
    text.includes(GS) ||
    (text.startsWith('01') && gtin14(text.slice(2, 16)) !== undefined);
  return looksGs1 ? parseGs1(text).elements['01'] : undefined;
}

/** The key a stored code is kept and compared by: its GTIN-14 when it is a GTIN, else its text in lower case. */
export function lookupKey(code: string): string {
  return gtin14(code) ?? code.toLowerCase();
}

/**
 * What a scanned or typed text is looked up by: `exact`, the text as cleaned (a SKU written exactly
 * so wins over one differing in case); `skus`, the lower-case texts an item's SKU may be written as
 * (the text, and every form of the GTIN it carries); `key`, the barcode lookup key. Undefined for
 * an empty scan.
 */
export type ScannedCode = { exact: string; skus: string[]; key: string; gtin: string | undefined };

export function readScan(text: string): ScannedCode | undefined {
  const { code, symbology } = cleanScan(text);
  if (code === '') return undefined;
  const gtin = gtin14(code) ?? gs1Gtin(code, symbology);
  const trimmed = text.trim();
  const skus = new Set([code.toLowerCase(), trimmed.toLowerCase(), ...(gtin ? gtinForms(gtin) : [])]);
  skus.delete('');
  return { exact: code, skus: [...skus], key: gtin ?? code.toLowerCase(), gtin };
}

/**
 * The lot a scanned GS1 element string carries (issue 42): its (10) lot number and its (17) expiry
 * (`YYYY-MM-DD`, null when the scan has none). Undefined when the text is not a GS1 element string
 * with a valid (01) GTIN (a SKU such as `10042` is not read as lot `042`), when it carries no (10),
 * or when any of its elements is invalid (a bad expiry does not give a lot without its date).
 */
export function scannedLot(text: string): { lotNumber: string; expiresOn: string | null } | undefined {
  const { code, symbology } = cleanScan(text);
  if (code === '' || /^https?:/i.test(code) || gs1Gtin(code, symbology) === undefined) return undefined;
  const parsed = parseGs1(text);
  if (!parsed.ok || parsed.lotNumber === undefined) return undefined;
  return { lotNumber: parsed.lotNumber, expiresOn: parsed.expiresOn ?? null };
}

/** A barcode as it is stored: the code (trimmed; a GS1 string's GTIN), its kind and its lookup key. */
export type CheckedBarcode = { code: string; kind: BarcodeKind; key: string };

export const MAX_BARCODE_LENGTH = 100;
/** The character the export joins an item's codes with (and the import splits a text cell on); no code may hold it. */
export const BARCODE_SEPARATOR = '|';

/**
 * Checks a code to store as a barcode, with its kind (guessed when absent): an error message for a
 * bad one (400), else the code to store. A GS1 element string or Digital Link is stored as the
 * GTIN-14 it carries (its lot and expiry differ from one bottle to the next; the GTIN names the
 * product). ean13, upca and gtin14 must have their number of digits and a valid check digit;
 * code128 printable ASCII; no code may hold control characters or the export's separator `|`.
 */
export function checkBarcode(input: string, kind?: BarcodeKind): CheckedBarcode | { error: string } {
  const { code: cleaned, symbology } = cleanScan(input);
  if (cleaned === '') return { error: 'Barcode is required' };
  const carried = gtin14(cleaned) === undefined ? gs1Gtin(cleaned, symbology) : undefined;
  const code = carried ?? cleaned;
  const chosen = kind ?? (carried ? 'gtin14' : guessKind(code));
  if (code.length > MAX_BARCODE_LENGTH) return { error: `Barcode must be at most ${MAX_BARCODE_LENGTH} characters` };
  if (/[\x00-\x1f\x7f-\x9f]/.test(code)) return { error: `Barcode '${printable(code)}' contains control characters` };
  if (code.includes(BARCODE_SEPARATOR)) return { error: `Barcode '${code}' must not contain '${BARCODE_SEPARATOR}'` };
  const length = GTIN_LENGTH[chosen];
  if (length !== undefined) {
    if (!DIGITS.test(code) || code.length !== length)
      return { error: `'${code}' is not a valid ${GTIN_NAME[chosen]}: it must be ${length} digits` };
    if (!hasValidCheckDigit(code)) return { error: `Invalid check digit in '${code}'` };
  }
  if (chosen === 'code128' && !PRINTABLE_ASCII.test(code))
    return { error: `'${code}' cannot be a Code 128 barcode: only printable ASCII characters` };
  return { code, kind: chosen, key: lookupKey(code) };
}

/** A code with its control characters shown as `\xNN`, for a message. */
const printable = (code: string) =>
  code.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
