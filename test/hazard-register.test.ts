import { parse } from 'csv-parse/sync';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { day } from './helpers/lots-factories';
import { sdsPdf, yearsAgo } from './helpers/sds-factories';

// Issue 43: the hazard register, GET /api/reports/hazards (JSON and CSV), for managers: every
// hazardous item holding stock with its hazards, lots and their expiry, and its current SDS.

let t: TestApp;
let manager: supertest.Agent;
let user: supertest.Agent;
const ids = {} as Record<'acetone' | 'naoh' | 'empty' | 'plain', number>;

const hazardOf = (over: Record<string, unknown>) => ({
  signalWord: null,
  pictograms: [],
  hStatements: [],
  pStatements: [],
  casNumber: null,
  unNumber: null,
  storage: null,
  ...over,
});

async function createItem(body: Record<string, unknown>, categoryId: number): Promise<number> {
  const res = await manager
    .post('/api/items')
    .send({ price: '5.00', categoryId, ...body })
    .expect(201);
  return res.body.id;
}

async function uploadSds(itemId: number, revisionDate: string) {
  await manager
    .post(`/api/items/${itemId}/sds`)
    .field('revisionDate', revisionDate)
    .attach('file', await sdsPdf(`Sheet ${itemId} ${revisionDate}`), {
      filename: 'sheet.pdf',
      contentType: 'application/pdf',
    })
    .expect(201);
}

beforeAll(async () => {
  t = await testApp();
  const [m, u] = await Promise.all([buildUser(t.db, { role: 'manager' }), buildUser(t.db)]);
  [manager, user] = await Promise.all([t.loginAs(m), t.loginAs(u)]);
  const category = await buildCategory(t.db);
  ids.acetone = await createItem(
    {
      name: 'Acetone, 2.5 l',
      sku: 'HREG-ACE',
      tracking: 'lot',
      hazard: hazardOf({
        signalWord: 'Danger',
        pictograms: ['GHS02', 'GHS07'],
        hStatements: ['H225', 'H319', 'H336'],
        pStatements: ['P210'],
        casNumber: '67-64-1',
        unNumber: '1090',
        storage: 'Flammables cabinet, room 2.14',
      }),
    },
    category.id,
  );
  for (const [lotNumber, quantity, expiresOn] of [
    ['A-LATE', 2, day(400)],
    ['A-SOON', 3, day(30)],
    ['A-GONE', 1, day(10)],
  ] as const) {
    await manager
      .post(`/api/items/${ids.acetone}/stock`)
      .send({ type: 'in', quantity, lotNumber, expiresOn })
      .expect(200);
  }
  // the lot A-GONE is used up: it holds no stock, so the register leaves it out
  await manager
    .post(`/api/items/${ids.acetone}/stock`)
    .send({ type: 'out', quantity: 1, lotNumber: 'A-GONE' })
    .expect(200);
  await uploadSds(ids.acetone, yearsAgo(3));
  await uploadSds(ids.acetone, yearsAgo(1));

  ids.naoh = await createItem(
    {
      name: 'Sodium hydroxide pellets',
      sku: 'HREG-NAOH',
      currentStock: '4',
      hazard: hazardOf({ signalWord: 'Danger', pictograms: ['GHS05'], hStatements: ['H314'], casNumber: '1310-73-2' }),
    },
    category.id,
  );
  await uploadSds(ids.naoh, yearsAgo(6));

  ids.empty = await createItem(
    {
      name: 'Hydrogen peroxide 30%',
      sku: 'HREG-EMPTY',
      currentStock: '0',
      hazard: hazardOf({ hStatements: ['H302'] }),
    },
    category.id,
  );
  ids.plain = await createItem({ name: 'Beaker 250 ml', sku: 'HREG-PLAIN', currentStock: '12' }, category.id);
});
afterAll(() => t?.close());

type RegisterItem = { sku: string } & Record<string, unknown>;
const ours = (items: RegisterItem[]) => items.filter((item) => item.sku.startsWith('HREG-'));

describe('GET /api/reports/hazards', () => {
  it('JSON: the hazardous items holding stock, with statements, CAS, stock, lots holding stock by expiry and the current SDS', async () => {
    const res = await manager.get('/api/reports/hazards').expect(200);
    expect(res.body).toMatchObject({ generatedAt: expect.any(String), sdsReviewYears: 5 });
    const items = ours(res.body.items);
    // no stock (HREG-EMPTY) and not hazardous (HREG-PLAIN): left out
    expect(items.map((item) => item.sku)).toEqual(['HREG-ACE', 'HREG-NAOH']);
    expect(items[0]).toEqual({
      id: ids.acetone,
      sku: 'HREG-ACE',
      name: 'Acetone, 2.5 l',
      isActive: true,
      signalWord: 'Danger',
      pictograms: [
        { code: 'GHS02', name: expect.stringMatching(/flammable/i) },
        { code: 'GHS07', name: expect.any(String) },
      ],
      hStatements: [
        { code: 'H225', text: 'Highly flammable liquid and vapour' },
        { code: 'H319', text: 'Causes serious eye irritation' },
        { code: 'H336', text: 'May cause drowsiness or dizziness' },
      ],
      casNumber: '67-64-1',
      unNumber: '1090',
      storage: 'Flammables cabinet, room 2.14',
      stock: '5.00',
      lots: [
        { lotNumber: 'A-SOON', quantity: '3.00', expiresOn: day(30), quarantined: false },
        { lotNumber: 'A-LATE', quantity: '2.00', expiresOn: day(400), quarantined: false },
      ],
      sds: { state: 'current', revisionDate: yearsAgo(1), language: 'en' },
    });
    expect(items[1]).toMatchObject({
      sku: 'HREG-NAOH',
      stock: '4.00',
      lots: [],
      hStatements: [{ code: 'H314', text: 'Causes severe skin burns and eye damage' }],
      sds: { state: 'old', revisionDate: yearsAgo(6), language: 'en' },
    });
  });

  it('?sds=due keeps the items whose sheet is old or missing; ?sds=current the others', async () => {
    await manager.put(`/api/items/${ids.empty}`).send({ currentStock: '1' }).expect(200);
    const due = await manager.get('/api/reports/hazards?sds=due').expect(200);
    expect(ours(due.body.items).map((i) => [i.sku, (i.sds as { state: string }).state])).toEqual([
      ['HREG-EMPTY', 'missing'],
      ['HREG-NAOH', 'old'],
    ]);
    const current = await manager.get('/api/reports/hazards?sds=current').expect(200);
    expect(ours(current.body.items).map((i) => i.sku)).toEqual(['HREG-ACE']);
    await manager.get('/api/reports/hazards?sds=soon').expect(400);
    await manager.put(`/api/items/${ids.empty}`).send({ currentStock: '0' }).expect(200);
  });

  it('CSV: the same rows with a header, statements with their texts, lots with their expiry', async () => {
    const res = await manager.get('/api/reports/hazards?format=csv').buffer(true).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="hazard-register-\d{8}\.csv"$/);
    const rows: string[][] = parse(res.text, { bom: true });
    expect(rows[0]).toEqual([
      'SKU',
      'Item',
      'Signal Word',
      'Pictograms',
      'H Statements',
      'CAS Number',
      'UN Number',
      'Stock',
      'Lots',
      'SDS Revision Date',
      'SDS Status',
      'Storage',
    ]);
    const body = rows.slice(1).filter((row) => row[0].startsWith('HREG-'));
    expect(body.map((row) => row[0])).toEqual(['HREG-ACE', 'HREG-NAOH']);
    const [acetone, naoh] = body;
    expect(acetone.slice(0, 3)).toEqual(['HREG-ACE', 'Acetone, 2.5 l', 'Danger']);
    expect(acetone[3]).toMatch(/^GHS02 .+ \| GHS07 .+$/);
    expect(acetone[4]).toBe(
      'H225: Highly flammable liquid and vapour | H319: Causes serious eye irritation | H336: May cause drowsiness or dizziness',
    );
    expect(acetone.slice(5)).toEqual([
      '67-64-1',
      '1090',
      '5.00',
      `A-SOON (3.00, expires ${day(30)}) | A-LATE (2.00, expires ${day(400)})`,
      yearsAgo(1),
      'current',
      'Flammables cabinet, room 2.14',
    ]);
    expect(naoh.slice(5)).toEqual(['1310-73-2', '', '4.00', '', yearsAgo(6), 'old', '']);
  });

  it('403 for a user, 401 without a session', async () => {
    const refused = await user.get('/api/reports/hazards').expect(403);
    expect(refused.body.message).toEqual(expect.any(String));
    await user.get('/api/reports/hazards?format=csv').expect(403);
    const anonymous = (await import('supertest')).default(t.app);
    await anonymous.get('/api/reports/hazards').expect(401);
  });
});
