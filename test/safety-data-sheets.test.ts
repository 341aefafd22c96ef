import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDate } from '../src/lib/format';
import { appWithAdmin, NO_FITTING_CLIENT } from './backup-helpers';
import { testApp, type TestApp } from './helpers/app';
import { binaryBody } from './helpers/binary-body';
import { buildItem, buildUser } from './helpers/factories';
import { PNG_BYTES, buildSupplier } from './helpers/purchasing-factories';
import { sdsPdf, setItemHazards, yearsAgo } from './helpers/sds-factories';

const run = promisify(execFile);

let t: TestApp;
let manager: supertest.Agent;
let user: supertest.Agent;
let requester: supertest.Agent;
let admin: supertest.Agent;
let managerId: string;

beforeAll(async () => {
  t = await testApp();
  const [m, u, r, a] = await Promise.all([
    buildUser(t.db, { role: 'manager' }),
    buildUser(t.db, { role: 'user' }),
    buildUser(t.db, { role: 'requester' }),
    buildUser(t.db, { role: 'admin' }),
  ]);
  managerId = m.id;
  [manager, user, requester, admin] = await Promise.all([t.loginAs(m), t.loginAs(u), t.loginAs(r), t.loginAs(a)]);
});
afterAll(() => t.close());

type Fields = { revisionDate?: string; language?: string; supplierId?: string };

/** POST /api/items/{id}/sds as `agent` with the PDF (or any bytes) in `file` and the fields given. */
function upload(agent: supertest.Agent, itemId: number, file: Buffer | null, fields: Fields, filename = 'sheet.pdf') {
  let req = agent.post(`/api/items/${itemId}/sds`);
  for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
  if (file) req = req.attach('file', file, { filename, contentType: 'application/pdf' });
  else req = req.field('nothing', 'here');
  return req;
}

const storedCount = async (itemId: number) =>
  Number((await t.db('safety_data_sheets').where({ item_id: itemId }).count({ n: '*' }))[0].n);

describe('POST /api/items/{id}/sds', () => {
  it('201 with the stored version; language defaults to en; the bytes kept are the upload', async () => {
    const item = await buildItem(t.db);
    const supplier = await buildSupplier(t.db);
    const pdf = await sdsPdf('Acetone, Sigma-Aldrich, version 6.2');
    const res = await upload(manager, item.id, pdf, { revisionDate: '2024-03-01', supplierId: supplier.id }).expect(
      201,
    );
    expect(res.body).toEqual({
      id: expect.any(Number),
      itemId: item.id,
      revisionDate: '2024-03-01',
      language: 'en',
      supplierId: supplier.id,
      sizeBytes: pdf.length,
      uploadedBy: managerId,
      uploadedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const row = await t.db('safety_data_sheets').where({ id: res.body.id }).first();
    expect(Buffer.compare(row.data, pdf)).toBe(0);

    const german = await upload(manager, item.id, pdf, { revisionDate: '2024-03-01', language: 'DE-de' }).expect(201);
    expect([german.body.language, german.body.supplierId]).toEqual(['de-de', null]);
  });

  it('400 for a PNG named .pdf, a PDF header on garbage, a truncated PDF, no file; nothing stored', async () => {
    const item = await buildItem(t.db);
    const png = await upload(manager, item.id, PNG_BYTES, { revisionDate: '2024-03-01' }).expect(400);
    expect(png.body).toEqual({ message: 'The uploaded file is not a PDF' });
    const garbage = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(3000, 0x41), Buffer.from('\n%%EOF\n')]);
    const unreadable = await upload(manager, item.id, garbage, { revisionDate: '2024-03-01' }).expect(400);
    expect(unreadable.body).toEqual({ message: 'The uploaded PDF could not be read' });
    const pdf = await sdsPdf('cut short');
    const cut = await upload(manager, item.id, pdf.subarray(0, pdf.length - 200), { revisionDate: '2024-03-01' });
    expect([cut.status, cut.body]).toEqual([400, { message: 'The uploaded PDF is incomplete or damaged' }]);
    const none = await upload(manager, item.id, null, { revisionDate: '2024-03-01' }).expect(400);
    expect(none.body).toEqual({ message: "No file uploaded: send the PDF in the multipart field 'file'" });
    expect(await storedCount(item.id)).toBe(0);
  });

  it('400 naming the field: a bad, missing or future revision date, a bad language, an unknown supplier', async () => {
    const item = await buildItem(t.db);
    const pdf = await sdsPdf('fields');
    const cases: [Fields, string, string][] = [
      [{ revisionDate: '2024-02-30' }, 'revisionDate', 'must be a date YYYY-MM-DD'],
      [{ revisionDate: '01/03/2024' }, 'revisionDate', 'must be a date YYYY-MM-DD'],
      [{}, 'revisionDate', 'is required (YYYY-MM-DD)'],
      [{ revisionDate: yearsAgo(-1) }, 'revisionDate', 'must not be after today'],
      [{ revisionDate: '2024-03-01', language: 'english!' }, 'language', 'must be a language code such as en or en-GB'],
      [
        { revisionDate: '2024-03-01', supplierId: 'no-such-supplier' },
        'supplierId',
        "supplier 'no-such-supplier' does not exist",
      ],
    ];
    for (const [fields, field, message] of cases) {
      const res = await upload(manager, item.id, pdf, fields);
      expect([res.status, res.body], JSON.stringify(fields)).toEqual([
        400,
        { message: 'Validation failed', errors: [{ field, message }] },
      ]);
    }
    expect(await storedCount(item.id)).toBe(0);
  });

  it('413 for a file over 20 MB', async () => {
    const item = await buildItem(t.db);
    const big = Buffer.alloc(20 * 1024 * 1024 + 1, 0x20);
    big.write('%PDF-1.4\n');
    const res = await upload(manager, item.id, big, { revisionDate: '2024-03-01' });
    expect([res.status, res.body]).toEqual([413, { message: 'File too large' }]);
    expect(await storedCount(item.id)).toBe(0);
  });

  it('404 for an unknown item; 403 for a user and a requester; 401 signed out', async () => {
    const pdf = await sdsPdf('access');
    const missing = await upload(manager, 999_999, pdf, { revisionDate: '2024-03-01' }).expect(404);
    expect(missing.body).toEqual({ message: 'Item not found' });
    const item = await buildItem(t.db);
    await upload(user, item.id, pdf, { revisionDate: '2024-03-01' }).expect(403);
    await upload(requester, item.id, pdf, { revisionDate: '2024-03-01' }).expect(403);
    await t.request
      .post(`/api/items/${item.id}/sds`)
      .field('revisionDate', '2024-03-01')
      .attach('file', pdf, 'a.pdf')
      .expect(401);
    expect(await storedCount(item.id)).toBe(0);
  });
});

describe('versions and the current sheet', () => {
  let item: { id: number; sku: string };
  const pdfs: Record<string, Buffer> = {};
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    item = await buildItem(t.db, { sku: 'ACE/500 ml' });
    // uploaded out of order; two revisions of the same date, the later upload counting as newer
    for (const [name, revisionDate] of [
      ['2021', '2021-05-01'],
      ['2019', '2019-11-20'],
      ['2023a', '2023-01-10'],
      ['2023b', '2023-01-10'],
    ]) {
      pdfs[name] = await sdsPdf(`Acetone revision ${name}`);
      ids[name] = (await upload(manager, item.id, pdfs[name], { revisionDate }).expect(201)).body.id;
    }
  });

  const listed = (body: { id: number; revisionDate: string; current: boolean }[]) =>
    body.map((v) => [v.id, v.revisionDate, v.current]);

  it('GET lists every version newest first (revision date, then upload), the first current; requesters may', async () => {
    const res = await requester.get(`/api/items/${item.id}/sds`).expect(200);
    expect(listed(res.body)).toEqual([
      [ids['2023b'], '2023-01-10', true],
      [ids['2023a'], '2023-01-10', false],
      [ids['2021'], '2021-05-01', false],
      [ids['2019'], '2019-11-20', false],
    ]);
    expect(Object.keys(res.body[0]).sort()).toEqual(
      [
        'current',
        'id',
        'itemId',
        'language',
        'revisionDate',
        'sizeBytes',
        'supplierId',
        'uploadedAt',
        'uploadedBy',
      ].sort(),
    );
  });

  it('?on=YYYY-MM-DD: the versions revised by that date, the one current then first', async () => {
    const on = async (date: string) =>
      listed((await user.get(`/api/items/${item.id}/sds?on=${date}`).expect(200)).body);
    expect(await on('2022-12-31')).toEqual([
      [ids['2021'], '2021-05-01', true],
      [ids['2019'], '2019-11-20', false],
    ]);
    expect(await on('2021-05-01')).toEqual([
      [ids['2021'], '2021-05-01', true],
      [ids['2019'], '2019-11-20', false],
    ]);
    expect((await on('2023-01-10'))[0]).toEqual([ids['2023b'], '2023-01-10', true]);
    expect(await on('2019-11-19')).toEqual([]);
    const bad = await user.get(`/api/items/${item.id}/sds?on=2022-13-01`).expect(400);
    expect(bad.body.errors).toEqual([{ field: 'on', message: 'must be a date YYYY-MM-DD' }]);
  });

  it('GET current: a requester gets the latest PDF, with a safe file name', async () => {
    const res = await requester
      .get(`/api/items/${item.id}/sds/current`)
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe('inline; filename="ACE_500_ml-SDS-2023-01-10.pdf"');
    expect(Buffer.compare(res.body, pdfs['2023b'])).toBe(0);
  });

  it('GET a version by id: its PDF to anyone signed in; 404 for another item’s version', async () => {
    const res = await requester
      .get(`/api/items/${item.id}/sds/${ids['2019']}`)
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(res.headers['content-disposition']).toBe('inline; filename="ACE_500_ml-SDS-2019-11-20.pdf"');
    expect(Buffer.compare(res.body, pdfs['2019'])).toBe(0);
    const other = await buildItem(t.db);
    const wrong = await user.get(`/api/items/${other.id}/sds/${ids['2019']}`).expect(404);
    expect(wrong.body).toEqual({ message: 'Safety data sheet not found' });
    await t.request.get(`/api/items/${item.id}/sds/${ids['2019']}`).expect(401);
  });

  it('404 {message: "No safety data sheet for <SKU>"} when there is none; 404 for an unknown item; 401 signed out', async () => {
    const bare = await buildItem(t.db, { sku: 'BARE-1' });
    const res = await requester.get(`/api/items/${bare.id}/sds/current`).expect(404);
    expect(res.body).toEqual({ message: 'No safety data sheet for BARE-1' });
    expect((await requester.get(`/api/items/${bare.id}/sds`).expect(200)).body).toEqual([]);
    expect((await user.get('/api/items/999999/sds/current').expect(404)).body).toEqual({ message: 'Item not found' });
    expect((await user.get('/api/items/999999/sds').expect(404)).body).toEqual({ message: 'Item not found' });
    await t.request.get(`/api/items/${item.id}/sds/current`).expect(401);
  });

  it('the page /items/{id}/sds (a label’s QR code): sign in first, then the current PDF; the 404 page when none', async () => {
    const out = await t.request.get(`/items/${item.id}/sds`).expect(302);
    expect(out.headers.location).toBe(`/login?next=${encodeURIComponent(`/items/${item.id}/sds`)}`);
    const res = await requester
      .get(`/items/${item.id}/sds`)
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(Buffer.compare(res.body, pdfs['2023b'])).toBe(0);
    const bare = await buildItem(t.db, { sku: 'BARE-2' });
    const none = await requester.get(`/items/${bare.id}/sds`).expect(404);
    expect(none.headers['content-type']).toMatch(/^text\/html/);
    expect(none.text).toContain('No safety data sheet for BARE-2');
  });

  it('an item with safety data sheets is not deleted: they are kept for the audit', async () => {
    const res = await admin.get(`/api/items/${item.id}/deletion-check`).expect(200);
    expect(res.body.canDelete).toBe(false);
    expect(res.body.reasons).toContain('safety data sheets: 4 record(s) reference it (item_id)');
    await admin.delete(`/api/items/${item.id}/safe`).expect(409);
    expect(await storedCount(item.id)).toBe(4);
  });
});

describe('system alert sds_missing_or_old', () => {
  it('counts active hazardous items without a sheet or whose current one is older than safety.sdsReviewYears', async () => {
    const { app, admin: appAdmin } = await appWithAdmin();
    const appManager = await app.loginAs(await buildUser(app.db, { role: 'manager' }));
    const make = async (
      sku: string,
      hazard: Parameters<typeof setItemHazards>[2] | null,
      revisions: string[] = [],
      active = true,
    ) => {
      const item = await buildItem(app.db, { sku, isActive: active });
      if (hazard) await setItemHazards(app.db, item.id, hazard);
      for (const revisionDate of revisions)
        await upload(appManager, item.id, await sdsPdf(sku), { revisionDate }).expect(201);
      return item;
    };
    const alertOf = async () =>
      ((await appAdmin.get('/api/system/alerts').expect(200)).body.alerts as { type: string; message: string }[]).find(
        (a) => a.type === 'sds_missing_or_old',
      );

    expect(await alertOf()).toBeUndefined();
    await make('HZ-NONE', { pictograms: ['GHS02'] });
    await make('HZ-OLD', { hStatements: ['H225'] }, [yearsAgo(5, 1)]);
    // an old sheet replaced by a current one is not counted
    await make('HZ-RENEWED', { pictograms: ['GHS07'], hStatements: ['H319'] }, [yearsAgo(9), yearsAgo(1)]);
    await make('HZ-5Y', { pictograms: ['GHS05'] }, [yearsAgo(5)]);
    await make('HZ-3Y', { hStatements: ['H314'] }, [yearsAgo(3)]);
    // not hazardous, or no longer stocked: not counted
    await make('SAFE-NONE', null);
    await make('HZ-INACTIVE', { pictograms: ['GHS06'] }, [], false);

    expect(await alertOf()).toEqual({
      type: 'sds_missing_or_old',
      level: 'warning',
      message: '2 hazardous items have no safety data sheet or one older than 5 years',
    });
    const page = await appManager.get('/reports/sds').expect(200);
    const skus = [...page.text.matchAll(/<td class="nowrap">([^<]+)<\/td>/g)].map((m) => m[1]);
    expect(skus).toEqual(['HZ-NONE', 'HZ-OLD']);
    expect(page.text).toContain(`Revised ${formatDate(yearsAgo(5, 1))}`);
    expect(page.text).toMatch(/<td>None<\/td>/);

    await appAdmin
      .put('/api/settings/safety.sdsReviewYears')
      .send({ value: { years: 2 } })
      .expect(200);
    expect((await alertOf())?.message).toBe('4 hazardous items have no safety data sheet or one older than 2 years');
    await appAdmin
      .put('/api/settings/safety.sdsReviewYears')
      .send({ value: { years: 10 } })
      .expect(200);
    expect((await alertOf())?.message).toBe('1 hazardous item has no safety data sheet or one older than 10 years');
    const refused = await appAdmin
      .put('/api/settings/safety.sdsReviewYears')
      .send({ value: { years: 0 } })
      .expect(400);
    expect(refused.body.errors[0].field).toBe('value.years');

    // a sheet for the item without one clears the alert
    const none = await app.db('items').where({ sku: 'HZ-NONE' }).first('id');
    await upload(appManager, none.id, await sdsPdf('HZ-NONE'), { revisionDate: yearsAgo(0) }).expect(201);
    expect(await alertOf()).toBeUndefined();
    expect((await appManager.get('/reports/sds').expect(200)).text).toContain(
      'Every hazardous item has a current safety data sheet.',
    );
  });
});

describe.skipIf(NO_FITTING_CLIENT)('backups', () => {
  it('a backup holds the sheets’ PDFs and a restore brings them back exactly', async () => {
    const { app, admin: appAdmin } = await appWithAdmin();
    const appManager = await app.loginAs(await buildUser(app.db, { role: 'manager' }));
    const item = await buildItem(app.db, { sku: 'BK-1' });
    const kept = await sdsPdf('kept across a restore');
    await upload(appManager, item.id, kept, { revisionDate: '2022-02-02' }).expect(201);
    const { filename } = (await appAdmin.post('/api/backups').expect(201)).body;
    const toc = (await run('pg_restore', ['--list', path.join(app.dataDir, 'backups', filename)])).stdout;
    expect(toc).toMatch(/TABLE DATA public safety_data_sheets /);

    await upload(appManager, item.id, await sdsPdf('after the backup'), { revisionDate: '2024-04-04' }).expect(201);
    await app
      .db('safety_data_sheets')
      .where({ revision_date: '2022-02-02' })
      .update({ data: Buffer.from('%PDF-x') });
    await appAdmin.post(`/api/backups/${filename}/restore`).expect(200);

    const reader = await app.loginAs(await buildUser(app.db, { role: 'requester' }));
    expect(
      (await reader.get(`/api/items/${item.id}/sds`).expect(200)).body.map(
        (v: { revisionDate: string }) => v.revisionDate,
      ),
    ).toEqual(['2022-02-02']);
    const res = await reader
      .get(`/api/items/${item.id}/sds/current`)
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(Buffer.compare(res.body, kept)).toBe(0);
  });
});
