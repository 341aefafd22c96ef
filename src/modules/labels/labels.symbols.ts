import type { DrawingContext, RenderOptions } from 'bwip-js/node';
import type { Symbology } from './labels.layouts';

/**
 * A barcode symbol as vector geometry in module units (one module = the narrowest bar, or one
 * cell of a 2D symbol), y downwards: the PDF operators of its dark areas, ready to be scaled into
 * a label. bwip-js encodes the text and lays out the modules (through its drawing API); nothing
 * here decides where a bar goes.
 */
export type LabelSymbol = {
  /** linear symbols (code128) are drawn as full-height bars, stretched to the height given */
  linear: boolean;
  widthModules: number;
  /** 1 for a linear symbol (its bars run from 0 to 1) */
  heightModules: number;
  /** the modules each side that must stay blank around the symbol (its quiet zone) */
  quietModules: number;
  /** PDF path operators (`re`, `m`, `l`, `h`) of the dark areas, in module units */
  path: string;
};

/** What a symbol is drawn as: a symbology a print may choose, or a lot label's GS1 DataMatrix (issue 42). */
export type SymbolKind = Symbology | 'gs1datamatrix';

const BWIP_IDS: Record<SymbolKind, string> = {
  code128: 'code128',
  qr: 'qrcode',
  datamatrix: 'datamatrix',
  // FNC1 first, and bwip-js puts the GS separator after a variable-length element that is not last
  gs1datamatrix: 'gs1datamatrix',
};
/** Code 128 wants 10 modules of quiet zone each side; QR 4; Data Matrix 1 (2 given). */
const QUIET_MODULES: Record<SymbolKind, number> = { code128: 10, qr: 4, datamatrix: 2, gs1datamatrix: 2 };

type Bwip = typeof import('bwip-js/node');
let bwip: Promise<Bwip> | undefined;
/** bwip-js (2 MB of PostScript turned JavaScript) loads on the first label print, not at start. */
export const loadBwip = (): Promise<Bwip> => (bwip ??= import('bwip-js/node').then((m) => m as Bwip));

const num = (value: number) => String(Math.round(value * 1000) / 1000);

type Drawn = { path: string; width: number; height: number; linear: boolean };

/** A drawing context for bwip-js that keeps the dark areas as PDF path operators, in module units. */
function moduleDrawing(): DrawingContext<Drawn> {
  let pixelsPerModule = 1;
  let width = 0;
  let height = 0;
  const parts: string[] = [];
  let linear = false;
  return {
    scale(sx) {
      pixelsPerModule = sx;
      return null;
    },
    measure: () => ({ width: 0, ascent: 0, descent: 0 }),
    init(w, h) {
      width = w;
      height = h;
    },
    // a bar: a stroked vertical line of width lw centred on x (the scale is even, so every width is)
    // eslint-disable-next-line max-params -- bwip-js's drawing interface calls it with five positional arguments
    line(x0, _y0, x1, _y1, lw) {
      linear = true;
      if (x0 !== x1) return; // linear symbols draw only vertical bars (no bearer bars asked)
      parts.push(`${num((x0 - lw / 2) / pixelsPerModule)} 0 ${num(lw / pixelsPerModule)} 1 re`);
    },
    polygon(points) {
      const [first, ...rest] = points;
      parts.push(
        `${num(first[0] / pixelsPerModule)} ${num(first[1] / pixelsPerModule)} m ` +
          rest.map(([x, y]) => `${num(x / pixelsPerModule)} ${num(y / pixelsPerModule)} l`).join(' ') +
          ' h',
      );
    },
    hexagon(points) {
      this.polygon(points);
    },
    ellipse() {
      throw new Error('ellipses are not used by the label symbologies');
    },
    fill() {},
    text() {},
    end: () => ({ path: parts.join('\n'), width: width / pixelsPerModule, height: height / pixelsPerModule, linear }),
  };
}

/**
 * The symbols drawn lately, by symbology and text, shared by every print (a reprinted shelf or the
 * copies of a label reuse theirs): at most this many, the oldest used forgotten first. A QR path is
 * about 3 kB, so the cache stays a few MB.
 */
const CACHE_SIZE = 2000;
const cache = new Map<string, LabelSymbol>();

/**
 * The symbol of `text` in `symbology` (bwip-js loaded already: see loadBwip); throws when it cannot
 * be encoded. A gs1datamatrix's text is a bracketed GS1 element string, `(01)…(17)…(10)…`.
 */
export function labelSymbol(bwipjs: Bwip, symbology: SymbolKind, text: string): LabelSymbol {
  const key = `${symbology}\u0000${text}`;
  const cached = cache.get(key);
  if (cached) {
    cache.delete(key);
    cache.set(key, cached);
    return cached;
  }
  // scale 2: every bar is an even number of pixels wide, so its centre (where bwip-js draws it) is exact
  const options: RenderOptions = { bcid: BWIP_IDS[symbology], text, scale: 2, includetext: false };
  let drawn: Drawn;
  try {
    drawn = bwipjs.render(options, moduleDrawing());
  } catch (err) {
    const what = symbology === 'gs1datamatrix' ? `GS1 element string '${text}'` : `SKU '${text}'`;
    throw new Error(`${what} cannot be encoded as ${symbology}: ${(err as Error).message}`, { cause: err });
  }
  const symbol: LabelSymbol = {
    linear: drawn.linear,
    widthModules: drawn.width,
    heightModules: drawn.linear ? 1 : drawn.height,
    quietModules: QUIET_MODULES[symbology],
    path: drawn.path,
  };
  cache.set(key, symbol);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return symbol;
}
