import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PDFParse } from 'pdf-parse';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareZXingModule, readBarcodes } from 'zxing-wasm/reader';
import { testApp, type TestApp } from './helpers/app';
import { binaryBody } from './helpers/binary-body';
import { buildCategory, buildUser } from './helpers/factories';
import type { LayoutGeometry } from './helpers/labels-decode';

// Issue 43: a hazardous item's label prints its pictograms (vector, red-bordered diamonds at least
// 10 mm wide on a sheet), its signal word and a QR code of PUBLIC_URL/items/<id>/sds; the bottle
// layout is a 50 x 25 mm roll label.

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const DPI = 300;
const px = (mm: number) => (mm * DPI) / 25.4;

let t: TestApp;
let manager: supertest.Agent;
let layouts: Map<string, LayoutGeometry & { id: string; pageWidthMm: number; pageHeightMm: number }>;
let acid: { id: number; sku: string };
let plain: { id: number; sku: string };
let crowded: { id: number; sku: string };
let acetone: { id: number; sku: string };

type RgbPage = { width: number; height: number; pixels: Uint8Array };

/** Every page of the PDF at 300 dpi in colour (pdftoppm's PPM). */
async function renderRgb(pdf: Buffer): Promise<RgbPage[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hazard-labels-'));
  try {
    await writeFile(path.join(dir, 'labels.pdf'), pdf);
    await run('pdftoppm', ['-r', String(DPI), path.join(dir, 'labels.pdf'), path.join(dir, 'page')]);
    const files = (await readdir(dir)).filter((name) => name.endsWith('.ppm')).sort();
    return Promise.all(
      files.map(async (name) => {
        const data = await readFile(path.join(dir, name));
        const header = data.subarray(0, 64).toString('latin1');
        const match = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(header)!;
        return { width: Number(match[1]), height: Number(match[2]), pixels: data.subarray(match[0].length) };
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type Cell = { x: number; y: number; w: number; h: number };
const cellOf = (layout: LayoutGeometry, position: number): Cell => {
  const column = position % layout.columns;
  const row = Math.floor(position / layout.columns);
  return {
    x: Math.round(px(layout.marginLeftMm + column * layout.pitchXMm)),
    y: Math.round(px(layout.marginTopMm + row * layout.pitchYMm)),
    w: Math.round(px(layout.labelWidthMm)),
    h: Math.round(px(layout.labelHeightMm)),
  };
};

const isRed = (page: RgbPage, x: number, y: number) => {
  const at = (y * page.width + x) * 3;
  const [r, g, b] = [page.pixels[at], page.pixels[at + 1], page.pixels[at + 2]];
  return r > 180 && g < 80 && b < 80;
};

/** The red pixels of a cell (the pictograms' borders) as runs of columns holding some: one run a diamond, [from, to] in mm from the cell's left. */
function redRuns(page: RgbPage, cell: Cell): { count: number; runs: [number, number][] } {
  let count = 0;
  const columns: boolean[] = [];
  for (let x = cell.x; x < cell.x + cell.w; x += 1) {
    let red = false;
    for (let y = cell.y; y < cell.y + cell.h; y += 1) {
      if (isRed(page, x, y)) {
        red = true;
        count += 1;
      }
    }
    columns.push(red);
  }
  const runs: [number, number][] = [];
  let start = -1;
  columns.forEach((red, i) => {
    if (red && start < 0) start = i;
    if (!red && start >= 0) {
      runs.push([start, i - 1]);
      start = -1;
    }
  });
  if (start >= 0) runs.push([start, columns.length - 1]);
  const mm = (pixels: number) => (pixels * 25.4) / DPI;
  return { count, runs: runs.map(([a, b]) => [mm(a), mm(b + 1)]) };
}

/** The dark (text, bars) pixels of a cell. */
function darkPixels(page: RgbPage, cell: Cell): number {
  let count = 0;
  for (let y = cell.y; y < Math.min(cell.y + cell.h, page.height); y += 1) {
    for (let x = cell.x; x < Math.min(cell.x + cell.w, page.width); x += 1) {
      const at = (y * page.width + x) * 3;
      if (page.pixels[at] + page.pixels[at + 1] + page.pixels[at + 2] < 600) count += 1;
    }
  }
  return count;
}

let prepared = false;
/** The QR codes ZXing finds in a cell. */
async function qrTexts(page: RgbPage, cell: Cell): Promise<string[]> {
  if (!prepared) {
    prepareZXingModule({
      overrides: { wasmBinary: readFileSync(require.resolve('zxing-wasm/reader/zxing_reader.wasm')) },
    });
    prepared = true;
  }
  const width = Math.min(cell.w, page.width - cell.x);
  const height = Math.min(cell.h, page.height - cell.y);
  const data = new Uint8ClampedArray(width * height * 4);
  for (let row = 0; row < height; row += 1) {
    for (let col = 0; col < width; col += 1) {
      const from = ((cell.y + row) * page.width + cell.x + col) * 3;
      const to = (row * width + col) * 4;
      data.set([page.pixels[from], page.pixels[from + 1], page.pixels[from + 2], 255], to);
    }
  }
  const found = await readBarcodes(
    { data, width, height, colorSpace: 'srgb' } as unknown as Parameters<typeof readBarcodes>[0],
    {
      tryHarder: true,
      formats: ['QRCode'],
    },
  );
  return found.map((result) => result.text);
}

async function pdfText(pdf: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  try {
    return (await parser.getText()).text.replace(/\s+/g, ' ');
  } finally {
    await parser.destroy();
  }
}

const print = (body: object) =>
  manager
    .post('/api/labels')
    .send(body)
    .buffer(true)
    .parse(binaryBody as never);

const hazard = (pictograms: string[], signalWord: string, hStatements: string[]) => ({
  signalWord,
  pictograms,
  hStatements,
  pStatements: [],
  casNumber: null,
  unNumber: null,
  storage: null,
});

beforeAll(async () => {
  t = await testApp();
  manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  const category = await buildCategory(t.db, { name: 'Reagents' });
  const create = async (name: string, sku: string, extra: object = {}) => {
    const res = await manager
      .post('/api/items')
      .send({ name, sku, categoryId: category.id, price: '9.00', ...extra })
      .expect(201);
    return { id: res.body.id as number, sku };
  };
  acid = await create('Hydrochloric acid 37%', 'HCL-37', {
    hazard: hazard(['GHS05', 'GHS07'], 'Danger', ['H290', 'H314', 'H335']),
  });
  plain = await create('Beaker 100 ml', 'BKR-100');
  crowded = await create('Methanol', 'MEOH-1', {
    hazard: hazard(['GHS02', 'GHS06', 'GHS08'], 'Danger', ['H225', 'H301', 'H311', 'H331', 'H370']),
  });
  acetone = await create('Acetone', 'ACE-1', {
    hazard: { ...hazard(['GHS02'], 'Danger', ['H225']), pStatements: ['P405'] },
  });
  const res = await manager.get('/api/labels/layouts').expect(200);
  layouts = new Map(
    (res.body as (LayoutGeometry & { id: string; pageWidthMm: number; pageHeightMm: number })[]).map((l) => [l.id, l]),
  );
});
afterAll(() => t?.close());

describe('hazard labels (issue 43)', () => {
  it('a sheet label: the SDS QR code decodes to PUBLIC_URL/items/<id>/sds, two red diamonds at least 10 mm wide in its cell, the signal word', async () => {
    const res = await print({
      layout: 'avery-l7160',
      startPosition: 5,
      items: [
        { itemId: acid.id, copies: 1 },
        { itemId: plain.id, copies: 1 },
      ],
    }).expect(200);
    const pdf = res.body as Buffer;
    const [page] = await renderRgb(pdf);
    if (process.env.SAVE_LABELS) await writeFile(path.join(process.env.SAVE_LABELS, 'sheet.pdf'), pdf);
    const layout = layouts.get('avery-l7160')!;

    const acidCell = cellOf(layout, 4);
    expect(await qrTexts(page, acidCell)).toEqual([`${t.config.publicUrl}/items/${acid.id}/sds`]);
    const red = redRuns(page, acidCell);
    expect(red.runs).toHaveLength(2);
    for (const [from, to] of red.runs) expect(to - from).toBeGreaterThanOrEqual(10);
    // the pictograms sit inside the cell, not across its edge
    expect(red.runs[0][0]).toBeGreaterThan(0);
    expect(red.runs[1][1]).toBeLessThan(layout.labelWidthMm);
    expect(await pdfText(pdf)).toContain('DANGER');

    // the next label, of an item without hazards: no red, no QR code (its Code 128 only)
    const plainCell = cellOf(layout, 5);
    expect(redRuns(page, plainCell).count).toBe(0);
    expect(await qrTexts(page, plainCell)).toEqual([]);
    // the cells around the label stay free of red
    expect(redRuns(page, cellOf(layout, 3)).count).toBe(0);
    expect(redRuns(page, cellOf(layout, 7)).count).toBe(0);
  });

  it('the 50 x 25 mm bottle roll: its page size, the QR code and three pictograms on one label', async () => {
    const layout = layouts.get('roll-50x25')!;
    expect(layout).toMatchObject({
      pageWidthMm: 50,
      pageHeightMm: 25,
      labelWidthMm: 50,
      labelHeightMm: 25,
      columns: 1,
      rows: 1,
    });
    const res = await print({
      layout: 'roll-50x25',
      symbology: 'qr',
      items: [{ itemId: crowded.id, copies: 2 }],
    }).expect(200);
    const pdf = res.body as Buffer;
    const parser = new PDFParse({ data: new Uint8Array(pdf) });
    const info = await parser.getInfo();
    await parser.destroy();
    expect(info.total).toBe(2);
    // the page is 50 x 25 mm: 141.73 x 70.87 points
    const mediaBoxes = [...pdf.toString('latin1').matchAll(/\/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]/g)];
    expect(mediaBoxes).toHaveLength(2);
    for (const [, w, h] of mediaBoxes) {
      expect(Number(w)).toBeCloseTo((50 * 72) / 25.4, 1);
      expect(Number(h)).toBeCloseTo((25 * 72) / 25.4, 1);
    }
    const [page] = await renderRgb(pdf);
    expect(Math.abs(page.width - px(50))).toBeLessThanOrEqual(1);
    expect(Math.abs(page.height - px(25))).toBeLessThanOrEqual(1);
    if (process.env.SAVE_LABELS) await writeFile(path.join(process.env.SAVE_LABELS, 'bottle.pdf'), pdf);
    const cell = cellOf(layout, 0);
    expect(await qrTexts(page, cell)).toContain(`${t.config.publicUrl}/items/${crowded.id}/sds`);
    expect(redRuns(page, cell).runs).toHaveLength(3);
  });

  it("prints the H statements' texts after the signal word on a sheet, at least the codes on the bottle roll, nothing outside the label's cell", async () => {
    // a sheet label with room: each H statement's standard text (P statements only where room remains)
    const sheet = (
      await print({ layout: 'avery-l7160', startPosition: 5, items: [{ itemId: acid.id, copies: 1 }] }).expect(200)
    ).body as Buffer;
    const sheetText = await pdfText(sheet);
    expect(sheetText).toContain('DANGER');
    for (const text of [
      'May be corrosive to metals.',
      'Causes severe skin burns and eye damage.',
      'May cause respiratory irritation.',
    ])
      expect(sheetText).toContain(text);
    expect(sheetText.indexOf('May be corrosive to metals.')).toBeGreaterThan(sheetText.indexOf('DANGER'));
    // nothing dark outside the label's cell (the cells around it stay blank)
    const layout = layouts.get('avery-l7160')!;
    const [page] = await renderRgb(sheet);
    for (const position of [1, 3, 5, 7]) expect(darkPixels(page, cellOf(layout, position))).toBe(0);

    // room left after every H statement: the P statements follow them
    const acetoneText = await pdfText(
      (await print({ layout: 'avery-l7160', items: [{ itemId: acetone.id, copies: 1 }] }).expect(200)).body as Buffer,
    );
    expect(acetoneText).toContain('DANGER Highly flammable liquid and vapour. Store locked up.');

    // five H statements do not fit a sheet label's room even in 5 pt: the first ones, then "… see SDS"
    const crowdedPdf = (await print({ layout: 'avery-l7160', items: [{ itemId: crowded.id, copies: 1 }] }).expect(200))
      .body as Buffer;
    const crowdedText = await pdfText(crowdedPdf);
    expect(crowdedText).toContain('DANGER Highly flammable liquid and vapour. Toxic if swallowed.');
    expect(crowdedText).toContain('\u2026 see SDS');
    const [crowdedPage] = await renderRgb(crowdedPdf);
    for (const position of [1, 3]) expect(darkPixels(crowdedPage, cellOf(layout, position))).toBe(0);

    // the 50 x 25 mm bottle roll, in both symbologies: at least every H code (or its text), within the page
    for (const symbology of ['qr', 'code128']) {
      const bottle = (
        await print({ layout: 'roll-50x25', symbology, items: [{ itemId: crowded.id, copies: 1 }] }).expect(200)
      ).body as Buffer;
      const text = await pdfText(bottle);
      const statementTexts: Record<string, string> = {
        H225: 'Highly flammable liquid and vapour.',
        H301: 'Toxic if swallowed.',
        H311: 'Toxic in contact with skin.',
        H331: 'Toxic if inhaled.',
        H370: 'Causes damage to organs',
      };
      const shown = Object.entries(statementTexts).filter(
        ([code, words]) => text.includes(code) || text.includes(words),
      );
      // every code or text, or the first ones with "… see SDS"
      if (!text.includes('see SDS')) expect(shown.map(([code]) => code)).toEqual(Object.keys(statementTexts));
      else expect(shown.length).toBeGreaterThanOrEqual(1);
      // one page: no text ran past the label onto a page of its own
      expect([...bottle.toString('latin1').matchAll(/\/MediaBox /g)]).toHaveLength(1);
    }
  });

  it('an L7651 label too low for its QR code or Data Matrix with every line beside it prints them in text, within its cell', async () => {
    const res = await manager
      .post('/api/items')
      .send({
        name: 'Acetone, HPLC grade, 2.5 l',
        sku: 'ACE-LOT-1',
        categoryId: (await t.db('items').where({ id: acid.id }).first('category_id')).category_id,
        price: '18.00',
        tracking: 'lot',
        hazard: hazard(['GHS02', 'GHS07'], 'Danger', ['H225', 'H319', 'H336']),
      })
      .expect(201);
    const tracked = res.body.id as number;
    await manager.post(`/api/items/${tracked}/barcodes`).send({ code: '9501101530003' }).expect(201);
    await manager
      .post(`/api/items/${tracked}/stock`)
      .send({ type: 'in', quantity: 2, lotNumber: 'B-77', expiresOn: '2031-06-30' })
      .expect(200);
    const [lot] = (await manager.get(`/api/items/${tracked}/lots`).expect(200)).body as { id: number }[];

    // a QR code item label with its price, and a lot label (GS1 DataMatrix): first and second cells
    const pdf = (
      await print({
        layout: 'avery-l7651',
        symbology: 'qr',
        showPrice: true,
        items: [{ itemId: acid.id, copies: 1 }],
        lots: [{ lotId: lot.id, copies: 1 }],
      }).expect(200)
    ).body as Buffer;
    if (process.env.SAVE_LABELS) await writeFile(path.join(process.env.SAVE_LABELS, 'l7651-lot.pdf'), pdf);
    const text = await pdfText(pdf);
    for (const words of ['Hydrochloric acid 37%', 'Acetone, HPLC grade, 2.5 l', 'DANGER', 'Lot B-77', 'Exp 2031-06-30'])
      expect(text).toContain(words);
    const layout = layouts.get('avery-l7651')!;
    const [page] = await renderRgb(pdf);
    expect(darkPixels(page, cellOf(layout, 0))).toBeGreaterThan(0);
    expect(darkPixels(page, cellOf(layout, 1))).toBeGreaterThan(0);
    // nothing ran past the labels onto the next cell or the row below
    for (const position of [2, 5, 6]) expect(darkPixels(page, cellOf(layout, position))).toBe(0);
  });

  it('400 naming the line where a small sheet label cannot print the pictograms 10 mm wide', async () => {
    const res = await manager
      .post('/api/labels')
      .send({
        layout: 'avery-l7651',
        items: [
          { itemId: plain.id, copies: 1 },
          { itemId: crowded.id, copies: 1 },
        ],
      })
      .expect(400);
    expect(res.body.errors).toEqual([
      {
        field: 'items.1.itemId',
        message:
          'MEOH-1 has 3 hazard pictograms: avery-l7651 labels cannot print them 10 mm wide; choose a larger label or a roll',
      },
    ]);
    // two fit
    await print({ layout: 'avery-l7651', items: [{ itemId: acid.id, copies: 1 }] }).expect(200);
  });
});
