import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser } from './helpers/factories';
import { agentsByRole, type Agents } from './helpers/inventory-factories';

/*
 * Issue 43, hazard data on items: the item's `hazard` on create, update, read, import and export;
 * each rule's 400 naming its field; the statement texts at GET /api/hazards/statements; the
 * pictograms' SVGs served by the stores.
 */

let t: TestApp;
let as: Agents;
let categoryId: number;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  categoryId = (await buildCategory(t.db, { name: 'Flammables' })).id;
});
afterAll(() => t.close());

let counter = 0;
const newItem = (overrides: Record<string, unknown> = {}) => ({
  name: `Reagent ${++counter}`,
  sku: `HZ-${counter}`,
  categoryId,
  price: '4.20',
  ...overrides,
});

const ethanol = {
  signalWord: 'Danger',
  pictograms: ['GHS02', 'GHS07'],
  hStatements: ['H225', 'H319'],
  pStatements: ['P210', 'P233', 'P303+P361+P353', 'P305+P351+P338'],
  casNumber: '64-17-5',
  unNumber: '1170',
  storage: 'Flammables cabinet, away from oxidisers',
};

describe('POST /api/items with hazard', () => {
  it('201 stores the hazard and GET /api/items/{id} answers it; codes are read in any case', async () => {
    const res = await as.manager
      .post('/api/items')
      .send(
        newItem({
          hazard: {
            ...ethanol,
            pictograms: ['ghs02', 'GHS07'],
            pStatements: ['p210', 'P233', 'P303 + P361 + P353', 'P305+P351+P338'],
          },
        }),
      )
      .expect(201);
    expect(res.body.hazard).toEqual(ethanol);
    const read = await as.user.get(`/api/items/${res.body.id}`).expect(200);
    expect(read.body.hazard).toEqual(ethanol);
    const row = await t.db('items').where({ id: res.body.id }).first();
    expect(row.hazardous).toBe(true);
    expect(row.hazard_statements).toEqual(['H225', 'H319']);
  });

  it('201 an item without hazard data has hazard null (and so has one given hazard: null or an empty object)', async () => {
    for (const hazard of [undefined, null, {}, { hStatements: [], casNumber: '', storage: '  ' }]) {
      const res = await as.manager.post('/api/items').send(newItem({ hazard })).expect(201);
      expect(res.body.hazard).toBeNull();
      expect((await t.db('items').where({ id: res.body.id }).first()).hazardous).toBe(false);
    }
  });

  it('201 a good CAS number: water 7732-18-5, ethanol 64-17-5; H and EUH codes, official combinations', async () => {
    for (const casNumber of ['7732-18-5', '64-17-5', '7647-01-0']) {
      const res = await as.manager
        .post('/api/items')
        .send(newItem({ hazard: { casNumber } }))
        .expect(201);
      expect(res.body.hazard).toMatchObject({ casNumber, signalWord: null, pictograms: [], unNumber: null });
    }
    const res = await as.manager
      .post('/api/items')
      .send(
        newItem({
          hazard: {
            signalWord: 'Warning',
            hStatements: ['H300+H310+H330', 'H360Fd', 'h350i', 'EUH066', 'euh208'],
            pStatements: ['P370+P372+P380+P373', 'P501', 'P281'],
          },
        }),
      )
      .expect(201);
    expect(res.body.hazard.hStatements).toEqual(['H300+H310+H330', 'H360Fd', 'H350i', 'EUH066', 'EUH208']);
    expect(res.body.hazard.pStatements).toEqual(['P370+P372+P380+P373', 'P501', 'P281']);
  });

  it('400 an unknown H, EUH or P code, and a combination the lists do not hold, naming the field', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ hStatements: ['H225', 'H999'] }, 'H999', 'hazard.hStatements.1'],
      [{ hStatements: ['EUH999'] }, 'EUH999', 'hazard.hStatements.0'],
      [{ hStatements: ['P210'] }, 'P210', 'hazard.hStatements.0'],
      [{ pStatements: ['P210', 'P999'] }, 'P999', 'hazard.pStatements.1'],
      [{ pStatements: ['P303+P361'] }, 'P303+P361', 'hazard.pStatements.0'],
      [{ pStatements: ['P210+P233'] }, 'P210+P233', 'hazard.pStatements.0'],
      [{ pStatements: ['H225'] }, 'H225', 'hazard.pStatements.0'],
    ];
    for (const [hazard, code, field] of cases) {
      const res = await as.manager.post('/api/items').send(newItem({ hazard })).expect(400);
      const message = `Unknown hazard statement '${code}'`;
      expect(res.body).toEqual({ message, errors: [{ field, message }] });
    }
    expect(await t.db('items').where('sku', 'like', 'HZ-%').where('hazard_statements', '@>', ['H999'])).toEqual([]);
  });

  it('400 a CAS number whose check digit is wrong, or that is no CAS number', async () => {
    for (const cas of ['64-17-6', '7732-18-4', '64175', '1-17-5']) {
      const res = await as.manager
        .post('/api/items')
        .send(newItem({ hazard: { casNumber: cas } }))
        .expect(400);
      const message = `Invalid CAS number '${cas}'`;
      expect(res.body).toEqual({ message, errors: [{ field: 'hazard.casNumber', message }] });
    }
  });

  it('400 pictograms other than GHS01 to GHS09, a signal word other than Danger or Warning, a UN number not four digits', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ pictograms: ['GHS10'] }, 'hazard.pictograms.0'],
      [{ pictograms: ['GHS02', 'flame'] }, 'hazard.pictograms.1'],
      [{ pictograms: 'GHS02' }, 'hazard.pictograms'],
      [{ signalWord: 'Caution' }, 'hazard.signalWord'],
      [{ unNumber: '117' }, 'hazard.unNumber'],
      [{ unNumber: 'UN1170' }, 'hazard.unNumber'],
      [{ unNumber: '11700' }, 'hazard.unNumber'],
      [{ hStatements: 'H225' }, 'hazard.hStatements'],
    ];
    for (const [hazard, field] of cases) {
      const res = await as.manager.post('/api/items').send(newItem({ hazard })).expect(400);
      expect(res.body.message).toBe('Validation failed');
      expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
    }
  });

  it('403 a user sets no hazard data', async () => {
    await as.user
      .post('/api/items')
      .send(newItem({ hazard: ethanol }))
      .expect(403);
  });
});

describe('PUT /api/items/{id} with hazard', () => {
  it('200 replaces the whole hazard, keeps it when hazard is not sent, and null clears it', async () => {
    const { body: item } = await as.manager
      .post('/api/items')
      .send(newItem({ hazard: ethanol }))
      .expect(201);
    const replaced = await as.manager
      .put(`/api/items/${item.id}`)
      .send({ hazard: { pictograms: ['GHS05'], hStatements: ['H314'], signalWord: 'Danger' } })
      .expect(200);
    expect(replaced.body.hazard).toEqual({
      signalWord: 'Danger',
      pictograms: ['GHS05'],
      hStatements: ['H314'],
      pStatements: [],
      casNumber: null,
      unNumber: null,
      storage: null,
    });
    const renamed = await as.manager.put(`/api/items/${item.id}`).send({ name: 'Renamed acid' }).expect(200);
    expect(renamed.body.hazard).toEqual(replaced.body.hazard);
    const cleared = await as.manager.put(`/api/items/${item.id}`).send({ hazard: null }).expect(200);
    expect(cleared.body.hazard).toBeNull();
    expect((await t.db('items').where({ id: item.id }).first()).hazardous).toBe(false);
    const audit = await t.db('audit_log').where({ entity_type: 'item', entity_id: String(item.id), action: 'update' });
    expect(audit.some((a) => JSON.stringify(a.after).includes('H314'))).toBe(true);
  });

  it('400 an unknown statement on update names the field and changes nothing', async () => {
    const { body: item } = await as.manager
      .post('/api/items')
      .send(newItem({ hazard: ethanol }))
      .expect(201);
    const res = await as.manager
      .put(`/api/items/${item.id}`)
      .send({ name: 'Changed', hazard: { hStatements: ['H226', 'H2255'] } })
      .expect(400);
    expect(res.body).toEqual({
      message: "Unknown hazard statement 'H2255'",
      errors: [{ field: 'hazard.hStatements.1', message: "Unknown hazard statement 'H2255'" }],
    });
    const read = await as.user.get(`/api/items/${item.id}`).expect(200);
    expect([read.body.name, read.body.hazard]).toEqual([item.name, ethanol]);
  });
});

describe('GET /api/hazards/statements', () => {
  it('200 every H, EUH and P code with its text, to anyone signed in, a requester included', async () => {
    const requester = await t.loginAs(await buildUser(t.db, { role: 'requester' }));
    const res = await requester.get('/api/hazards/statements').expect(200);
    expect(res.body.h).toContainEqual({ code: 'H225', text: 'Highly flammable liquid and vapour' });
    expect(res.body.h).toContainEqual({
      code: 'H300+H310+H330',
      text: 'Fatal if swallowed, in contact with skin or if inhaled',
    });
    expect(res.body.h).toContainEqual({ code: 'EUH066', text: 'Repeated exposure may cause skin dryness or cracking' });
    expect(res.body.p).toContainEqual({
      code: 'P303+P361+P353',
      text: 'IF ON SKIN (or hair): Take off immediately all contaminated clothing. Rinse skin with water [or shower].',
    });
    // a code deleted since is listed as withdrawn, and still accepted (labels on the shelf carry it)
    expect(res.body.p).toContainEqual({
      code: 'P281',
      text: 'Use personal protective equipment as required.',
      withdrawn: true,
    });
    expect(res.body.source).toMatch(/1272\/2008/);
    expect(res.body.pictograms).toContainEqual({ code: 'GHS02', name: 'Flammable', image: '/assets/ghs/GHS02.svg' });
    expect(new Set(res.body.h.map((s: { code: string }) => s.code)).size).toBe(res.body.h.length);
  });

  it('401 signed out', () => t.request.get('/api/hazards/statements').expect(401));
});

describe('GET /assets/ghs/{code}.svg', () => {
  it('200 each pictogram as image/svg+xml, named by its meaning', async () => {
    const names = [
      'Explosive',
      'Flammable',
      'Oxidising',
      'Gas under pressure',
      'Corrosive',
      'Acute toxicity',
      'Harmful/irritant',
      'Health hazard',
      'Hazardous to the environment',
    ];
    for (const [i, name] of names.entries()) {
      const code = `GHS0${i + 1}`;
      const res = await t.request.get(`/assets/ghs/${code}.svg`).buffer(true).expect(200);
      expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
      const svg = String(res.body instanceof Buffer ? res.body.toString('utf8') : res.text);
      expect(svg).toContain(`<title>${code} ${name}</title>`);
      expect(svg).toContain(`aria-label="${code} ${name}"`);
      expect(svg).toContain('role="img"');
    }
  });
});

describe('items import and export: the hazard columns', () => {
  it('200 an exported CSV imports again with the same hazard data', async () => {
    const { body: item } = await as.manager
      .post('/api/items')
      .send(newItem({ hazard: ethanol }))
      .expect(201);
    const csv = await as.manager
      .post('/api/items/bulk/export')
      .send({ itemIds: [item.id], format: 'csv' })
      .expect(200);
    const [row] = parseCsv(csv.text, { bom: true, columns: true }) as Record<string, string>[];
    expect([row['Signal Word'], row.Pictograms, row['H Statements'], row['CAS Number'], row['UN Number']]).toEqual([
      'Danger',
      'GHS02 | GHS07',
      'H225 | H319',
      '64-17-5',
      '1170',
    ]);
    const imported = await as.manager
      .post('/api/items/bulk-import')
      .send({
        items: [
          {
            name: row.Name,
            sku: `${row.SKU}-COPY`,
            categoryName: row.Category,
            price: row.Price,
            currentStock: row['Current Stock'],
            signalWord: row['Signal Word'],
            pictograms: row.Pictograms,
            hStatements: row['H Statements'],
            pStatements: row['P Statements'],
            casNumber: row['CAS Number'],
            unNumber: row['UN Number'],
            hazardStorage: row['Hazard Storage'],
          },
        ],
      })
      .expect(200);
    expect(imported.body).toEqual({ successful: 1, failed: 0, errors: [] });
    const copy = await t
      .db('items')
      .where({ sku: `${item.sku}-COPY` })
      .first();
    const read = await as.user.get(`/api/items/${copy.id}`).expect(200);
    expect(read.body.hazard).toEqual(ethanol);
  });

  it('200 the import refuses a row with an unknown code or a bad CAS number, by its position', async () => {
    const base = { categoryName: 'flammables', price: '1.00', currentStock: 0 };
    const res = await as.manager
      .post('/api/items/bulk-import')
      .send({
        items: [
          { ...base, name: 'A', sku: 'HZI-1', hStatements: ['H225'], unNumber: 1170 },
          { ...base, name: 'B', sku: 'HZI-2', pStatements: 'P210 | P999' },
          { ...base, name: 'C', sku: 'HZI-3', casNumber: '64-17-6' },
          { ...base, name: 'D', sku: 'HZI-4', pictograms: 'GHS11' },
          { ...base, name: 'E', sku: 'HZI-5', unNumber: 'x' },
        ],
      })
      .expect(200);
    expect(res.body).toEqual({
      successful: 1,
      failed: 4,
      errors: [
        "Item 2: Unknown hazard statement 'P999'",
        "Item 3: Invalid CAS number '64-17-6'",
        'Item 4: pictograms must be one of GHS01 to GHS09',
        'Item 5: unNumber must be four digits',
      ],
    });
    const a = await t.db('items').where({ sku: 'HZI-1' }).first();
    expect([a.hazard_statements, a.un_number, a.hazardous]).toEqual([['H225'], '1170', true]);
  });
});
