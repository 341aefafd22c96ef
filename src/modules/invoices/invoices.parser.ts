import { D, money } from '../../lib/money';

/** What the parser reads from an invoice's text. Amounts are decimal strings. */
export type ParsedInvoice = {
  supplierName: string | null;
  invoiceNumber: string | null;
  total: string | null;
  items: ParsedInvoiceLine[];
};

export type ParsedInvoiceLine = { name: string; quantity: number; unitPrice: string };

/**
 * A longer line (whitespace collapsed) is skipped: no invoice prints an order line, a total or
 * a supplier on 2,000 characters, and a bound on each line keeps the reading of a hostile PDF
 * short even in the worker.
 */
export const MAX_LINE_LENGTH = 2_000;

// Every pattern below is linear in the line's length: each token has a bounded length, and a
// pattern that reads a free-text name has it anchored at the start (^) with only bounded tokens
// after it, so the engine tries each end of the name once, never a name inside a name.

// An amount: optional currency (symbol or code), digits with optional thousands separators, optional decimals.
const CURRENCY = String.raw`(?:[£$€]|GBP|USD|EUR)`;
const NUMBER = String.raw`\d{1,3}(?:[,.]\d{3}){1,5}(?:[.,]\d{1,2})?|\d{1,15}(?:[.,]\d{1,2})?`;
const AMOUNT = String.raw`-?${CURRENCY}?\s?-?(?:${NUMBER})(?:\s?${CURRENCY})?`;
const QTY = String.raw`\d{1,6}(?:\.\d{1,2})?`;

const amountAnywhere = new RegExp(AMOUNT, 'gi');

/**
 * Turns a printed amount into a canonical decimal string: "£1,234.50", "€1.234,50",
 * "1 234.50 EUR" and "12,50" all work. The last separator followed by one or two digits is
 * the decimal point; any other separator groups thousands.
 */
export function parseAmount(text: string): string | null {
  const cleaned = text.replace(/[£$€]|GBP|USD|EUR|\s/gi, '');
  if (!/^-?[\d.,]+$/.test(cleaned) || !/\d/.test(cleaned)) return null;
  const negative = cleaned.startsWith('-');
  const body = cleaned.replace(/^-/, '');
  const match = /^(.*?)(?:[.,](\d{1,2}))?$/.exec(body);
  if (!match) return null;
  const whole = match[1].replace(/[.,]/g, '');
  if (whole === '' || !/^\d+$/.test(whole)) return null;
  const value = new D(`${whole}.${match[2] ?? '0'}`);
  return money(negative ? value.negated() : value);
}

const hasCurrency = (text: string) => new RegExp(CURRENCY, 'i').test(text);
const hasCents = (text: string) => /[.,]\d{2}\b/.test(text);

/** Lines the parser must never take for an order line. */
const SUMMARY_LINE =
  /^(?:sub-?\s?total|(?:grand\s+|net\s+|invoice\s+)?total|amount\s+(?:due|payable|paid)|balance\s+(?:due|owing|payable)|vat|tax|gst|discount|invoice|inv\b|date|due\b|payment|iban|account|sort\s+code|page\b|terms|bill\s+to|ship\s+to|deliver\s+to|tel\b|phone|e-?mail|order\s+(?:no|number|date|ref)|po\b|customer|reference)\b/i;
const HEADER_WORD = /\b(?:(description|item|product|details)|(qty|quantity)|units?)\b/gi;

/**
 * A table heading: a description word followed later by a quantity or unit word, or a quantity
 * word followed later by a description word. One pass over the words, never a `.*` between them.
 */
function isHeaderLine(line: string): boolean {
  let description = false;
  let quantity = false;
  for (const m of line.matchAll(HEADER_WORD)) {
    if (m[1] !== undefined) {
      if (quantity) return true;
      description = true;
    } else {
      if (description) return true;
      if (m[2] !== undefined) quantity = true;
    }
  }
  return false;
}

type LinePattern = {
  regex: RegExp;
  pick: (m: RegExpExecArray) => { name: string; qty: string; price: string; amount?: string };
};

// The tabular forms of real invoices, most specific first.
const LINE_PATTERNS: LinePattern[] = [
  // "3 x Safety goggles @ £4.50 £13.50" / "3 x Safety goggles at 4.50"
  {
    regex: new RegExp(String.raw`^(${QTY})\s*[x×]\s+(.+?)\s+(?:@|at)\s*(${AMOUNT})(?:\s+(${AMOUNT}))?$`, 'i'),
    pick: (m) => ({ qty: m[1], name: m[2], price: m[3], amount: m[4] }),
  },
  // "Safety goggles 3 x £4.50 = £13.50" / "Safety goggles 3 @ 4.50"
  {
    regex: new RegExp(
      String.raw`^(.+?)\s+(${QTY})\s*(?:[x×@]|pcs?\s*[x×@]?)\s*(${AMOUNT})(?:\s*=?\s*(${AMOUNT}))?$`,
      'i',
    ),
    pick: (m) => ({ name: m[1], qty: m[2], price: m[3], amount: m[4] }),
  },
  // "Nitrile gloves 10 £1,234.50 £12,345.00" (description qty unit-price amount)
  {
    regex: new RegExp(String.raw`^([^A-Za-z]*[A-Za-z].*?)\s+(${QTY})\s+(${AMOUNT})\s+(${AMOUNT})$`, 'i'),
    pick: (m) => ({ name: m[1], qty: m[2], price: m[3], amount: m[4] }),
  },
  // "3 Safety goggles 4.50 13.50" (qty description unit-price amount)
  {
    regex: new RegExp(String.raw`^(${QTY})\s+([^A-Za-z]*[A-Za-z].*?)\s+(${AMOUNT})\s+(${AMOUNT})$`, 'i'),
    pick: (m) => ({ qty: m[1], name: m[2], price: m[3], amount: m[4] }),
  },
  // "Nitrile gloves 10 £12.50" (description qty unit-price, price must look like money)
  {
    regex: new RegExp(String.raw`^([^A-Za-z]*[A-Za-z].*?)\s+(${QTY})\s+(${AMOUNT})$`, 'i'),
    pick: (m) => ({ name: m[1], qty: m[2], price: m[3] }),
  },
];

const NAME_EDGE = new Set([' ', '\t', '\n', '\r', '\f', '\v', '\u00a0', '-', '|', ':', '*', '•']);

/** The name without edge spaces, dashes, bars, colons, stars and bullets (a scan from each end, not a regex). */
function cleanName(name: string): string {
  let start = 0;
  let end = name.length;
  while (start < end && NAME_EDGE.has(name[start])) start += 1;
  while (end > start && NAME_EDGE.has(name[end - 1])) end -= 1;
  return name.slice(start, end).replace(/\s+/g, ' ');
}

function parseLine(line: string): ParsedInvoiceLine | null {
  for (const { regex, pick } of LINE_PATTERNS) {
    const m = regex.exec(line);
    if (!m) continue;
    const parts = pick(m);
    const price = parseAmount(parts.price);
    const quantity = new D(parts.qty);
    const name = cleanName(parts.name);
    if (price === null || quantity.lte(0) || !/[A-Za-z]/.test(name)) continue;
    if (parts.amount !== undefined) {
      // When a line amount is printed it must agree with qty x price; otherwise this reading is wrong.
      const amount = parseAmount(parts.amount);
      if (amount === null || quantity.times(price).minus(amount).abs().gt('0.05')) continue;
    } else if (!hasCurrency(parts.price) && !hasCents(parts.price)) {
      continue;
    }
    return { name, quantity: quantity.toNumber(), unitPrice: price };
  }
  return null;
}

const INVOICE_NUMBER_PATTERNS = [
  /\b(?:invoice|inv)\.?\s*(?:no\.?|number|num\.?|#|id|ref(?:erence)?)\s*[:.#]?\s*([A-Za-z0-9][\w\-/.]*)/i,
  /\binvoice\s*:\s*([A-Za-z0-9][\w\-/.]*)/i,
];

function findInvoiceNumber(lines: string[]): string | null {
  for (const [index, line] of lines.entries()) {
    for (const pattern of INVOICE_NUMBER_PATTERNS) {
      const m = pattern.exec(line);
      if (m && /\d/.test(m[1])) return m[1].replace(/[.]$/, '');
    }
    // the label alone on a line, the value on the next one
    if (
      /^(?:invoice|inv)\.?\s*(?:no\.?|number|num\.?|#)\s*:?$/i.test(line) &&
      lines[index + 1] &&
      /\d/.test(lines[index + 1])
    ) {
      return lines[index + 1].split(/\s+/)[0];
    }
  }
  return null;
}

// Strongest label first: a grand total beats a plain total, which beats nothing.
const TOTAL_LABELS = [
  /\b(?:grand\s+total|total\s+due|amount\s+due|balance\s+due|total\s+payable|amount\s+payable|invoice\s+total|total\s+amount)\b/i,
  /(?<!sub[\s-]?)\btotal\b(?!\s*(?:vat|tax|excl?|ex\.?\b|before|net))/i,
];

function lastAmount(text: string): string | null {
  const found = [...text.matchAll(amountAnywhere)].map((m) => m[0]).filter((a) => /\d/.test(a));
  for (let i = found.length - 1; i >= 0; i -= 1) {
    const value = parseAmount(found[i]);
    if (value !== null) return value;
  }
  return null;
}

function findTotal(lines: string[]): string | null {
  for (const label of TOTAL_LABELS) {
    for (let i = lines.length - 1; i >= 0; i -= 1) {
      const m = label.exec(lines[i]);
      if (!m) continue;
      const after = lines[i].slice(m.index + m[0].length);
      const value =
        lastAmount(after) ??
        (lines[i + 1] && !/[A-Za-z]{3,}/.test(lines[i + 1].replace(/GBP|USD|EUR/gi, ''))
          ? lastAmount(lines[i + 1])
          : null);
      if (value !== null) return value;
    }
  }
  return null;
}

const SUPPLIER_LABEL = /^(?:from|supplier|vendor|seller|sold\s+by|supplied\s+by|company)\s*:\s*(.+)$/i;
const NOT_A_NAME =
  /^(?:(?:tax\s+|sales\s+|vat\s+)?invoice|receipt|bill|statement|page\b|date\b|bill\s+to|ship\s+to|to\s*:)/i;

function findSupplierName(lines: string[]): string | null {
  for (const line of lines) {
    const m = SUPPLIER_LABEL.exec(line);
    if (m) return cleanName(m[1]);
  }
  // Otherwise the letterhead: the first line with words that is not a heading or a label.
  for (const line of lines.slice(0, 8)) {
    if (NOT_A_NAME.test(line) || SUMMARY_LINE.test(line) || !/[A-Za-z]{2,}/.test(line) || /:/.test(line)) continue;
    return cleanName(line);
  }
  return null;
}

/**
 * Reads supplier, invoice number, total and order lines from the text of an invoice.
 * Pure: it sees only the text pdf-parse extracted, so it is tested on text alone. It runs in
 * the PDF reader's worker thread (invoices.pdf-worker.ts), never on the thread that serves
 * requests; lines over MAX_LINE_LENGTH are skipped.
 */
export function parseInvoiceText(text: string): ParsedInvoice {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter((l) => l !== '' && l.length <= MAX_LINE_LENGTH && !/^--\s*\d+\s+of\s+\d+\s*--$/.test(l));

  const items: ParsedInvoiceLine[] = [];
  for (const line of lines) {
    if (isHeaderLine(line) || SUMMARY_LINE.test(line)) continue;
    const parsed = parseLine(line);
    if (parsed) items.push(parsed);
  }
  return {
    supplierName: findSupplierName(lines),
    invoiceNumber: findInvoiceNumber(lines),
    total: findTotal(lines),
    items,
  };
}
