import { PDFParse } from 'pdf-parse';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { binaryBody } from './helpers/binary-body';
import { cellIsBlank, decodeCells, renderPdfPages, type LayoutGeometry } from './helpers/labels-decode';
import { parseGs1 } from '../src/lib/gs1';

let t: TestApp;
let user: supertest.Agent;
let manager: supertest.Agent;
let layouts: Map<string, LayoutGeometry & { id: string }>;
let gloves: { id: number; sku: string; name: string };
let goggles: { id: number; sku: string; name: string };
let category: { id: number; name: string };

beforeAll(async () => {
  t = await testApp();
  user = await t.loginAs(await buildUser(t.db, { role: 'user' }));
  manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  category = await buildCategory(t.db, { name: 'Safety wear' });
  gloves = await buildItem(t.db, {
    name: 'Nitrile gloves, large, box of 100',
    sku: 'GLV-L-100',
    categoryId: category.id,
    price: '12.50',
    vatRate: '0.2000',
  });
  goggles = await buildItem(t.db, { name: 'Safety goggles', sku: 'GOG-7', categoryId: category.id, price: '4.00' });
  const res = await user.get('/api/labels/layouts').expect(200);
  layouts = new Map((res.body as (LayoutGeometry & { id: string })[]).map((layout) => [layout.id, layout]));
});
afterAll(() => t.close());

const print = (body: object, agent = manager) =>
  agent
    .post('/api/labels')
    .send(body)
    .buffer(true)
    .parse(binaryBody as never);

/** The PDF's labels decoded cell by cell, in print order (null for a cell where nothing decodes). */
async function decoded(pdf: Buffer, layoutId: string) {
  const pages = await renderPdfPages(pdf);
  const cells = await decodeCells(pages, layouts.get(layoutId)!);
  return { pages, texts: cells.map((cell) => cell?.text ?? null), formats: cells.map((cell) => cell?.format ?? null) };
}

async function pdfText(pdf: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  try {
    return (await parser.getText()).text.replace(/\s+/g, ' ');
  } finally {
    await parser.destroy();
  }
}

describe('GET /api/labels/layouts', () => {
  it('200 the Avery L7160 and L7651 sheets and the 62 x 29 mm roll, with their geometry', async () => {
    const res = await user.get('/api/labels/layouts').expect(200);
    const byId = Object.fromEntries((res.body as { id: string }[]).map((layout) => [layout.id, layout]));
    expect(byId['avery-l7160']).toMatchObject({
      pageWidthMm: 210,
      pageHeightMm: 297,
      columns: 3,
      rows: 7,
      labelWidthMm: 63.5,
      labelHeightMm: 38.1,
      marginTopMm: 15.15,
      pitchXMm: 66.04,
      pitchYMm: 38.1,
    });
    expect(byId['avery-l7651']).toMatchObject({
      columns: 5,
      rows: 13,
      labelWidthMm: 38.1,
      labelHeightMm: 21.2,
      marginTopMm: 10.7,
      pitchXMm: 40.64,
      pitchYMm: 21.2,
    });
    expect(byId['roll-62x29']).toMatchObject({
      pageWidthMm: 62,
      pageHeightMm: 29,
      columns: 1,
      rows: 1,
      labelWidthMm: 62,
      labelHeightMm: 29,
    });
    for (const layout of res.body as { name: string }[]) expect(layout.name).toEqual(expect.any(String));
  });

  it('401 signed out', async () => {
    await t.request.get('/api/labels/layouts').expect(401);
  });
});

describe('POST /api/labels: every label scans as its SKU', () => {
  it('code128 on L7160: the copies asked, in order, each decoding to its SKU, a second sheet when needed', async () => {
    const res = await print({
      layout: 'avery-l7160',
      items: [
        { itemId: gloves.id, copies: 20 },
        { itemId: goggles.id, copies: 3 },
      ],
    }).expect(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe('attachment; filename=labels-2-items.pdf');
    const { pages, texts, formats } = await decoded(res.body, 'avery-l7160');
    expect(pages).toHaveLength(2);
    expect(texts).toEqual([
      ...Array<string>(20).fill(gloves.sku),
      ...Array<string>(3).fill(goggles.sku),
      ...Array<null>(42 - 23).fill(null),
    ]);
    expect(new Set(formats.filter(Boolean))).toEqual(new Set(['Code128']));
  });

  it('startPosition leaves the used cells of the first sheet empty', async () => {
    const res = await print({
      layout: 'avery-l7160',
      items: [{ itemId: goggles.id, copies: 4 }],
      startPosition: 19,
    }).expect(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename=labels-GOG-7.pdf');
    const { pages, texts } = await decoded(res.body, 'avery-l7160');
    expect(pages).toHaveLength(2);
    expect(texts).toEqual([
      ...Array<null>(18).fill(null),
      ...Array<string>(4).fill(goggles.sku),
      ...Array<null>(21 - 1).fill(null),
    ]);
    // the skipped cells carry no ink at all, not merely nothing decodable
    for (let position = 0; position < 18; position += 1) {
      expect(cellIsBlank(pages[0], layouts.get('avery-l7160')!, position)).toBe(true);
    }
  });

  it('qr on L7651 (65 a sheet), with the price, name and category printed', async () => {
    const res = await print({
      layout: 'avery-l7651',
      symbology: 'qr',
      showPrice: true,
      items: [
        { itemId: goggles.id, copies: 2 },
        { itemId: gloves.id, copies: 66 },
      ],
      startPosition: 3,
    }).expect(200);
    const { pages, texts, formats } = await decoded(res.body, 'avery-l7651');
    expect(pages).toHaveLength(2);
    expect(texts).toEqual([
      null,
      null,
      goggles.sku,
      goggles.sku,
      ...Array<string>(66).fill(gloves.sku),
      ...Array<null>(130 - 70).fill(null),
    ]);
    expect(new Set(formats.filter(Boolean))).toEqual(new Set(['QRCode']));
    const text = await pdfText(res.body);
    expect(text).toContain('GLV-L-100');
    expect(text).toContain('Safety wear');
    expect(text).toContain('£12.50 ex VAT');
    expect(text).toContain('Safety goggles');
  });

  it('datamatrix on the 62 x 29 mm roll: one label a page', async () => {
    const res = await print({
      layout: 'roll-62x29',
      symbology: 'datamatrix',
      showPrice: true,
      items: [
        { itemId: gloves.id, copies: 2 },
        { itemId: goggles.id, copies: 1 },
      ],
    }).expect(200);
    const { pages, texts, formats } = await decoded(res.body, 'roll-62x29');
    expect(pages).toHaveLength(3);
    expect(texts).toEqual([gloves.sku, gloves.sku, goggles.sku]);
    expect(new Set(formats)).toEqual(new Set(['DataMatrix']));
    // with room on the roll, the price with VAT too (20%: £15.00)
    expect(await pdfText(res.body)).toContain('£12.50 ex VAT (£15.00 inc)');
  });

  it('code128 on L7651 and the roll, datamatrix on L7160, qr on the roll: all scan', async () => {
    for (const [layout, symbology] of [
      ['avery-l7651', 'code128'],
      ['roll-62x29', 'code128'],
      ['avery-l7160', 'datamatrix'],
      ['roll-62x29', 'qr'],
    ] as const) {
      const res = await print({ layout, symbology, items: [{ itemId: gloves.id, copies: 2 }] }).expect(200);
      const { texts } = await decoded(res.body, layout);
      expect(texts.filter(Boolean), `${layout} ${symbology}`).toEqual([gloves.sku, gloves.sku]);
    }
  });

  it('a long SKU: Code 128 down to one printer dot a bar still scans; longer is refused, and QR takes it', async () => {
    const long = await buildItem(t.db, { sku: 'LONG-SKU-ABCDEFGHIJKLMNOPQRSTUVW' });
    const res = await print({ layout: 'avery-l7651', items: [{ itemId: long.id, copies: 1 }] }).expect(200);
    expect((await decoded(res.body, 'avery-l7651')).texts.filter(Boolean)).toEqual([long.sku]);

    const longer = await buildItem(t.db, { sku: `LONGER-${'X'.repeat(40)}` });
    const refused = await manager
      .post('/api/labels')
      .send({
        layout: 'avery-l7651',
        items: [
          { itemId: long.id, copies: 1 },
          { itemId: longer.id, copies: 1 },
        ],
      })
      .expect(400);
    const message = `SKU '${longer.sku}' is too long for a Code 128 that scans on avery-l7651 labels: choose qr or datamatrix`;
    expect(refused.body).toEqual({ message, errors: [{ field: 'items.1.itemId', message }] });
    const qr = await print({
      layout: 'avery-l7651',
      symbology: 'qr',
      items: [{ itemId: longer.id, copies: 1 }],
    }).expect(200);
    expect((await decoded(qr.body, 'avery-l7651')).texts.filter(Boolean)).toEqual([longer.sku]);
  });

  it('an inactive item prints too', async () => {
    const old = await buildItem(t.db, { sku: 'OLD-1', isActive: false });
    const res = await print({ layout: 'roll-62x29', items: [{ itemId: old.id, copies: 1 }] }).expect(200);
    expect((await decoded(res.body, 'roll-62x29')).texts).toEqual(['OLD-1']);
  });

  it('2,000 labels is the most a request prints', async () => {
    const res = await print({ layout: 'avery-l7651', items: [{ itemId: goggles.id, copies: 2000 }] }).expect(200);
    expect(res.body.subarray(0, 5).toString()).toBe('%PDF-');
    // 2,000 labels at 65 a sheet: 31 sheets
    const parser = new PDFParse({ data: new Uint8Array(res.body) });
    try {
      expect((await parser.getInfo()).total).toBe(31);
    } finally {
      await parser.destroy();
    }
  });
});

describe('POST /api/labels: refusals', () => {
  const refused = async (body: object, field: string, message: string) => {
    const res = await manager.post('/api/labels').send(body).expect(400);
    expect(res.body.message).toBe(message);
    expect(res.body.errors).toEqual([{ field, message }]);
  };

  it('400 an unknown layout, naming it', async () => {
    await refused(
      { layout: 'avery-x', items: [{ itemId: gloves.id, copies: 1 }] },
      'layout',
      "Unknown layout 'avery-x' (one of avery-l7160, avery-l7651, roll-62x29, roll-50x25)",
    );
  });

  it('400 an unknown symbology, naming it', async () => {
    await refused(
      { layout: 'avery-l7160', symbology: 'ean13', items: [{ itemId: gloves.id, copies: 1 }] },
      'symbology',
      "Unknown symbology 'ean13' (one of code128, qr, datamatrix)",
    );
  });

  it('400 an item that does not exist, naming its line', async () => {
    await refused(
      {
        layout: 'avery-l7160',
        items: [
          { itemId: gloves.id, copies: 1 },
          { itemId: 999999, copies: 1 },
        ],
      },
      'items.1.itemId',
      'No item with id 999999',
    );
  });

  it('400 more than 2,000 labels in all', async () => {
    await refused(
      {
        layout: 'avery-l7160',
        items: [
          { itemId: gloves.id, copies: 1500 },
          { itemId: goggles.id, copies: 501 },
        ],
      },
      'items',
      'At most 2,000 labels a request (asked for 2,001)',
    );
  });

  it('400 a startPosition past the sheet, and anything but 1 on a roll', async () => {
    await refused(
      { layout: 'avery-l7160', startPosition: 22, items: [{ itemId: gloves.id, copies: 1 }] },
      'startPosition',
      "startPosition must be between 1 and 21 for layout 'avery-l7160'",
    );
    await refused(
      { layout: 'roll-62x29', startPosition: 2, items: [{ itemId: gloves.id, copies: 1 }] },
      'startPosition',
      "startPosition must be 1 for layout 'roll-62x29' (one label a page)",
    );
  });

  it('400 field errors from the schema: copies, startPosition, items, layout, showPrice', async () => {
    const cases: [object, string][] = [
      [{ layout: 'avery-l7160', items: [{ itemId: gloves.id, copies: 0 }] }, 'items.0.copies'],
      [{ layout: 'avery-l7160', items: [{ itemId: gloves.id, copies: 1.5 }] }, 'items.0.copies'],
      [{ layout: 'avery-l7160', items: [{ itemId: gloves.id, copies: 2001 }] }, 'items.0.copies'],
      [{ layout: 'avery-l7160', items: [{ itemId: 'x', copies: 1 }] }, 'items.0.itemId'],
      [{ layout: 'avery-l7160', items: [] }, 'items'],
      [{ items: [{ itemId: gloves.id, copies: 1 }] }, 'layout'],
      [{ layout: 'avery-l7160', startPosition: 0, items: [{ itemId: gloves.id, copies: 1 }] }, 'startPosition'],
      [{ layout: 'avery-l7160', showPrice: 'yes', items: [{ itemId: gloves.id, copies: 1 }] }, 'showPrice'],
    ];
    for (const [body, field] of cases) {
      const res = await manager.post('/api/labels').send(body).expect(400);
      expect(res.body.message, JSON.stringify(body)).toBe('Validation failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });

  it('401 signed out, 403 for a user', async () => {
    const body = { layout: 'avery-l7160', items: [{ itemId: gloves.id, copies: 1 }] };
    await t.request.post('/api/labels').send(body).expect(401);
    const res = await user.post('/api/labels').send(body).expect(403);
    expect(res.body.message).toBe('This action requires the manager role');
  });
});

describe('POST /api/labels: lot labels (issue 42)', () => {
  /** YYYY-MM-DD, `days` from today (UK). */
  const day = (days: number) =>
    new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date(Date.now() + days * 86_400_000));
  const yymmdd = (date: string) => date.slice(2).replaceAll('-', '');
  const GTIN = '09501101530003';

  let acetone: { id: number; sku: string };
  let ethanol: { id: number; sku: string };
  const lotIds: Record<string, number> = {};

  async function tracked(name: string, sku: string, barcodes: string[]) {
    const res = await manager
      .post('/api/items')
      .send({ name, sku, categoryId: category.id, price: '8.00', tracking: 'lot' })
      .expect(201);
    for (const code of barcodes) await manager.post(`/api/items/${res.body.id}/barcodes`).send({ code }).expect(201);
    return { id: res.body.id as number, sku };
  }
  async function lotIn(itemId: number, lotNumber: string, quantity: number, expiresOn: string | null) {
    await manager.post(`/api/items/${itemId}/stock`).send({ type: 'in', quantity, lotNumber, expiresOn }).expect(200);
    const lots = (await manager.get(`/api/items/${itemId}/lots`).expect(200)).body as {
      id: number;
      lotNumber: string;
    }[];
    lotIds[lotNumber] = lots.find((lot) => lot.lotNumber === lotNumber)!.id;
  }

  beforeAll(async () => {
    // the item's GTIN is its EAN-13 barcode; the label carries it as GTIN-14
    acetone = await tracked('Acetone, HPLC grade, 2.5 l', 'ACE-HPLC-2.5', ['9501101530003']);
    ethanol = await tracked('Ethanol absolute, 1 l', 'ETH-ABS-1', []);
    await lotIn(acetone.id, 'B2417', 6, day(400));
    await lotIn(acetone.id, 'NODATE-7', 2, null);
    await lotIn(ethanol.id, 'E-993', 4, day(200));
    await lotIn(acetone.id, 'LOT WITH SPACE', 1, day(300));
  });

  it('a GTIN item: a GS1 DataMatrix (01)(17)(10) that decodes to the GTIN, YYMMDD expiry and lot; lot and expiry in text', async () => {
    const res = await print({
      layout: 'avery-l7160',
      items: [{ itemId: gloves.id, copies: 1 }],
      lots: [{ lotId: lotIds.B2417, copies: 2 }],
    }).expect(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    const pages = await renderPdfPages(res.body);
    const cells = (await decodeCells(pages, layouts.get('avery-l7160')!)).filter((cell) => cell !== null);
    // the item label first, then the lot's copies
    expect(cells.map((cell) => [cell.format, cell.text])).toEqual([
      ['Code128', gloves.sku],
      ['DataMatrix', `(01)${GTIN}(17)${yymmdd(day(400))}(10)B2417`],
      ['DataMatrix', `(01)${GTIN}(17)${yymmdd(day(400))}(10)B2417`],
    ]);
    // a GS1 symbol (FNC1 first), read back by the scanner's own parser
    expect(cells[1].symbologyIdentifier).toBe(']d2');
    const scanned = parseGs1(`${cells[1].symbologyIdentifier}${cells[1].text}`);
    expect(scanned).toMatchObject({ ok: true, gtin: GTIN, expiresOn: day(400), lotNumber: 'B2417' });
    const text = await pdfText(res.body);
    expect(text).toContain('Acetone, HPLC grade, 2.5 l');
    expect(text).toContain('ACE-HPLC-2.5');
    expect(text).toContain('Lot B2417');
    expect(text).toContain(`Exp ${day(400)}`);
  });

  it('a lot without expiry: (01)(10) only, and no expiry printed', async () => {
    const res = await print({ layout: 'roll-62x29', lots: [{ lotId: lotIds['NODATE-7'], copies: 1 }] }).expect(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename=labels-ACE-HPLC-2.5.pdf');
    const { texts, formats } = await decoded(res.body, 'roll-62x29');
    expect(texts).toEqual([`(01)${GTIN}(10)NODATE-7`]);
    expect(formats).toEqual(['DataMatrix']);
    const text = await pdfText(res.body);
    expect(text).toContain('Lot NODATE-7');
    expect(text).not.toContain('Exp ');
  });

  it('an item without a GTIN: a Code 128 of the SKU, with the lot and expiry in text, on every layout', async () => {
    for (const layout of ['avery-l7160', 'avery-l7651', 'roll-62x29']) {
      const res = await print({ layout, symbology: 'qr', lots: [{ lotId: lotIds['E-993'], copies: 2 }] }).expect(200);
      const { texts, formats } = await decoded(res.body, layout);
      expect(texts.filter(Boolean), layout).toEqual([ethanol.sku, ethanol.sku]);
      expect(new Set(formats.filter(Boolean)), layout).toEqual(new Set(['Code128']));
      const text = await pdfText(res.body);
      expect(text, layout).toContain('Lot E-993');
      expect(text, layout).toContain(`Exp ${day(200)}`);
    }
  });

  it('a lot number GS1 cannot carry (a space): the Code 128 of the SKU, the lot in text', async () => {
    const res = await print({ layout: 'avery-l7160', lots: [{ lotId: lotIds['LOT WITH SPACE'], copies: 1 }] }).expect(
      200,
    );
    const { texts, formats } = await decoded(res.body, 'avery-l7160');
    expect(texts.filter(Boolean)).toEqual([acetone.sku]);
    expect(formats.filter(Boolean)).toEqual(['Code128']);
    expect(await pdfText(res.body)).toContain('Lot LOT WITH SPACE');
  });

  it('GS1 DataMatrix lot labels scan on the smallest sheet too', async () => {
    const res = await print({ layout: 'avery-l7651', lots: [{ lotId: lotIds.B2417, copies: 3 }] }).expect(200);
    const { texts } = await decoded(res.body, 'avery-l7651');
    expect(texts.filter(Boolean)).toEqual(Array(3).fill(`(01)${GTIN}(17)${yymmdd(day(400))}(10)B2417`));
  });

  it('400 a lot that does not exist, naming its line, as an unknown item is', async () => {
    const res = await manager
      .post('/api/labels')
      .send({
        layout: 'avery-l7160',
        lots: [
          { lotId: lotIds.B2417, copies: 1 },
          { lotId: 999999, copies: 1 },
        ],
      })
      .expect(400);
    expect(res.body).toEqual({
      message: 'No lot with id 999999',
      errors: [{ field: 'lots.1.lotId', message: 'No lot with id 999999' }],
    });
  });

  it('400 more than 2,000 labels across items and lots; field errors of a lot line; neither items nor lots', async () => {
    const tooMany = await manager
      .post('/api/labels')
      .send({
        layout: 'avery-l7160',
        items: [{ itemId: gloves.id, copies: 1000 }],
        lots: [{ lotId: lotIds.B2417, copies: 1001 }],
      })
      .expect(400);
    expect(tooMany.body.message).toBe('At most 2,000 labels a request (asked for 2,001)');
    const cases: [object, string][] = [
      [{ layout: 'avery-l7160', lots: [{ lotId: lotIds.B2417, copies: 0 }] }, 'lots.0.copies'],
      [{ layout: 'avery-l7160', lots: [{ lotId: 'x', copies: 1 }] }, 'lots.0.lotId'],
      [{ layout: 'avery-l7160', lots: 'x' }, 'lots'],
      [{ layout: 'avery-l7160' }, 'items'],
      [{ layout: 'avery-l7160', items: [], lots: [] }, 'items'],
    ];
    for (const [body, field] of cases) {
      const res = await manager.post('/api/labels').send(body).expect(400);
      expect(res.body.message, JSON.stringify(body)).toBe('Validation failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });

  it('403 for a user', async () => {
    const res = await user
      .post('/api/labels')
      .send({ layout: 'avery-l7160', lots: [{ lotId: lotIds.B2417, copies: 1 }] })
      .expect(403);
    expect(res.body.message).toBe('This action requires the manager role');
  });
});
