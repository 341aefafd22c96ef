import type { Writable } from 'node:stream';
import { cellOrigin, isRoll, labelsPerPage, type LabelLayout } from './labels.layouts';
import { drawPictogram } from './labels.pictograms';
import type { LabelSymbol } from './labels.symbols';

/** What one label shows; the copies of an item share one object (and one symbol). */
export type LabelContent = {
  itemId: number;
  name: string;
  sku: string;
  categoryName: string;
  /** the price lines to print, longest first (the first that fits is printed); empty when not asked */
  price: string[];
  symbol: LabelSymbol;
  /** a lot label's lot (issue 42): its number and expiry printed under the SKU */
  lot?: { lotNumber: string; expiresOn: string | null };
  /**
   * a hazardous item's label (issue 43): a band across the top with a QR code of its safety data
   * sheet's address (PUBLIC_URL/items/<id>/sds) and its pictograms, its signal word in place of the category
   */
  hazard?: {
    signalWord: 'Danger' | 'Warning' | null;
    pictograms: string[];
    /** the H (and EUH) and P statements with their standard texts, printed after the signal word as room allows */
    hStatements: LabelStatement[];
    pStatements: LabelStatement[];
    sdsSymbol: LabelSymbol;
  };
};

export type LabelStatement = { code: string; text: string };

/** A lot label's human-readable lines: the lot number, and the expiry when it has one. */
export const lotTextLines = (lot: { lotNumber: string; expiresOn: string | null }): string[] => [
  `Lot ${lot.lotNumber}`,
  ...(lot.expiresOn ? [`Exp ${lot.expiresOn}`] : []),
];

export type LabelPrint = {
  layout: LabelLayout;
  /** 1-based: the first cell of the first page to print on (the ones before it are used already) */
  startPosition: number;
  /** one entry a label, in print order */
  labels: LabelContent[];
  title: string;
};

const PT_PER_MM = 72 / 25.4;
/** One printer dot at 300 dpi, in points: module widths and symbol corners are whole dots. */
const DOT = 72 / 300;
const mm = (value: number) => value * PT_PER_MM;
const snap = (value: number) => Math.round(value / DOT) * DOT;
/** The widest module of `modules` (plus their quiet zones) that fits `space`, in whole printer dots when one dot fits. */
const moduleSize = (space: number, modules: number) => {
  const exact = space / modules;
  const dots = Math.floor(exact / DOT);
  return dots >= 1 ? dots * DOT : exact;
};

/** The width (points) a label's content has inside its padding. */
const contentWidth = (layout: LabelLayout) => mm(layout.labelWidthMm - 2 * layout.paddingMm);

/**
 * Whether a linear symbol's narrowest bar gets at least one printer dot at 300 dpi across the
 * label (a long SKU in Code 128 on a small label does not: its bars would blur into each other).
 */
export const linearSymbolFits = (layout: LabelLayout, symbol: LabelSymbol): boolean =>
  !symbol.linear || contentWidth(layout) / (symbol.widthModules + 2 * symbol.quietModules) >= DOT;

type Doc = PDFKit.PDFDocument;
type Box = { x: number; y: number; w: number; h: number };

/** The label sheets as a PDF written to `out` page by page (each page is flushed before the next is drawn). */
export async function writeLabelsPdf(print: LabelPrint, out: Writable): Promise<void> {
  // pdfkit (and its fonts) load on the first print, not at start
  const { default: PDFDocument } = await import('pdfkit');
  const { layout } = print;
  const doc = new PDFDocument({
    size: [mm(layout.pageWidthMm), mm(layout.pageHeightMm)],
    margin: 0,
    info: { Title: print.title, Creator: 'Stores' },
  });
  const finished = new Promise<void>((resolve, reject) => {
    // 'close' too: a client that goes away mid-download ends the print, not an error
    out.on('finish', resolve);
    out.on('close', resolve);
    out.on('error', reject);
    doc.on('error', reject);
  });
  doc.pipe(out);
  const perPage = labelsPerPage(layout);
  let position = print.startPosition - 1;
  for (const label of print.labels) {
    if (position === perPage) {
      // let the finished page reach the client (and other requests run) before the next is drawn
      await new Promise((resolve) => setImmediate(resolve));
      if (out.destroyed) break;
      doc.addPage();
      position = 0;
    }
    const { xMm, yMm } = cellOrigin(layout, position);
    const pad = layout.paddingMm;
    drawLabel(doc, layout, label, {
      x: mm(xMm + pad),
      y: mm(yMm + pad),
      w: mm(layout.labelWidthMm - 2 * pad),
      h: mm(layout.labelHeightMm - 2 * pad),
    });
    position += 1;
  }
  doc.end();
  await finished;
}

function drawLabel(doc: Doc, layout: LabelLayout, label: LabelContent, box: Box): void {
  if (label.hazard) drawHazardLabel(doc, layout, label, box);
  else if (label.symbol.linear) drawLinearLabel(doc, layout, label, box);
  else drawMatrixLabel(doc, layout, label, box);
}

const smallPt = (layout: LabelLayout) => Math.max(5, Math.round(layout.namePt * 1.6) / 2);
const lineHeight = (doc: Doc) => doc.currentLineHeight(true);

/** Text in a box of at most `lines` lines, cut short with an ellipsis; answers the height it took. */
function textLines(
  doc: Doc,
  text: string,
  {
    x,
    y,
    width,
    lines,
    align = 'left',
  }: { x: number; y: number; width: number; lines: number; align?: 'left' | 'center' | 'right' },
): number {
  if (lines < 1 || text === '') return 0;
  const height = lines * lineHeight(doc);
  const used = Math.min(doc.heightOfString(text, { width, lineGap: 0 }), height);
  doc.text(text, x, y, { width, height, ellipsis: true, lineGap: 0, align });
  return used;
}

/** The first price line that fits the width (the shortest when none does). */
const priceFitting = (doc: Doc, price: string[], width: number) =>
  price.find((text) => doc.widthOfString(text) <= width - 1) ?? price[price.length - 1] ?? '';

/** The symbol's dark areas at (x, y), `moduleWidth` a module wide and `moduleHeight` high (a linear symbol's bars). */
function drawSymbol(
  doc: Doc,
  symbol: LabelSymbol,
  { x, y, moduleWidth, moduleHeight }: { x: number; y: number; moduleWidth: number; moduleHeight: number },
) {
  doc.save();
  doc.fillColor('black');
  doc.transform(moduleWidth, 0, 0, moduleHeight, x, y);
  doc.addContent(symbol.path);
  doc.fill();
  doc.restore();
}

/**
 * Code 128: the name across the top, the category (and price) under it, a lot label's lot and
 * expiry on a line of their own, a hazard label's statements (issue 43) in what the bars can spare,
 * the bars the whole width with their quiet zones, and the SKU in text under the bars.
 */
function drawLinearLabel(doc: Doc, layout: LabelLayout, label: LabelContent, box: Box): void {
  const statements = label.hazard;
  const { x, w } = box;
  let y = box.y;
  doc.fillColor('black');
  doc.font('Helvetica-Bold').fontSize(layout.namePt);
  y += textLines(doc, label.name, { x, y, width: w, lines: layout.nameLines });
  doc.font('Helvetica').fontSize(smallPt(layout));
  const line = lineHeight(doc);
  const price = priceFitting(doc, label.price, w * 0.55);
  const priceWidth = price ? doc.widthOfString(price) : 0;
  if (price) doc.text(price, x + w - priceWidth, y, { lineBreak: false });
  textLines(doc, label.categoryName, { x, y, width: price ? w - priceWidth - mm(1.5) : w, lines: 1 });
  y += line;
  doc.font('Helvetica-Bold');
  if (label.lot) y += textLines(doc, lotTextLines(label.lot).join('   '), { x, y, width: w, lines: 1 });
  const skuY = box.y + box.h - line;
  if (statements) {
    // the hazard statements take what the bars can spare (at least one line of the smallest type)
    const spare = skuY - mm(0.3) - mm(0.8) - y - MIN_BARS;
    y += drawStatements(doc, layout, statements, { x, y, w, h: Math.max(minStatementLine(doc), spare) });
    doc.font('Helvetica-Bold').fontSize(smallPt(layout));
  }

  textLines(doc, label.sku, { x, y: skuY, width: w, lines: 1, align: 'center' });

  const { symbol } = label;
  const module = moduleSize(w, symbol.widthModules + 2 * symbol.quietModules);
  const barsTop = snap(y + mm(0.8));
  const barsHeight = skuY - mm(0.3) - barsTop;
  drawSymbol(doc, symbol, {
    x: snap(x + (w - symbol.widthModules * module) / 2),
    y: barsTop,
    moduleWidth: module,
    moduleHeight: barsHeight,
  });
}

/** The small lines beside a QR code or Data Matrix: the SKU, a lot label's lot and expiry, the category (or signal word), the price. */
const matrixSmallLines = (label: LabelContent) =>
  2 + (label.lot ? lotTextLines(label.lot).length : 0) + (label.price.length > 0 ? 1 : 0);

/**
 * QR code or Data Matrix: the symbol (with its quiet zone) square at the top left, and beside it the
 * name, the SKU, a lot label's lot and expiry, the category (a hazard label's signal word and then
 * its statements, issue 43) and the price.
 */
function drawMatrixLabel(doc: Doc, layout: LabelLayout, label: LabelContent, box: Box): void {
  const statements = label.hazard;
  const { symbol } = label;
  const side = Math.min(box.h, box.w * 0.45);
  const modules = Math.max(symbol.widthModules, symbol.heightModules) + 2 * symbol.quietModules;
  const module = moduleSize(side, modules);
  const quiet = symbol.quietModules * module;
  const symbolX = snap(box.x + quiet);
  // level with the text's top; the label's padding counts towards the quiet zone above it
  const symbolY = snap(box.y + Math.max(0, quiet - mm(layout.paddingMm)));
  drawSymbol(doc, symbol, { x: symbolX, y: symbolY, moduleWidth: module, moduleHeight: module });

  const x = symbolX + symbol.widthModules * module + quiet;
  const w = box.x + box.w - x;
  let y = box.y;
  doc.fillColor('black');
  doc.font('Helvetica').fontSize(smallPt(layout));
  const small = lineHeight(doc);
  const price = priceFitting(doc, label.price, w);
  const lotLines = label.lot ? lotTextLines(label.lot) : [];
  const otherLines = matrixSmallLines(label);
  const statementRoom = statements ? minStatementLine(doc) : 0;
  doc.font('Helvetica-Bold').fontSize(layout.namePt);
  const nameLines = Math.min(3, Math.floor((box.h - otherLines * small - statementRoom) / lineHeight(doc)));
  y += textLines(doc, label.name, { x, y, width: w, lines: Math.max(1, nameLines) });
  doc.fontSize(smallPt(layout));
  y += textLines(doc, label.sku, { x, y, width: w, lines: 1 });
  for (const text of lotLines) y += textLines(doc, text, { x, y, width: w, lines: 1 });
  doc.font('Helvetica');
  const room = box.y + box.h - y - small - (price ? small : 0);
  // where not even a line of statements fits under it, the signal word's line carries the codes
  const codesBeside = statements && room < statementRoom - 0.01;
  const category = codesBeside ? [label.categoryName, statementCodes(statements)].join('   ') : label.categoryName;
  y += textLines(doc, category, { x, y, width: w, lines: 1 });
  if (statements && !codesBeside) {
    y += drawStatements(doc, layout, statements, { x, y, w, h: room });
    doc.font('Helvetica').fontSize(smallPt(layout));
  }
  if (price) textLines(doc, price, { x, y, width: w, lines: 1 });
}

/** The smallest type a hazard statement is printed in (points). */
const MIN_STATEMENT_PT = 5;
/** The least height a hazard label's bars keep when its statements want room. */
const MIN_BARS = mm(5);

/** A hazard's H statement codes on one line ("H225 H319"). */
const statementCodes = (hazard: NonNullable<LabelContent['hazard']>) => hazard.hStatements.map((s) => s.code).join(' ');

/** The height of one line of hazard statements in the smallest type. */
function minStatementLine(doc: Doc): number {
  doc.font('Helvetica').fontSize(MIN_STATEMENT_PT);
  return lineHeight(doc);
}

/**
 * A hazardous item's statements (issue 43) in `box`, answering the height they took: every H
 * statement's text in the largest type from the label's small size down to 5 pt that holds them
 * all (then its P statements too where they fit as well); else as many whole H statements as fit
 * in 5 pt, followed by "… see SDS"; where not even one fits, the H codes. Nothing is drawn past the box.
 */
function drawStatements(doc: Doc, layout: LabelLayout, hazard: NonNullable<LabelContent['hazard']>, box: Box): number {
  const h = hazard.hStatements;
  if (h.length === 0 || box.h < minStatementLine(doc) - 0.01) return 0;
  const width = box.w;
  const heightAt = (text: string, size: number) => {
    doc.font('Helvetica').fontSize(size);
    return doc.heightOfString(text, { width, lineGap: 0 });
  };
  const draw = (text: string, size: number) => {
    doc.fillColor('black').font('Helvetica').fontSize(size);
    const lines = Math.floor(box.h / lineHeight(doc) + 0.001);
    return textLines(doc, text, { x: box.x, y: box.y, width, lines });
  };
  // one sentence a statement (the data's texts carry no full stop)
  const sentence = (s: LabelStatement) => (s.text ? (/[.!?]$/.test(s.text) ? s.text : `${s.text}.`) : s.code);
  const texts = (list: LabelStatement[]) => list.map(sentence).join(' ');
  const hText = texts(h);
  for (let size = smallPt(layout); size >= MIN_STATEMENT_PT; size -= 0.5) {
    if (heightAt(hText, size) > box.h + 0.01) continue;
    const withP = hazard.pStatements.length > 0 ? `${hText} ${texts(hazard.pStatements)}` : hText;
    return draw(heightAt(withP, size) <= box.h + 0.01 ? withP : hText, size);
  }
  for (let n = h.length - 1; n >= 1; n -= 1) {
    const text = `${texts(h.slice(0, n))} \u2026 see SDS`;
    if (heightAt(text, MIN_STATEMENT_PT) <= box.h + 0.01) return draw(text, MIN_STATEMENT_PT);
  }
  return draw(h.map((s) => s.code).join(' '), MIN_STATEMENT_PT);
}

/** The gap after the SDS QR code and after each pictogram of a hazard band. */
const BAND_GAP = mm(0.5);
/** A pictogram's box on a sheet: its diamond (92% of the box) is then at least 10 mm wide. */
const SHEET_PICTOGRAM = mm(10.9);

/**
 * The side (points) of the SDS QR code and of each pictogram in a hazardous item's label band with
 * `pictograms` pictograms: as large as 11 mm and half the label's height allow, shrunk to fit the
 * width on a roll; undefined where a sheet label cannot hold them at least 10 mm wide.
 */
export function hazardBandSide(layout: LabelLayout, pictograms: number): number | undefined {
  const w = contentWidth(layout);
  const h = mm(layout.labelHeightMm - 2 * layout.paddingMm);
  const target = isRoll(layout) ? Math.min(mm(11), h * 0.55) : SHEET_PICTOGRAM;
  const fits = (w - (pictograms + 1) * BAND_GAP) / (pictograms + 1);
  const side = Math.min(target, fits);
  if (!isRoll(layout) && (side < SHEET_PICTOGRAM - 0.01 || target > h * 0.65)) return undefined;
  return side;
}

/**
 * A hazardous item's label (issue 43): across the top, the QR code of its safety data sheet's
 * address and its pictograms (vector, from public/ghs/); below, the item's own label (name, the
 * signal word in upper case where the category goes, its symbol and SKU), or where the rest is too
 * low for bars, or for a QR code or Data Matrix with its lines beside it, the name, signal word and
 * SKU (and a lot label's lot and expiry) in text.
 */
function drawHazardLabel(doc: Doc, layout: LabelLayout, label: LabelContent, box: Box): void {
  const hazard = label.hazard!;
  const side = hazardBandSide(layout, hazard.pictograms.length) ?? mm(6);
  const qr = hazard.sdsSymbol;
  const module = moduleSize(side, Math.max(qr.widthModules, qr.heightModules) + 2 * qr.quietModules);
  const quiet = qr.quietModules * module;
  drawSymbol(doc, qr, {
    x: snap(box.x + Math.max(0, quiet - mm(layout.paddingMm))),
    y: snap(box.y + Math.max(0, quiet - mm(layout.paddingMm))),
    moduleWidth: module,
    moduleHeight: module,
  });
  let x = box.x + side + BAND_GAP;
  for (const code of hazard.pictograms) {
    drawPictogram(doc, code, { x, y: box.y, size: side });
    x += side + BAND_GAP;
  }

  const rest: Box = { x: box.x, y: box.y + side + mm(0.6), w: box.w, h: box.h - side - mm(0.6) };
  const signal = hazard.signalWord ? hazard.signalWord.toUpperCase() : label.categoryName;
  // the lower label keeps the hazard: its statements follow the signal word
  const lower: LabelContent = { ...label, categoryName: signal };
  const compact: LabelLayout = { ...layout, nameLines: 1 };
  doc.font('Helvetica').fontSize(smallPt(layout));
  const small = lineHeight(doc);
  doc.font('Helvetica-Bold').fontSize(layout.namePt);
  const nameLine = lineHeight(doc);
  const textHeight = nameLine + 2 * small + (label.lot ? small : 0);
  // beside a QR code or Data Matrix: a line of the name and every small line, or they would run
  // past the label's edge onto the next (a lot label on an L7651 sheet)
  const matrixTextHeight = nameLine + matrixSmallLines(label) * small;
  const statementLine = hazard.hStatements.length > 0 ? minStatementLine(doc) : 0;
  doc.font('Helvetica-Bold').fontSize(layout.namePt);
  if (label.symbol.linear && rest.h - textHeight - statementLine >= mm(3)) drawLinearLabel(doc, compact, lower, rest);
  else if (!label.symbol.linear && rest.h >= Math.max(mm(6), matrixTextHeight - 0.01))
    drawMatrixLabel(doc, compact, lower, rest);
  else {
    let y = rest.y;
    doc.fillColor('black');
    y += textLines(doc, label.name, { x: rest.x, y, width: rest.w, lines: 1 });
    doc.fontSize(smallPt(layout));
    const small = lineHeight(doc);
    const room = rest.y + rest.h - y - small - (label.lot ? small : 0);
    // where not even a line of statements fits under it, the signal word's line carries the codes
    const codesBeside = room < statementLine - 0.01;
    const signalLine = [signal, codesBeside ? statementCodes(hazard) : '', label.sku].filter(Boolean).join('   ');
    doc.font('Helvetica-Bold').fontSize(smallPt(layout));
    y += textLines(doc, signalLine, { x: rest.x, y, width: rest.w, lines: 1 });
    if (label.lot) y += textLines(doc, lotTextLines(label.lot).join('   '), { x: rest.x, y, width: rest.w, lines: 1 });
    if (!codesBeside) drawStatements(doc, layout, hazard, { x: rest.x, y, w: rest.w, h: room });
  }
}
