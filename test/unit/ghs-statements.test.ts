import { describe, expect, it } from 'vitest';
import GHS from '../../src/modules/hazards/ghs-statements.json';
import { canonicalStatement, checkHazard, isValidCas } from '../../src/modules/hazards/hazards.service';

/*
 * Issue 43: the statement lists are data; these checks keep the file whole: each code once, in the
 * form the regulation writes, every combination made of listed codes, and a combined P statement's
 * text the texts of its parts (as CLP Annex IV builds them), but for the few the regulation words
 * as one sentence.
 */

type Entry = { code: string; text: string; withdrawn?: boolean };
const H: Entry[] = GHS.h;
const P: Entry[] = GHS.p;

/**
 * Combinations whose text the regulation words as one sentence, not as the texts of their parts; and
 * two GHS Rev. 10 combinations CLP does not have, in GHS's words: P264+P265 uses GHS's P264 ("Wash
 * hands [and …]", CLP's is "Wash …"), and P336+P317 thaws "Immediately", now that P317 is not urgent.
 */
const ONE_SENTENCE = new Set(['P361+P364', 'P362+P364', 'P335+P334', 'P264+P265', 'P336+P317']);

describe('ghs-statements.json', () => {
  it('names its source and lists each code once, with a text', () => {
    expect(GHS.source).toMatch(/1272\/2008/);
    expect(GHS.source).toMatch(/GHS Rev\. 10/);
    for (const list of [H, P]) {
      const codes = list.map((s) => s.code);
      expect(new Set(codes).size).toBe(codes.length);
      for (const s of list) expect(s.text.trim().length, s.code).toBeGreaterThan(0);
    }
  });

  it('writes codes as the regulation does', () => {
    for (const { code } of H) expect(code).toMatch(/^(H\d{3}(i|F|D|FD|Fd|Df|f|d|fd)?(\+H\d{3})*|EUH\d{3}A?)$/);
    for (const { code } of P) expect(code).toMatch(/^P\d{3}(\+P\d{3})*$/);
  });

  it('makes every combination of codes it lists on their own', () => {
    const singles = new Set([...H, ...P].map((s) => s.code));
    for (const { code } of [...H, ...P].filter((s) => s.code.includes('+')))
      for (const part of code.split('+')) expect(singles.has(part), `${part} of ${code}`).toBe(true);
  });

  it("words a combined P statement as its parts' texts, a part's colon kept", () => {
    const text = new Map(P.map((s) => [s.code, s.text]));
    for (const { code, text: combined } of P.filter((s) => s.code.includes('+') && !ONE_SENTENCE.has(s.code))) {
      const parts = code.split('+').map((part) => text.get(part)!);
      // "IF SWALLOWED:" + "Immediately call ..." and "Get ... attention." + "..." are joined by a space
      expect(combined, code).toBe(parts.join(' '));
    }
  });

  it('has the GHS Rev. 10 additions, checked against PubChem', () => {
    const text = new Map([...H, ...P].map((s) => [s.code, s.text]));
    const rev10 = ['H209', 'H210', 'H211', 'P203', 'P236', 'P265', 'P316', 'P317', 'P318', 'P319', 'P354'];
    const combinations = ['P264+P265', 'P301+P316', 'P301+P317', 'P302+P317', 'P302+P361+P354', 'P304+P317'];
    const more = ['P305+P354+P338', 'P308+P316', 'P332+P317', 'P333+P317', 'P336+P317', 'P337+P317', 'P342+P316'];
    for (const code of [...rev10, ...combinations, ...more]) expect(text.has(code), code).toBe(true);
    expect(text.get('P317')).toBe('Get medical help.');
    expect(text.get('P302+P317')).toBe('IF ON SKIN: Get medical help.');
    expect(text.get('P304+P317')).toBe('IF INHALED: Get medical help.');
    // CLP's H261 is plural (GHS: "flammable gas")
    expect(text.get('H261')).toBe('In contact with water releases flammable gases');
  });

  it('has the nine pictograms, GHS01 to GHS09', () => {
    expect(GHS.pictograms.map((p) => p.code)).toEqual(Array.from({ length: 9 }, (_, i) => `GHS0${i + 1}`));
  });
});

describe('the hazard rules', () => {
  it('checks the CAS check digit', () => {
    for (const cas of ['7732-18-5', '64-17-5', '67-64-1', '7647-01-0', '50-00-0', '7440-22-4'])
      expect(isValidCas(cas), cas).toBe(true);
    for (const cas of ['7732-18-4', '64-17-6', '64175', '6-17-5', '12345678-12-3', '64-17-5 '])
      expect(isValidCas(cas), cas).toBe(false);
  });

  it('reads codes in any case and with spaces around +, but an ambiguous one only as spelt', () => {
    expect(canonicalStatement('p', 'p303 + p361 + p353')).toBe('P303+P361+P353');
    expect(canonicalStatement('h', 'h350I')).toBe('H350i');
    expect(canonicalStatement('h', 'H360Fd')).toBe('H360Fd');
    expect(canonicalStatement('h', 'H360FD')).toBe('H360FD');
    expect(canonicalStatement('h', 'h360fd')).toBeUndefined();
    expect(canonicalStatement('p', 'P361+P303')).toBeUndefined();
    expect(canonicalStatement('h', 'P210')).toBeUndefined();
  });

  it('keeps each code and pictogram once, in the order given', () => {
    const checked = checkHazard({
      signalWord: 'Warning',
      pictograms: ['GHS07', 'GHS07', 'GHS02'],
      hStatements: ['h319', 'H319', 'H225'],
      pStatements: [],
      casNumber: null,
      unNumber: null,
      storage: null,
    });
    expect([checked!.pictograms, checked!.hStatements]).toEqual([
      ['GHS07', 'GHS02'],
      ['H319', 'H225'],
    ]);
  });
});
