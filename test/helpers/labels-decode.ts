import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { prepareZXingModule, readBarcodes, type ReadResult } from 'zxing-wasm/reader';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

/** A page rendered to grey pixels (one byte a pixel, 0 black). */
export type GreyPage = { width: number; height: number; pixels: Uint8Array };

/** The layout geometry the API answers (GET /api/labels/layouts). */
export type LayoutGeometry = {
  columns: number;
  rows: number;
  labelWidthMm: number;
  labelHeightMm: number;
  marginTopMm: number;
  marginLeftMm: number;
  pitchXMm: number;
  pitchYMm: number;
};

export const DPI = 300;

/** A binary PGM (P5) as pdftoppm -gray writes it. */
function parsePgm(data: Buffer): GreyPage {
  let offset = 0;
  const fields: string[] = [];
  while (fields.length < 4) {
    while (/\s/.test(String.fromCharCode(data[offset]))) offset += 1;
    if (data[offset] === 0x23) {
      while (data[offset] !== 0x0a) offset += 1;
      continue;
    }
    let token = '';
    while (!/\s/.test(String.fromCharCode(data[offset]))) token += String.fromCharCode(data[offset++]);
    fields.push(token);
  }
  offset += 1; // the one whitespace after maxval
  const [magic, width, height, max] = fields;
  if (magic !== 'P5' || max !== '255') throw new Error(`not an 8-bit PGM: ${fields.join(' ')}`);
  return { width: Number(width), height: Number(height), pixels: data.subarray(offset) };
}

/** Every page of the PDF at 300 dpi in grey, as poppler's pdftoppm renders it. */
export async function renderPdfPages(pdf: Buffer): Promise<GreyPage[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'labels-'));
  try {
    await writeFile(path.join(dir, 'labels.pdf'), pdf);
    await run('pdftoppm', ['-r', String(DPI), '-gray', path.join(dir, 'labels.pdf'), path.join(dir, 'page')]);
    const files = (await readdir(dir)).filter((name) => name.endsWith('.pgm')).sort();
    // awaited here, not returned: the finally would remove the pages while they are still being read
    return await Promise.all(files.map(async (name) => parsePgm(await readFile(path.join(dir, name)))));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

let prepared = false;
function prepareReader() {
  if (prepared) return;
  // the reader's WebAssembly from node_modules, not from its default CDN
  prepareZXingModule({
    overrides: { wasmBinary: readFileSync(require.resolve('zxing-wasm/reader/zxing_reader.wasm')) },
  });
  prepared = true;
}

/** The rectangle (pixels) of a page region as RGBA image data, for the decoder. */
function crop(page: GreyPage, x: number, y: number, w: number, h: number) {
  const x0 = Math.max(0, Math.round(x));
  const y0 = Math.max(0, Math.round(y));
  const width = Math.min(page.width - x0, Math.round(w));
  const height = Math.min(page.height - y0, Math.round(h));
  const data = new Uint8ClampedArray(width * height * 4);
  for (let row = 0; row < height; row += 1) {
    for (let col = 0; col < width; col += 1) {
      const grey = page.pixels[(y0 + row) * page.width + x0 + col];
      const at = (row * width + col) * 4;
      data[at] = grey;
      data[at + 1] = grey;
      data[at + 2] = grey;
      data[at + 3] = 255;
    }
  }
  return { data, width, height, colorSpace: 'srgb' as const };
}

const px = (mm: number) => (mm * DPI) / 25.4;

/** What each cell of each page decodes to, in print order (null where nothing decodes: an empty cell). */
export async function decodeCells(pages: GreyPage[], layout: LayoutGeometry): Promise<(ReadResult | null)[]> {
  prepareReader();
  const cells: (ReadResult | null)[] = [];
  for (const page of pages) {
    for (let row = 0; row < layout.rows; row += 1) {
      for (let column = 0; column < layout.columns; column += 1) {
        const image = crop(
          page,
          px(layout.marginLeftMm + column * layout.pitchXMm),
          px(layout.marginTopMm + row * layout.pitchYMm),
          px(layout.labelWidthMm),
          px(layout.labelHeightMm),
        );
        const [found] = await readBarcodes(image as unknown as Parameters<typeof readBarcodes>[0], {
          tryHarder: true,
          maxNumberOfSymbols: 1,
        });
        cells.push(found ?? null);
      }
    }
  }
  return cells;
}

/** Whether a cell of the page is blank (nothing darker than light grey in it). */
export function cellIsBlank(page: GreyPage, layout: LayoutGeometry, position: number): boolean {
  const column = position % layout.columns;
  const row = Math.floor(position / layout.columns);
  const x0 = Math.round(px(layout.marginLeftMm + column * layout.pitchXMm));
  const y0 = Math.round(px(layout.marginTopMm + row * layout.pitchYMm));
  for (let y = y0; y < y0 + Math.round(px(layout.labelHeightMm)); y += 1) {
    for (let x = x0; x < x0 + Math.round(px(layout.labelWidthMm)); x += 1) {
      if (page.pixels[y * page.width + x] < 200) return false;
    }
  }
  return true;
}
