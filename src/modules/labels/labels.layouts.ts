/*
 * The label stocks a label PDF is drawn for (issue 31). Every size is in millimetres, measured from
 * the page's top-left corner; a label's cell is at marginLeft + column * pitchX, marginTop + row * pitchY.
 * The Avery sheets take Avery's own template geometry (A4, 210 x 297 mm); a roll label is a page of
 * its own (a Brother QL/Dymo-type printer prints one page a label).
 */

export type LabelLayout = {
  id: string;
  name: string;
  pageWidthMm: number;
  pageHeightMm: number;
  columns: number;
  rows: number;
  labelWidthMm: number;
  labelHeightMm: number;
  /** from the page's top edge to the first row's top edge */
  marginTopMm: number;
  /** from the page's left edge to the first column's left edge */
  marginLeftMm: number;
  /** from one column's left edge to the next one's */
  pitchXMm: number;
  /** from one row's top edge to the next one's */
  pitchYMm: number;
  /** what is left blank inside each label's edge (a sheet's die-cut may sit half a millimetre off) */
  paddingMm: number;
  /** the item name's type size in points; the other lines are a little smaller */
  namePt: number;
  /** how many lines the item name may take before it is cut short with an ellipsis */
  nameLines: number;
};

export const LABEL_LAYOUTS: readonly LabelLayout[] = [
  {
    id: 'avery-l7160',
    name: 'Avery L7160: 21 a sheet, 63.5 x 38.1 mm',
    pageWidthMm: 210,
    pageHeightMm: 297,
    columns: 3,
    rows: 7,
    labelWidthMm: 63.5,
    labelHeightMm: 38.1,
    marginTopMm: 15.15,
    marginLeftMm: 7.21,
    pitchXMm: 66.04,
    pitchYMm: 38.1,
    paddingMm: 2.5,
    namePt: 9,
    nameLines: 2,
  },
  {
    id: 'avery-l7651',
    name: 'Avery L7651: 65 a sheet, 38.1 x 21.2 mm',
    pageWidthMm: 210,
    pageHeightMm: 297,
    columns: 5,
    rows: 13,
    labelWidthMm: 38.1,
    labelHeightMm: 21.2,
    marginTopMm: 10.7,
    marginLeftMm: 4.67,
    pitchXMm: 40.64,
    pitchYMm: 21.2,
    paddingMm: 1.2,
    namePt: 6,
    nameLines: 1,
  },
  {
    id: 'roll-62x29',
    name: 'Roll 62 x 29 mm, one label a page',
    pageWidthMm: 62,
    pageHeightMm: 29,
    columns: 1,
    rows: 1,
    labelWidthMm: 62,
    labelHeightMm: 29,
    marginTopMm: 0,
    marginLeftMm: 0,
    pitchXMm: 62,
    pitchYMm: 29,
    paddingMm: 2,
    namePt: 9,
    nameLines: 2,
  },
  {
    // issue 43: a label that fits a reagent bottle
    id: 'roll-50x25',
    name: 'Roll 50 x 25 mm (bottle), one label a page',
    pageWidthMm: 50,
    pageHeightMm: 25,
    columns: 1,
    rows: 1,
    labelWidthMm: 50,
    labelHeightMm: 25,
    marginTopMm: 0,
    marginLeftMm: 0,
    pitchXMm: 50,
    pitchYMm: 25,
    paddingMm: 1.5,
    namePt: 7,
    nameLines: 1,
  },
];

export const labelLayout = (id: string): LabelLayout | undefined => LABEL_LAYOUTS.find((layout) => layout.id === id);

/** A roll's label is a page of its own; a sheet holds several (issue 43: a sheet's pictograms are at least 10 mm wide). */
export const isRoll = (layout: LabelLayout): boolean => layout.columns * layout.rows === 1;

/** How many labels one page holds. */
export const labelsPerPage = (layout: LabelLayout): number => layout.columns * layout.rows;

/** The top-left corner (mm) of the cell at this 0-based position on a page, counted along the rows. */
export function cellOrigin(layout: LabelLayout, position: number): { xMm: number; yMm: number } {
  const column = position % layout.columns;
  const row = Math.floor(position / layout.columns);
  return { xMm: layout.marginLeftMm + column * layout.pitchXMm, yMm: layout.marginTopMm + row * layout.pitchYMm };
}

export const SYMBOLOGIES = ['code128', 'qr', 'datamatrix'] as const;
export type Symbology = (typeof SYMBOLOGIES)[number];
export const isSymbology = (value: string): value is Symbology => (SYMBOLOGIES as readonly string[]).includes(value);

/** At most this many labels (the sum of the copies) in one request. */
export const MAX_LABELS = 2000;
