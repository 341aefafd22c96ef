import { BadRequest } from '../../http/errors';
import GHS from './ghs-statements.json';
import type { Hazard, HazardInput, PictogramCode } from './hazards.schemas';

/*
 * The GHS/CLP statement texts and the rules of an item's hazard data (issue 43). The texts are data
 * (ghs-statements.json, which names its sources); this module owns no table: the items module keeps
 * the data in its columns and asks here whether it is valid.
 */

/** A statement of the lists; `withdrawn`: deleted from CLP or GHS since, still accepted (labels on the shelf carry it). */
type Statement = { code: string; text: string; withdrawn?: boolean };

const H: readonly Statement[] = GHS.h;
const P: readonly Statement[] = GHS.p;

/** The meaning of each pictogram, its accessible name. */
export const PICTOGRAM_NAMES: Readonly<Record<PictogramCode, string>> = Object.fromEntries(
  GHS.pictograms.map((p) => [p.code, p.name]),
) as Record<PictogramCode, string>;

/** Where the stores serves a pictogram's SVG (public/ghs/, as the other static assets). */
export const pictogramImage = (code: string) => `/assets/ghs/${code}.svg`;

const STATEMENTS = new Map<string, Statement>([...H, ...P].map((s) => [s.code, s]));

/**
 * Each list's codes by their upper-case form, for a code typed in another case (h225, p303+p361+p353).
 * H360FD and H360Fd differ only in case: such a form is ambiguous and matches only as spelt.
 */
function byUpperCase(list: readonly Statement[]): Map<string, string | null> {
  const map = new Map<string, string | null>();
  for (const { code } of list) {
    const key = code.toUpperCase();
    map.set(key, map.has(key) ? null : code);
  }
  return map;
}
const H_CODES = new Set(H.map((s) => s.code));
const P_CODES = new Set(P.map((s) => s.code));
const H_UPPER = byUpperCase(H);
const P_UPPER = byUpperCase(P);

/** The code as the list spells it (spaces around + dropped, any case), or undefined when the list has no such code. */
export function canonicalStatement(kind: 'h' | 'p', code: string): string | undefined {
  const compact = code.replace(/\s+/g, '');
  const [codes, upper] = kind === 'h' ? [H_CODES, H_UPPER] : [P_CODES, P_UPPER];
  if (codes.has(compact)) return compact;
  return upper.get(compact.toUpperCase()) ?? undefined;
}

/** The standard English text of an H, EUH or P code (as spelt in the list), or undefined. */
export const statementText = (code: string): string | undefined => STATEMENTS.get(code)?.text;

/** A statement as the API and the pages give it: code, text, and withdrawn: true only for a withdrawn one. */
const shown = ({ code, text, withdrawn }: Statement): Statement =>
  withdrawn ? { code, text, withdrawn } : { code, text };

/** The statements with their texts, for display: an unknown code (none should be stored) keeps an empty text. */
export const withTexts = (codes: readonly string[]): Statement[] =>
  codes.map((code) => shown(STATEMENTS.get(code) ?? { code, text: '' }));

/** Every statement, as GET /api/hazards/statements answers. */
export function hazardStatements() {
  return {
    source: GHS.source,
    h: H.map(shown),
    p: P.map(shown),
    pictograms: GHS.pictograms.map((p) => ({
      code: p.code as PictogramCode,
      name: p.name,
      image: pictogramImage(p.code),
    })),
  };
}

/**
 * A CAS Registry Number: 2 to 7 digits, 2 digits and a check digit, joined by hyphens, whose check
 * digit is the sum of the other digits, each times its position counted from the right, modulo 10.
 */
export function isValidCas(cas: string): boolean {
  const match = /^(\d{2,7})-(\d{2})-(\d)$/.exec(cas);
  if (!match) return false;
  const digits = (match[1] + match[2]).split('').reverse();
  const sum = digits.reduce((total, digit, index) => total + Number(digit) * (index + 1), 0);
  return sum % 10 === Number(match[3]);
}

/** An item's hazard data as its columns keep it. */
export type HazardValues = {
  signalWord: 'Danger' | 'Warning' | null;
  pictograms: string[];
  hStatements: string[];
  pStatements: string[];
  casNumber: string | null;
  unNumber: string | null;
  storage: string | null;
};

/** A refusal of one field, with the message as the body's message and as the field's. */
export const hazardRefusal = (field: string, message: string) => BadRequest(message, { errors: [{ field, message }] });

/**
 * The hazard data checked and put in its stored form: each statement code as the list spells it
 * (the first of a repeated one kept), each pictogram once. The first problem is thrown as a 400 naming
 * its field under `prefix` (hazard.hStatements.2): "Unknown hazard statement '<code>'" (a P code among
 * the H statements too), "Invalid CAS number '<cas>'". Null stays null (no hazard data).
 */
export function checkHazard(input: HazardInput | null, prefix = 'hazard'): HazardValues | null {
  if (input === null) return null;
  const statements = (kind: 'h' | 'p', field: 'hStatements' | 'pStatements') => {
    const found: string[] = [];
    input[field].forEach((code, index) => {
      const canonical = canonicalStatement(kind, code);
      if (canonical === undefined)
        throw hazardRefusal(`${prefix}.${field}.${index}`, `Unknown hazard statement '${code}'`);
      if (!found.includes(canonical)) found.push(canonical);
    });
    return found;
  };
  const hStatements = statements('h', 'hStatements');
  const pStatements = statements('p', 'pStatements');
  if (input.casNumber !== null && !isValidCas(input.casNumber))
    throw hazardRefusal(`${prefix}.casNumber`, `Invalid CAS number '${input.casNumber}'`);
  return {
    signalWord: input.signalWord,
    pictograms: [...new Set(input.pictograms)],
    hStatements,
    pStatements,
    casNumber: input.casNumber,
    unNumber: input.unNumber,
    storage: input.storage,
  };
}

/** True when the data holds nothing: the item's hazard reads as null. */
export const isEmptyHazard = (h: HazardValues): boolean =>
  h.signalWord === null &&
  h.pictograms.length === 0 &&
  h.hStatements.length === 0 &&
  h.pStatements.length === 0 &&
  h.casNumber === null &&
  h.unNumber === null &&
  h.storage === null;

/** An item's hazard (as the API answers it) as pages and labels show it: each pictogram with its meaning and image, each statement with its text. */
export function hazardView(hazard: Hazard | null) {
  if (hazard === null) return null;
  return {
    signalWord: hazard.signalWord,
    pictograms: hazard.pictograms.map((code) => ({ code, name: PICTOGRAM_NAMES[code], image: pictogramImage(code) })),
    hStatements: withTexts(hazard.hStatements),
    pStatements: withTexts(hazard.pStatements),
    casNumber: hazard.casNumber,
    unNumber: hazard.unNumber,
    storage: hazard.storage,
  };
}
export type HazardView = NonNullable<ReturnType<typeof hazardView>>;
