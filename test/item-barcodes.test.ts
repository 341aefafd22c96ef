import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem } from './helpers/factories';
import { agentsByRole, type Agents } from './helpers/inventory-factories';
import { binaryBody } from './helpers/binary-body';
import { gs1CheckDigit } from '../src/lib/gs1';
import { itemIdForCode } from '../src/modules/items/items.queries';

let t: TestApp;
let as: Agents;
let category: { id: number; name: string };
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  category = await buildCategory(t.db, { name: 'Scanned things' });
});
afterAll(() => t.close());

const GS = '\x1d';
let serial = 0;
/** A fresh valid EAN-13 (a GS1 check digit over a body no other test of this file uses). */
const ean13 = () => {
  serial += 1;
  const body = `590${String(Date.now() % 1e5).padStart(5, '0')}${String(serial).padStart(4, '0')}`;
  return body + gs1CheckDigit(body);
};
/** A fresh valid UPC-A. */
const upca = () => {
  serial += 1;
  const body = `03${String(Date.now() % 1e5).padStart(5, '0')}${String(serial).padStart(4, '0')}`;
  return body + gs1CheckDigit(body);
};
/** A fresh valid GTIN-14 (indicator digit 1). */
const gtin14 = () => {
  const body = `1${ean13().slice(0, 12)}`;
  return body + gs1CheckDigit(body);
};
const wrongCheck = (code: string) => code.slice(0, -1) + ((Number(code.at(-1)) + 1) % 10);
const item = (overrides: Parameters<typeof buildItem>[1] = {}) =>
  buildItem(t.db, { categoryId: category.id, ...overrides });
const add = (itemId: number, body: Record<string, unknown>) =>
  as.manager.post(`/api/items/${itemId}/barcodes`).send(body);

describe('POST /api/items/{id}/barcodes', () => {
  it('401 signed out, 403 for a user', async () => {
    const i = await item();
    await t.request.post(`/api/items/${i.id}/barcodes`).send({ code: ean13() }).expect(401);
    await as.user.post(`/api/items/${i.id}/barcodes`).send({ code: ean13() }).expect(403);
    expect(await t.db('item_barcodes').where({ item_id: i.id })).toEqual([]);
  });

  it('201 the barcode with its kind guessed, stored and audited', async () => {
    const i = await item();
    const code = ean13();
    const res = await add(i.id, { code: ` ${code}\r\n`, note: 'Manufacturer' }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      code,
      kind: 'ean13',
      note: 'Manufacturer',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const row = await t.db('item_barcodes').where({ id: res.body.id }).first();
    expect(row).toMatchObject({
      item_id: i.id,
      code,
      lookup_key: `0${code}`,
      kind: 'ean13',
      created_by: as.ids.manager,
    });
    const audit = await t
      .db('audit_log')
      .where({ entity_type: 'item', entity_id: String(i.id), action: 'add_barcode' });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor_user_id: as.ids.manager,
      after: { id: res.body.id, code, kind: 'ean13', note: 'Manufacturer' },
    });
  });

  it.each([
    ['upca', () => upca()],
    ['gtin14', () => gtin14()],
    ['code128', () => `SHELF-${serial++}`],
    ['other', () => `Ölfilter ${serial++}`],
  ])('guesses %s', async (kind, code) => {
    const i = await item();
    expect((await add(i.id, { code: code() }).expect(201)).body.kind).toBe(kind);
  });

  it('takes a given kind: code128 for 13 digits whose check digit is not a GS1 one', async () => {
    const i = await item();
    const code = wrongCheck(ean13());
    expect((await add(i.id, { code, kind: 'code128' }).expect(201)).body).toMatchObject({ code, kind: 'code128' });
  });

  it('stores a scanned GS1 string as its GTIN-14', async () => {
    const i = await item();
    const gtin = `0${ean13()}`;
    const res = await add(i.id, { code: `]d2${GS}01${gtin}17261231${GS}10LOT1` }).expect(201);
    expect(res.body).toMatchObject({ code: gtin, kind: 'gtin14' });
  });

  it('400 for a wrong check digit, given or guessed kind, and nothing stored', async () => {
    const i = await item();
    const bad = wrongCheck(ean13());
    expect((await add(i.id, { code: bad }).expect(400)).body).toEqual({ message: `Invalid check digit in '${bad}'` });
    const badUpc = wrongCheck(upca());
    expect((await add(i.id, { code: badUpc, kind: 'upca' }).expect(400)).body).toEqual({
      message: `Invalid check digit in '${badUpc}'`,
    });
    expect((await add(i.id, { code: '00000000000001' }).expect(400)).body).toEqual({
      message: "Invalid check digit in '00000000000001'",
    });
    expect(await t.db('item_barcodes').where({ item_id: i.id })).toEqual([]);
  });

  it('400 for a bad body: no code, unknown kind, a kind of the wrong length, a separator', async () => {
    const i = await item();
    await add(i.id, {}).expect(400);
    await add(i.id, { code: '' }).expect(400);
    await add(i.id, { code: ean13(), kind: 'qr' }).expect(400);
    expect((await add(i.id, { code: '123', kind: 'ean13' }).expect(400)).body.message).toBe(
      "'123' is not a valid EAN-13: it must be 13 digits",
    );
    expect((await add(i.id, { code: 'A|B' }).expect(400)).body.message).toBe("Barcode 'A|B' must not contain '|'");
    expect((await add(i.id, { code: '\r\n' }).expect(400)).body.message).toBe('Barcode is required');
  });

  it('404 for an unknown item', async () => {
    expect((await add(999999, { code: ean13() }).expect(404)).body).toEqual({ message: 'Item not found' });
  });

  it("409 for another item's barcode, its UPC/EAN equivalent, any item's SKU in any case, or the item's own SKU", async () => {
    const owner = await item({ name: 'Acetone 1L', sku: 'ACE-1' });
    const other = await item();
    const upc = upca();
    await add(owner.id, { code: upc }).expect(201);
    const clash = (code: string) => ({ message: `Barcode '${code}' already belongs to ACE-1 Acetone 1L` });
    expect((await add(other.id, { code: upc }).expect(409)).body).toEqual(clash(upc));
    expect((await add(other.id, { code: `0${upc}` }).expect(409)).body).toEqual(clash(`0${upc}`));
    expect((await add(other.id, { code: `00${upc}` }).expect(409)).body).toEqual(clash(`00${upc}`));
    expect((await add(other.id, { code: 'ace-1' }).expect(409)).body).toEqual(clash('ace-1'));
    expect((await add(owner.id, { code: 'ACE-1' }).expect(409)).body).toEqual(clash('ACE-1'));
    // an item whose SKU is an EAN-13 owns its UPC-A form too
    const ean = `0${upca()}`;
    await item({ name: 'Boxed tips', sku: ean });
    expect((await add(other.id, { code: ean.slice(1) }).expect(409)).body).toEqual({
      message: `Barcode '${ean.slice(1)}' already belongs to ${ean} Boxed tips`,
    });
    expect(await t.db('item_barcodes').where({ item_id: other.id })).toEqual([]);
  });

  it('two concurrent adds of one code: one 201, one 409, one row', async () => {
    const [a, b] = [await item(), await item()];
    const code = ean13();
    const results = await Promise.all([add(a.id, { code }), add(b.id, { code: `0${code}` })]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const refused = results.find((r) => r.status === 409)!;
    expect(refused.body.message).toMatch(/^Barcode '0?\d{13}' already belongs to /);
    expect(await t.db('item_barcodes').where({ lookup_key: `0${code}` })).toHaveLength(1);
  });

  it('a barcode added while another item takes the same code as its SKU: one of them is refused', async () => {
    const a = await item();
    const code = `RACE-${serial++}`;
    const [barcode, created] = await Promise.all([
      add(a.id, { code }),
      as.manager
        .post('/api/items')
        .send({ name: 'Racer', sku: code.toLowerCase(), categoryId: category.id, price: '1' }),
    ]);
    expect([barcode.status, created.status].sort()).toEqual([201, 409]);
    const skus = await t.db('items').whereRaw('lower(sku) = lower(?)', [code]);
    const codes = await t.db('item_barcodes').where({ lookup_key: code.toLowerCase() });
    expect(skus.length + codes.length).toBe(1);
  });
});

describe("the SKU side: an item may not take another item's barcode as its SKU", () => {
  it('409 on create and update, naming the owner; the UPC/EAN equivalent counts', async () => {
    const owner = await item({ name: 'Ethanol 2.5L', sku: 'ETH-25' });
    const upc = upca();
    await add(owner.id, { code: upc }).expect(201);
    const create = await as.manager
      .post('/api/items')
      .send({ name: 'Copy', sku: `0${upc}`, categoryId: category.id, price: '1' })
      .expect(409);
    expect(create.body).toEqual({ message: `SKU '0${upc}' already belongs to ETH-25 Ethanol 2.5L as a barcode` });
    const other = await item({ sku: 'OTHER-1' });
    const update = await as.manager.put(`/api/items/${other.id}`).send({ sku: upc }).expect(409);
    expect(update.body).toEqual({ message: `SKU '${upc}' already belongs to ETH-25 Ethanol 2.5L as a barcode` });
    expect((await t.db('items').where({ id: other.id }).first()).sku).toBe('OTHER-1');
    await as.manager.put(`/api/items/${other.id}`).send({ sku: 'OTHER-1', name: 'Same SKU again' }).expect(200);
  });
});

describe('GET /api/items/{id}/barcodes and DELETE /api/items/{id}/barcodes/{barcodeId}', () => {
  it('lists for any signed-in user, oldest first; 401 signed out; 404 unknown item', async () => {
    const i = await item();
    const [first, second] = [ean13(), `BIN-${serial++}`];
    const a = (await add(i.id, { code: first }).expect(201)).body;
    const b = (await add(i.id, { code: second, kind: 'other', note: 'Bin label' }).expect(201)).body;
    const res = await as.user.get(`/api/items/${i.id}/barcodes`).expect(200);
    expect(res.body).toEqual([a, b]);
    expect(res.body[1]).toMatchObject({ code: second, kind: 'other', note: 'Bin label' });
    await t.request.get(`/api/items/${i.id}/barcodes`).expect(401);
    expect((await as.user.get('/api/items/999999/barcodes').expect(404)).body).toEqual({ message: 'Item not found' });
    expect((await as.user.get(`/api/items/${i.id}`).expect(200)).body.barcodes).toEqual([first, second]);
  });

  it("204 removes (audited); 404 for another item's barcode or an unknown one; 403 for a user", async () => {
    const [i, other] = [await item(), await item()];
    const code = ean13();
    const barcode = (await add(i.id, { code }).expect(201)).body;
    await as.user.delete(`/api/items/${i.id}/barcodes/${barcode.id}`).expect(403);
    expect((await as.manager.delete(`/api/items/${other.id}/barcodes/${barcode.id}`).expect(404)).body).toEqual({
      message: 'Barcode not found',
    });
    await as.manager.delete(`/api/items/${i.id}/barcodes/${barcode.id}`).expect(204);
    expect(await t.db('item_barcodes').where({ id: barcode.id })).toEqual([]);
    await as.manager.delete(`/api/items/${i.id}/barcodes/${barcode.id}`).expect(404);
    const [audit] = await t
      .db('audit_log')
      .where({ entity_type: 'item', entity_id: String(i.id), action: 'remove_barcode' });
    expect(audit.before).toEqual({ id: barcode.id, code, kind: 'ean13', note: null });
    // the code is free again
    await add(other.id, { code }).expect(201);
  });

  it('a barcode goes with its item when the item is deleted (safe or bulk), and does not block a safe delete', async () => {
    const i = await item();
    await add(i.id, { code: ean13() }).expect(201);
    expect((await as.admin.get(`/api/items/${i.id}/deletion-check`).expect(200)).body).toEqual({
      canDelete: true,
      reasons: [],
    });
    await as.admin.delete(`/api/items/${i.id}/safe`).expect(204);
    expect(await t.db('item_barcodes').where({ item_id: i.id })).toEqual([]);
    const [a, b] = [await item(), await item()];
    const code = ean13();
    await add(a.id, { code }).expect(201);
    await add(b.id, { code: ean13() }).expect(201);
    await as.manager
      .post('/api/items/bulk/delete')
      .send({ itemIds: [a.id, b.id] })
      .expect(200);
    expect(await t.db('item_barcodes').whereIn('item_id', [a.id, b.id])).toEqual([]);
    // the code is free for another item
    await add((await item()).id, { code }).expect(201);
  });
});

describe('GET /api/items/lookup', () => {
  it('finds by SKU in any case, by barcode, by UPC-A vs EAN-13 and GS1 strings, answering GET /items/{id}', async () => {
    const i = await item({ name: 'Pipette tips', sku: 'TIP-200' });
    const upc = upca();
    const gtin = gtin14();
    await add(i.id, { code: upc }).expect(201);
    await add(i.id, { code: gtin }).expect(201);
    const shown = (await as.user.get(`/api/items/${i.id}`).expect(200)).body;
    expect(shown.barcodes).toEqual([upc, gtin]);
    for (const code of [
      'TIP-200',
      'tip-200',
      ' TIP-200\r\n',
      upc,
      `0${upc}`,
      `00${upc}`,
      `]E00${upc}`,
      gtin,
      `(01)${gtin}(17)261231(10)LOT42`,
      `01${gtin}17261231${GS}10LOT42`,
      `01${gtin}10LOT42${GS}17261231`,
      `]d2${GS}01${gtin}${GS}21SERIAL`,
      `]C1${GS}10LOT42${GS}01${gtin}`,
      `https://id.gs1.org/01/${gtin}/10/LOT42`,
    ]) {
      const res = await as.user.get('/api/items/lookup').query({ code });
      // a GS1 element string's lot comes as scanned (issue 42); the Digital Link's is not read
      const lot = code.includes('LOT42') && !code.startsWith('https:');
      const expiresOn = code.includes('261231') ? '2026-12-31' : null;
      const scanned = lot ? { lotNumber: 'LOT42', expiresOn, lotId: null } : null;
      expect([code, res.status, res.body]).toEqual([code, 200, { ...shown, scanned }]);
    }
  });

  it('finds an item whose SKU is its EAN-13 by the UPC-A form and by a GS1 string', async () => {
    const ean = `0${upca()}`;
    const i = await item({ sku: ean });
    for (const code of [ean, ean.slice(1), `(01)0${ean}`])
      expect((await as.user.get('/api/items/lookup').query({ code }).expect(200)).body.id).toBe(i.id);
    expect(await itemIdForCode(t.db, `01${`0${ean}`}`)).toBe(i.id);
  });

  it('the SKU written exactly as typed wins over one differing in case', async () => {
    const lower = await item({ sku: 'case-sku' });
    const upper = await item({ sku: 'CASE-SKU' });
    expect((await as.user.get('/api/items/lookup').query({ code: 'CASE-SKU' }).expect(200)).body.id).toBe(upper.id);
    expect((await as.user.get('/api/items/lookup').query({ code: 'case-sku' }).expect(200)).body.id).toBe(lower.id);
    expect((await as.user.get('/api/items/lookup').query({ code: 'Case-Sku' }).expect(200)).body.id).toBe(lower.id);
  });

  it("404 naming the code trimmed of the scanner's characters; a wrong check digit finds nothing", async () => {
    expect((await as.user.get('/api/items/lookup').query({ code: 'NO-SUCH\r\n' }).expect(404)).body).toEqual({
      message: "No item with barcode 'NO-SUCH'",
    });
    const i = await item();
    const upc = upca();
    await add(i.id, { code: upc }).expect(201);
    await as.user
      .get('/api/items/lookup')
      .query({ code: wrongCheck(upc) })
      .expect(404);
    await as.user
      .get('/api/items/lookup')
      .query({ code: `(01)00${wrongCheck(upc)}` })
      .expect(404);
  });

  it('400 without a code; 401 signed out', async () => {
    await as.user.get('/api/items/lookup').expect(400);
    await as.user.get('/api/items/lookup').query({ code: '' }).expect(400);
    await t.request.get('/api/items/lookup').query({ code: 'X' }).expect(401);
  });
});

describe('import and export carry barcodes', () => {
  const row = (overrides: Record<string, unknown>) => ({
    name: 'Imported',
    categoryName: 'Scanned things',
    price: '1.00',
    currentStock: '2',
    ...overrides,
  });

  it('imports an array or a |-joined text; refuses a bad digit, a clash either way, or a repeat in the import', async () => {
    const owner = await item({ name: 'Owner', sku: 'IMP-OWNER' });
    const ownerCode = ean13();
    const ownerCode2 = ean13();
    await add(owner.id, { code: ownerCode }).expect(201);
    await add(owner.id, { code: ownerCode2 }).expect(201);
    const [a1, a2, b1, dup] = [ean13(), upca(), ean13(), ean13()];
    const bad = wrongCheck(ean13());
    const res = await as.manager
      .post('/api/items/bulk-import')
      .send({
        items: [
          row({ sku: 'IMP-A', barcodes: [a1, a2] }),
          row({ sku: 'IMP-B', barcodes: ` ${b1} | BIN-B ` }),
          row({ sku: 'IMP-C', barcodes: [bad] }),
          row({ sku: 'IMP-D', barcodes: [`0${ownerCode}`] }),
          row({ sku: 'IMP-E', barcodes: ['imp-owner'] }),
          row({ sku: ownerCode2 }),
          row({ sku: 'IMP-F', barcodes: [`0${a2}`] }),
          row({ sku: 'IMP-G', barcodes: [dup, dup] }),
          row({ sku: 'IMP-H', barcodes: 7 }),
          row({ sku: 'IMP-I', barcodes: [] }),
        ],
      })
      .expect(200);
    expect(res.body).toEqual({
      successful: 3,
      failed: 7,
      errors: [
        `Item 3: Invalid check digit in '${bad}'`,
        `Item 4: Barcode '0${ownerCode}' already belongs to IMP-OWNER Owner`,
        "Item 5: Barcode 'imp-owner' already belongs to IMP-OWNER Owner",
        `Item 6: SKU '${ownerCode2}' already belongs to IMP-OWNER Owner as a barcode`,
        `Item 7: barcode '0${a2}' already appears at item 1 of this import`,
        `Item 8: barcode '${dup}' is given twice`,
        "Item 9: barcodes must be an array of codes or a text of codes joined by '|'",
      ],
    });
    const a = await t.db('items').where({ sku: 'IMP-A' }).first();
    const b = await t.db('items').where({ sku: 'IMP-B' }).first();
    expect((await as.user.get(`/api/items/${a.id}/barcodes`).expect(200)).body).toEqual([
      expect.objectContaining({ code: a1, kind: 'ean13' }),
      expect.objectContaining({ code: a2, kind: 'upca' }),
    ]);
    expect((await as.user.get(`/api/items/${b.id}`).expect(200)).body.barcodes).toEqual([b1, 'BIN-B']);
    expect(
      (
        await as.user
          .get('/api/items/lookup')
          .query({ code: `0${a2}` })
          .expect(200)
      ).body.id,
    ).toBe(a.id);
  });

  it('exports a Barcodes column, codes joined by " | ", in CSV and XLSX', async () => {
    const i = await item({ name: 'Exported', sku: 'EXP-BC' });
    const plain = await item({ name: 'Exported plain', sku: 'EXP-PLAIN' });
    const [c1, c2] = [ean13(), '-DASH-1'];
    await add(i.id, { code: c1 }).expect(201);
    await add(i.id, { code: c2 }).expect(201);
    const csv = await as.user
      .post('/api/items/bulk/export')
      .send({ itemIds: [i.id, plain.id], format: 'csv' })
      .expect(200);
    const rows = parseCsv(csv.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.SKU, r.Barcodes])).toEqual([
      ['EXP-BC', `${c1} | -DASH-1`],
      ['EXP-PLAIN', ''],
    ]);
    const xlsx = await as.user
      .post('/api/items/bulk/export')
      .send({ itemIds: [i.id] })
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    const { default: ExcelJS } = await import('exceljs');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.body as never);
    const sheet = workbook.getWorksheet('Items')!;
    expect(sheet.getRow(1).getCell(13).value).toBe('Barcodes');
    expect(sheet.getRow(2).getCell(13).value).toBe(`${c1} | -DASH-1`);
  });
});
