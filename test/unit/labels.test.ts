import { describe, expect, it } from 'vitest';
import { lotElementString } from '../../src/modules/labels/labels.gs1';
import { lotTextLines } from '../../src/modules/labels/labels.render';
import { LABEL_LAYOUTS, cellOrigin, labelLayout, labelsPerPage } from '../../src/modules/labels/labels.layouts';
import { linearSymbolFits } from '../../src/modules/labels/labels.render';
import { priceLines } from '../../src/modules/labels/labels.service';
import { labelSymbol, loadBwip } from '../../src/modules/labels/labels.symbols';

describe('label layouts', () => {
  it('every label lies on its page, the sheets centred as Avery cuts them', () => {
    for (const layout of LABEL_LAYOUTS) {
      const last = cellOrigin(layout, labelsPerPage(layout) - 1);
      const right = layout.pageWidthMm - (last.xMm + layout.labelWidthMm);
      const bottom = layout.pageHeightMm - (last.yMm + layout.labelHeightMm);
      expect(right, layout.id).toBeCloseTo(layout.marginLeftMm, 1);
      expect(bottom, layout.id).toBeCloseTo(layout.marginTopMm, 1);
      expect(layout.pitchXMm).toBeGreaterThanOrEqual(layout.labelWidthMm);
      expect(layout.pitchYMm).toBeGreaterThanOrEqual(layout.labelHeightMm);
    }
  });

  it('cells count along the rows from the top left', () => {
    const l7160 = labelLayout('avery-l7160')!;
    expect(labelsPerPage(l7160)).toBe(21);
    expect(cellOrigin(l7160, 0)).toEqual({ xMm: 7.21, yMm: 15.15 });
    expect(cellOrigin(l7160, 4)).toEqual({ xMm: 7.21 + 66.04, yMm: 15.15 + 38.1 });
    expect(labelsPerPage(labelLayout('avery-l7651')!)).toBe(65);
    expect(labelsPerPage(labelLayout('roll-62x29')!)).toBe(1);
    expect(labelLayout('nope')).toBeUndefined();
  });
});

describe('label symbols', () => {
  it('Code 128 from bwip-js: 11 modules a character plus start, check and stop; one drawing a SKU reused', async () => {
    const bwip = await loadBwip();
    const symbol = labelSymbol(bwip, 'code128', 'ABC-123');
    expect(symbol).toMatchObject({ linear: true, widthModules: 11 * 7 + 11 + 11 + 13, heightModules: 1 });
    expect(symbol.quietModules).toBe(10);
    expect(symbol.path).toMatch(/^[\d.]+ 0 [\d.]+ 1 re$/m);
    expect(labelSymbol(bwip, 'code128', 'ABC-123')).toBe(symbol);
    expect(labelSymbol(bwip, 'qr', 'ABC-123')).not.toBe(symbol);
  });

  it('QR and Data Matrix are square grids of polygons', async () => {
    const bwip = await loadBwip();
    const qr = labelSymbol(bwip, 'qr', 'SKU-1');
    expect(qr).toMatchObject({ linear: false, widthModules: 21, heightModules: 21, quietModules: 4 });
    expect(qr.path).toMatch(/ m .* l .* h$/m);
    const dm = labelSymbol(bwip, 'datamatrix', 'SKU-1');
    expect(dm).toMatchObject({ linear: false, widthModules: dm.heightModules });
  });

  it('a Code 128 fits a layout while its narrowest bar gets a 300 dpi dot', async () => {
    const bwip = await loadBwip();
    const l7651 = labelLayout('avery-l7651')!;
    expect(linearSymbolFits(l7651, labelSymbol(bwip, 'code128', 'X'.repeat(30)))).toBe(true);
    expect(linearSymbolFits(l7651, labelSymbol(bwip, 'code128', 'X'.repeat(40)))).toBe(false);
    expect(linearSymbolFits(labelLayout('avery-l7160')!, labelSymbol(bwip, 'code128', 'X'.repeat(40)))).toBe(true);
    expect(linearSymbolFits(l7651, labelSymbol(bwip, 'qr', 'X'.repeat(100)))).toBe(true);
  });
});

describe('label prices', () => {
  it('before VAT as the item page shows it, and with VAT, rounded half up', () => {
    expect(priceLines('12.50', '0.2000')).toEqual(['£12.50 ex VAT (£15.00 inc)', '£12.50 ex VAT']);
    expect(priceLines('0.125', '0')).toEqual(['£0.13 ex VAT (£0.13 inc)', '£0.13 ex VAT']);
    expect(priceLines('1234.56', '0.05')).toEqual(['£1,234.56 ex VAT (£1,296.29 inc)', '£1,234.56 ex VAT']);
  });
});

describe('lot labels (issue 42)', () => {
  const today = new Date('2026-11-29T12:00:00Z');

  it('the GS1 element string is (01) GTIN, (17) expiry YYMMDD, then (10) lot, the variable-length field last', () => {
    expect(lotElementString('09501101530003', { lotNumber: 'B2417', expiresOn: '2027-06-30' }, today)).toBe(
      '(01)09501101530003(17)270630(10)B2417',
    );
  });

  it('a lot without expiry carries (01)(10) only', () => {
    expect(lotElementString('09501101530003', { lotNumber: 'NODATE-7', expiresOn: null }, today)).toBe(
      '(01)09501101530003(10)NODATE-7',
    );
  });

  it('a lot number GS1 cannot carry (a space, over 20 characters, outside set 82) gives no element string', () => {
    const gtin = '09501101530003';
    expect(lotElementString(gtin, { lotNumber: 'AB 12', expiresOn: null }, today)).toBeUndefined();
    expect(lotElementString(gtin, { lotNumber: 'X'.repeat(21), expiresOn: null }, today)).toBeUndefined();
    expect(lotElementString(gtin, { lotNumber: 'LOT#5', expiresOn: null }, today)).toBeUndefined();
    expect(lotElementString(gtin, { lotNumber: 'X'.repeat(20), expiresOn: null }, today)).toBe(
      `(01)${gtin}(10)${'X'.repeat(20)}`,
    );
  });

  it("an expiry GS1's two-digit year would read in another century gives no element string", () => {
    expect(lotElementString('09501101530003', { lotNumber: 'L1', expiresOn: '2080-01-01' }, today)).toBeUndefined();
  });

  it('the lot label text: the lot number, and the expiry when there is one', () => {
    expect(lotTextLines({ lotNumber: 'B2417', expiresOn: '2027-06-30' })).toEqual(['Lot B2417', 'Exp 2027-06-30']);
    expect(lotTextLines({ lotNumber: 'B2417', expiresOn: null })).toEqual(['Lot B2417']);
  });

  it('a GS1 DataMatrix from bwip-js is a square grid of polygons with its quiet zone', async () => {
    const bwip = await loadBwip();
    const symbol = labelSymbol(bwip, 'gs1datamatrix', '(01)09501101530003(17)270630(10)B2417');
    expect(symbol).toMatchObject({ linear: false, quietModules: 2 });
    expect(symbol.widthModules).toBe(symbol.heightModules);
    expect(symbol.path).toMatch(/ m .* l .* h$/m);
    expect(() => labelSymbol(bwip, 'gs1datamatrix', '(01)09501101530004(10)X')).toThrow(/GS1 element string/);
  });
});
