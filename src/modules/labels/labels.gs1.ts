import { parseGs1 } from '../../lib/gs1';

/** A lot as its label carries it. */
export type LabelLot = { lotNumber: string; expiresOn: string | null };

/**
 * The GS1 element string a lot label's DataMatrix encodes (issue 42), bracketed:
 * `(01)<GTIN-14>(17)<YYMMDD>(10)<lot>`, or `(01)(10)` for a lot without expiry. (10) is variable
 * length, so it goes last and needs no FNC1 separator after it. Undefined when the lot cannot be
 * carried as GS1 says (a lot number over 20 characters or outside GS1's character set 82, or a
 * date GS1's two-digit year would read in another century): the string is checked by reading it
 * back with the scanner's parser, so what is printed is what a scan gives.
 */
export function lotElementString(gtin: string, lot: LabelLot, today: Date = new Date()): string | undefined {
  const expiry = lot.expiresOn
    ? `(17)${lot.expiresOn.slice(2, 4)}${lot.expiresOn.slice(5, 7)}${lot.expiresOn.slice(8, 10)}`
    : '';
  const text = `(01)${gtin}${expiry}(10)${lot.lotNumber}`;
  const read = parseGs1(text, today);
  if (!read.ok || read.gtin !== gtin || read.lotNumber !== lot.lotNumber || (read.expiresOn ?? null) !== lot.expiresOn)
    return undefined;
  return text;
}
