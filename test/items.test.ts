import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem } from './helpers/factories';
import {
  agentsByRole,
  buildStockedItem,
  itemCountDrift,
  movementsOf,
  stockOf,
  type Agents,
} from './helpers/inventory-factories';
import { containsPattern } from '../src/db/like-pattern';
import { sql, toRaw } from '../src/db/sql';
import { itemForLineBySkuJson, type ItemForLine } from '../src/modules/items/items.queries';

let t: TestApp;
let as: Agents;
let category: { id: number; name: string };
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  category = await buildCategory(t.db, {
    name: 'Glassware',
    icon: 'fa-flask',
    color: 'blue',
    description: 'Beakers and flasks',
  });
});
afterAll(() => t.close());

const newItem = (overrides: Record<string, unknown> = {}) => ({
  name: 'Beaker 250ml',
  sku: `BK-${Math.random().toString(36).slice(2, 10)}`,
  description: 'Borosilicate',
  categoryId: category.id,
  price: '4.5',
  currentStock: 12,
  minimumStock: 3,
  ...overrides,
});

describe('POST /api/items', () => {
  it('401 without a session', () => t.request.post('/api/items').send(newItem()).expect(401));
  it('403 for a user', () => as.user.post('/api/items').send(newItem()).expect(403));

  it('201 creates the item with embedded category, creator, effective VAT and an opening movement', async () => {
    const res = await as.manager
      .post('/api/items')
      .send(newItem({ name: 'Conical flask' }))
      .expect(201);
    expect(res.body).toMatchObject({
      name: 'Conical flask',
      price: '4.50',
      vatRate: '0.2000',
      usesDefaultVatRate: true,
      currentStock: 12,
      minimumStock: 3,
      isActive: true,
      createdBy: as.ids.manager,
      category: {
        id: category.id,
        name: 'Glassware',
        description: 'Beakers and flasks',
        icon: 'fa-flask',
        color: 'blue',
      },
    });
    expect(res.body.creator).toMatchObject({ id: as.ids.manager, firstName: 'Test', lastName: 'User' });
    expect(typeof res.body.createdAt).toBe('string');
    const movements = await movementsOf(t.db, res.body.id);
    expect(movements.map((m) => [m.type, m.quantity, m.previous_stock, m.new_stock, m.reason])).toEqual([
      ['in', '12.00', '0.00', '12.00', 'Initial stock'],
    ]);
  });

  it('201 with no stock writes no movement and takes its own VAT rate', async () => {
    const res = await as.admin
      .post('/api/items')
      .send(newItem({ currentStock: 0, vatRate: '0.05' }))
      .expect(201);
    expect(res.body).toMatchObject({ currentStock: 0, vatRate: '0.0500', usesDefaultVatRate: false });
    expect(await movementsOf(t.db, res.body.id)).toHaveLength(0);
  });

  it('400 names each invalid field', async () => {
    const res = await as.manager
      .post('/api/items')
      .send({ sku: '', price: 'abc', currentStock: -1, categoryId: 'x' })
      .expect(400);
    expect(res.body.message).toBe('Validation failed');
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'sku', 'price', 'currentStock', 'categoryId']));
  });

  it('400 for a price with more than 2 places or an unknown category', async () => {
    await as.manager
      .post('/api/items')
      .send(newItem({ price: '1.234' }))
      .expect(400);
    const res = await as.manager
      .post('/api/items')
      .send(newItem({ categoryId: 999999 }))
      .expect(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'categoryId' })]);
  });

  it('409 names the sku on a clash', async () => {
    await buildItem(t.db, { sku: 'DUP-1', categoryId: category.id });
    const res = await as.manager
      .post('/api/items')
      .send(newItem({ sku: 'DUP-1' }))
      .expect(409);
    expect(res.body.message).toBe("An item with SKU 'DUP-1' already exists");
  });
});

describe('GET /api/items', () => {
  let listCategory: { id: number };
  beforeAll(async () => {
    listCategory = await buildCategory(t.db);
    await buildItem(t.db, {
      name: 'Alpha pipette',
      sku: 'LIST-A',
      categoryId: listCategory.id,
      description: 'Graduated',
      createdBy: as.ids.admin,
    });
    await buildItem(t.db, { name: 'Bravo clamp', sku: 'LIST-B', categoryId: listCategory.id });
    await buildItem(t.db, { name: 'Charlie stand', sku: 'LIST-C', categoryId: listCategory.id, isActive: false });
  });

  it('401 without a session', () => t.request.get('/api/items').expect(401));

  it('200 lists active items of a category by name with total, category and creator', async () => {
    const res = await as.user.get(`/api/items?categoryId=${listCategory.id}`).expect(200);
    expect(res.body.total).toBe(2);
    expect(res.body.items.map((i: { sku: string }) => i.sku)).toEqual(['LIST-A', 'LIST-B']);
    expect(res.body.items[0]).toMatchObject({
      createdBy: as.ids.admin,
      creator: { id: as.ids.admin },
      category: { id: listCategory.id },
    });
    expect(res.body.items[1]).toMatchObject({ createdBy: null, creator: null });
  });

  it('200 pages with page and limit (default limit 10)', async () => {
    const res = await as.user.get(`/api/items?categoryId=${listCategory.id}&page=2&limit=1`).expect(200);
    expect(res.body).toMatchObject({ total: 2, items: [expect.objectContaining({ sku: 'LIST-B' })] });
    const all = await as.user.get('/api/items').expect(200);
    expect(all.body.items.length).toBeLessThanOrEqual(10);
  });

  it('200 searches name, description and sku case-insensitively', async () => {
    expect(
      (await as.user.get('/api/items?search=ALPHA').expect(200)).body.items.map((i: { sku: string }) => i.sku),
    ).toEqual(['LIST-A']);
    expect((await as.user.get('/api/items?search=graduated').expect(200)).body.total).toBe(1);
    expect((await as.user.get('/api/items?search=list-b').expect(200)).body.items[0].sku).toBe('LIST-B');
    expect((await as.user.get('/api/items?search=%25').expect(200)).body.total).toBe(0);
  });

  it('200 includes inactive items for a manager with includeInactive=true; 403 for a user', async () => {
    const res = await as.manager.get(`/api/items?categoryId=${listCategory.id}&includeInactive=true`).expect(200);
    expect(res.body.total).toBe(3);
    await as.user.get('/api/items?includeInactive=true').expect(403);
  });

  it('200 total agrees with the rows for every filter combination, also past the last page', async () => {
    for (const query of [
      `categoryId=${listCategory.id}`,
      `categoryId=${listCategory.id}&includeInactive=true`,
      'search=list-',
      'search=list-&includeInactive=true',
      '',
    ]) {
      const res = await as.manager.get(`/api/items?limit=100&${query}`).expect(200);
      expect(res.body.total).toBe(res.body.items.length);
      const past = await as.manager.get(`/api/items?page=50&limit=100&${query}`).expect(200);
      expect(past.body).toEqual({ items: [], total: res.body.total });
    }
    expect(await itemCountDrift(t.db)).toEqual([]);
  });

  it('400 for limit over 100 or a bad page', async () => {
    await as.user.get('/api/items?limit=101').expect(400);
    await as.user.get('/api/items?page=0').expect(400);
    await as.user.get('/api/items?categoryId=abc').expect(400);
  });
});

describe('GET /api/items?search=', () => {
  let searchCategory: { id: number };
  beforeAll(async () => {
    searchCategory = await buildCategory(t.db);
    const items = [
      { name: 'Conical flask 250ml', sku: 'SRCH-FLASK-1', description: 'Borosilicate glass' },
      { name: 'Erlenmeyer FLASK 100ml', sku: 'SRCH-FLASK-2' },
      { name: 'Beaker', sku: 'SRCH-BEAKER', description: 'Holds a flask worth' },
      { name: 'Discount 50% off', sku: 'SRCH-PCT' },
      { name: 'Snake_case label', sku: 'SRCH-UNDERSCORE' },
      { name: 'Back\\slash tray', sku: 'SRCH-BACKSLASH' },
      { name: 'Éclair mould', sku: 'SRCH-ACCENT', description: 'Pâtisserie' },
      { name: 'Retired flask', sku: 'SRCH-RETIRED', isActive: false },
    ];
    for (const item of items) await buildItem(t.db, { ...item, categoryId: searchCategory.id });
  });

  /** What search matched before the trigram index: ILIKE over name, description and sku joined by spaces, by name. */
  async function ilikeSkus(term: string, includeInactive = false): Promise<string[]> {
    const { rows } = await toRaw<{ rows: { sku: string }[] }>(
      t.db,
      sql`SELECT sku FROM items
           WHERE category_id = ${searchCategory.id} AND (is_active OR ${includeInactive})
             AND (name || ' ' || coalesce(description, '') || ' ' || sku) ILIKE ${containsPattern(term)}
           ORDER BY name, id`,
    );
    return rows.map((r) => r.sku);
  }

  async function searchSkus(term: string, includeInactive = false): Promise<string[]> {
    const query = new URLSearchParams({
      search: term,
      categoryId: String(searchCategory.id),
      limit: '100',
      includeInactive: String(includeInactive),
    });
    const res = await as.manager.get(`/api/items?${query}`).expect(200);
    expect(res.body.total).toBe(res.body.items.length);
    return res.body.items.map((i: { sku: string }) => i.sku);
  }

  it('200 finds what ILIKE found, in the same order, for terms of every length and the LIKE metacharacters taken literally', async () => {
    const terms = [
      'f',
      'FL',
      'a',
      '%',
      '_',
      '\\',
      'é',
      'É',
      'ÉC',
      'flask',
      'FLASK 1',
      'conical',
      'glass',
      'srch-',
      'srch-flask',
      'pâtisserie',
      'ml srch',
      'flask worth srch',
      '50%',
      'e_c',
      'k\\s',
      'zzz',
      'x y',
      'erlenmeyer flask',
    ];
    for (const term of terms) {
      expect({ term, skus: await searchSkus(term) }).toEqual({ term, skus: await ilikeSkus(term) });
    }
    expect(await searchSkus('flask', true)).toEqual(await ilikeSkus('flask', true));
  });

  it('200 matches name, description and sku in any case, and nothing else', async () => {
    expect(await searchSkus('FLASK')).toEqual(['SRCH-BEAKER', 'SRCH-FLASK-1', 'SRCH-FLASK-2']);
    expect(await searchSkus('boro')).toEqual(['SRCH-FLASK-1']);
    expect(await searchSkus('srch-pct')).toEqual(['SRCH-PCT']);
    expect(await searchSkus('%')).toEqual(['SRCH-PCT']);
    expect(await searchSkus('_')).toEqual(['SRCH-UNDERSCORE']);
    expect(await searchSkus('\\')).toEqual(['SRCH-BACKSLASH']);
    expect(await searchSkus('e_')).toEqual(['SRCH-UNDERSCORE']);
    expect(await searchSkus('e%')).toEqual([]);
  });

  it('200 pages the matches of a one- and a two-character search with their total', async () => {
    const all = await searchSkus('la');
    expect(all.length).toBeGreaterThan(2);
    const query = `search=la&categoryId=${searchCategory.id}&limit=2`;
    const page2 = await as.user.get(`/api/items?${query}&page=2`).expect(200);
    expect(page2.body).toMatchObject({
      total: all.length,
      items: all.slice(2, 4).map((sku) => expect.objectContaining({ sku })),
    });
    const one = await as.user.get(`/api/items?search=k&categoryId=${searchCategory.id}&limit=1&page=99`).expect(200);
    expect(one.body).toEqual({ items: [], total: (await ilikeSkus('k')).length });
  });

  it('200 a repeated search answers every change to its matches at once, however the change was made (another instance writes straight to the database)', async () => {
    const skusNow = async () => ({
      searched: await searchSkus('kettle', true),
      expected: await ilikeSkus('kettle', true),
    });
    expect((await skusNow()).searched).toEqual([]);

    const created = await as.manager
      .post('/api/items')
      .send(newItem({ name: 'Kettle 1.7l', sku: 'SRCH-KT-A', categoryId: searchCategory.id }))
      .expect(201);
    expect(await skusNow()).toEqual({ searched: ['SRCH-KT-A'], expected: ['SRCH-KT-A'] });

    // Written as another instance would: nothing in this process hears of it.
    await t.db('items').insert({
      name: 'Electric kettle',
      sku: 'SRCH-KT-B',
      category_id: searchCategory.id,
      price: '20',
      current_stock: 0,
      minimum_stock: 0,
      is_active: true,
    });
    expect(await skusNow()).toEqual({ searched: ['SRCH-KT-B', 'SRCH-KT-A'], expected: ['SRCH-KT-B', 'SRCH-KT-A'] });

    await t.db('items').where({ sku: 'SRCH-KT-B' }).update({ name: 'Zinc kettle' });
    expect((await skusNow()).searched).toEqual(['SRCH-KT-A', 'SRCH-KT-B']);
    await t.db('items').where({ sku: 'SRCH-KT-B' }).update({ description: null, name: 'Zinc jug' });
    expect((await skusNow()).searched).toEqual(['SRCH-KT-A']);
    await t.db('items').where({ sku: 'SRCH-KT-A' }).update({ is_active: false });
    expect(await searchSkus('kettle')).toEqual([]);
    expect(await searchSkus('kettle', true)).toEqual(['SRCH-KT-A']);
    await t.db('items').where({ sku: 'SRCH-KT-A' }).update({ category_id: category.id });
    expect(await searchSkus('kettle', true)).toEqual([]);

    // A stock change leaves the matches as they were, and the page shows the stock as it is now.
    await t.db('items').where({ sku: 'SRCH-KT-A' }).update({ category_id: searchCategory.id, is_active: true });
    expect(await searchSkus('kettle')).toEqual(['SRCH-KT-A']);
    await as.manager
      .post(`/api/items/${created.body.id}/stock`)
      .send({ type: 'in', quantity: 5, reason: 'Delivery' })
      .expect(200);
    const listed = await as.manager.get(`/api/items?search=kettle&categoryId=${searchCategory.id}`).expect(200);
    expect(listed.body.items[0]).toMatchObject({ sku: 'SRCH-KT-A', currentStock: 17 });

    await t.db('items').where({ sku: 'SRCH-KT-A' }).delete();
    expect(await skusNow()).toEqual({ searched: [], expected: [] });
  });

  it('200 every page of one search comes from the same matches, and a change between pages is seen on the next page', async () => {
    const all = await searchSkus('srch');
    const pageOf = async (page: number) =>
      (await as.user.get(`/api/items?search=srch&categoryId=${searchCategory.id}&limit=3&page=${page}`).expect(200))
        .body as { items: { sku: string }[]; total: number };
    const pages = [await pageOf(1), await pageOf(2), await pageOf(3)];
    expect(pages.flatMap((p) => p.items.map((i) => i.sku))).toEqual(all.slice(0, 9));
    expect(pages.map((p) => p.total)).toEqual([all.length, all.length, all.length]);

    await t.db('items').where({ sku: all[0] }).update({ name: 'zz last now' });
    const after = await pageOf(1);
    expect(after.total).toBe(all.length);
    expect(after.items.map((i) => i.sku)).toEqual(all.slice(1, 4));
  });
});

describe("itemForLineBySkuJson (the counter's scan)", () => {
  const scanned = async (sku: string) =>
    (await toRaw<{ rows: { item: ItemForLine | null }[] }>(t.db, sql`SELECT ${itemForLineBySkuJson(sku)} AS item`))
      .rows[0].item?.sku ?? null;

  it('finds the SKU typed in any case, exactly (no prefix), preferring the item written as typed', async () => {
    await buildItem(t.db, { sku: 'SCAN-Case-1', categoryId: category.id });
    await buildItem(t.db, { sku: 'scan-case-1', categoryId: category.id });
    await buildItem(t.db, { sku: 'SCAN-CASE-10', categoryId: category.id });
    expect(await scanned('scan-case-1')).toBe('scan-case-1');
    expect(await scanned('SCAN-Case-1')).toBe('SCAN-Case-1');
    expect(await scanned('SCAN-CASE-1')).toBe('SCAN-Case-1');
    expect(await scanned('scan-case-10')).toBe('SCAN-CASE-10');
    expect(await scanned('scan-case')).toBeNull();
  });
});

describe('GET /api/items/:id', () => {
  it('200 with the item', async () => {
    const item = await buildItem(t.db, { categoryId: category.id, price: '3.00', vatRate: '0.0500' });
    const res = await as.user.get(`/api/items/${item.id}`).expect(200);
    expect(res.body).toMatchObject({ id: item.id, price: '3.00', vatRate: '0.0500', category: { name: 'Glassware' } });
  });
  it('404 for an unknown item', () => as.user.get('/api/items/999999').expect(404));
  it('400 for a non-numeric id', () => as.user.get('/api/items/abc').expect(400));
});

describe('PUT /api/items/:id', () => {
  it('200 updates fields and records a changed stock as one adjustment in the same transaction', async () => {
    const item = await buildStockedItem(t.db, 10, { categoryId: category.id });
    const res = await as.manager
      .put(`/api/items/${item.id}`)
      .send({ name: 'Renamed', price: 9.99, currentStock: 4, stockReason: 'Stock count' })
      .expect(200);
    expect(res.body).toMatchObject({ name: 'Renamed', price: '9.99', currentStock: 4 });
    const movements = await movementsOf(t.db, item.id);
    expect(movements.map((m) => [m.type, m.quantity, m.new_stock, m.reason, m.item_name])).toEqual([
      ['in', '10.00', '10.00', 'Initial stock', item.name],
      ['adjustment', '-6.00', '4.00', 'Stock count', 'Renamed'],
    ]);
  });

  it('200 with an unchanged stock writes no movement; vatRate null returns to the default', async () => {
    const item = await buildStockedItem(t.db, 2, { categoryId: category.id, vatRate: '0.0500' });
    const res = await as.manager.put(`/api/items/${item.id}`).send({ currentStock: 2, vatRate: null }).expect(200);
    expect(res.body).toMatchObject({ vatRate: '0.2000', usesDefaultVatRate: true });
    expect(await movementsOf(t.db, item.id)).toHaveLength(1);
  });

  it('400 for a negative stock; nothing changes', async () => {
    const item = await buildStockedItem(t.db, 2, { categoryId: category.id });
    await as.manager.put(`/api/items/${item.id}`).send({ name: 'Changed', currentStock: -1 }).expect(400);
    expect((await t.db('items').where({ id: item.id }).first()).name).toBe(item.name);
  });

  it('409 on an sku clash, leaving stock untouched', async () => {
    const other = await buildItem(t.db, { sku: 'PUT-CLASH', categoryId: category.id });
    const item = await buildStockedItem(t.db, 1, { categoryId: category.id });
    const res = await as.manager.put(`/api/items/${item.id}`).send({ sku: 'PUT-CLASH', currentStock: 5 }).expect(409);
    expect(res.body.message).toContain("'PUT-CLASH'");
    expect(await stockOf(t.db, item.id)).toBe('1.00');
    expect(other.id).toBeGreaterThan(0);
  });

  it('403 for a user; 404 for an unknown item', async () => {
    const item = await buildItem(t.db, { categoryId: category.id });
    await as.user.put(`/api/items/${item.id}`).send({ name: 'x' }).expect(403);
    await as.manager.put('/api/items/999999').send({ name: 'x' }).expect(404);
  });
});

describe('DELETE /api/items/:id', () => {
  it('204 soft-deletes: the row stays, inactive and hidden from the default list', async () => {
    const item = await buildItem(t.db, { categoryId: category.id, sku: 'SOFT-1' });
    await as.manager.delete(`/api/items/${item.id}`).expect(204);
    expect((await t.db('items').where({ id: item.id }).first()).is_active).toBe(false);
    expect((await as.user.get('/api/items?search=SOFT-1').expect(200)).body.total).toBe(0);
    expect((await as.user.get(`/api/items/${item.id}`).expect(200)).body.isActive).toBe(false);
  });
  it('403 for a user; 404 unknown', async () => {
    const item = await buildItem(t.db, { categoryId: category.id });
    await as.user.delete(`/api/items/${item.id}`).expect(403);
    await as.manager.delete('/api/items/999999').expect(404);
  });
});

describe('POST /api/items/:id/stock', () => {
  it('200 in, out and adjustment each record a movement; the sum of movements equals the stock change', async () => {
    const item = await buildItem(t.db, { categoryId: category.id });
    const first = await as.manager
      .post(`/api/items/${item.id}/stock`)
      .send({ type: 'in', quantity: 10, reason: 'Delivery' })
      .expect(200);
    expect(first.body.item.currentStock).toBe(10);
    expect(first.body.movement).toMatchObject({
      type: 'in',
      quantity: 10,
      previousStock: 0,
      newStock: 10,
      reason: 'Delivery',
      performedBy: as.ids.manager,
    });
    await as.manager
      .post(`/api/items/${item.id}/stock`)
      .send({ type: 'out', quantity: '2.5', reason: 'Lab use' })
      .expect(200);
    const last = await as.admin
      .post(`/api/items/${item.id}/stock`)
      .send({ type: 'adjustment', quantity: 3, reason: 'Count' })
      .expect(200);
    expect(last.body.movement).toMatchObject({ type: 'adjustment', quantity: -4.5, previousStock: 7.5, newStock: 3 });
    const movements = await movementsOf(t.db, item.id);
    expect(movements.reduce((sum, m) => sum + Number(m.quantity), 0)).toBe(3);
    expect(await stockOf(t.db, item.id)).toBe('3.00');
  });

  it('400 Insufficient stock for an out below zero; nothing written', async () => {
    const item = await buildStockedItem(t.db, 1, { categoryId: category.id, name: 'Last tube' });
    const res = await as.manager
      .post(`/api/items/${item.id}/stock`)
      .send({ type: 'out', quantity: 2, reason: 'x' })
      .expect(400);
    expect(res.body.message).toBe("Insufficient stock for item 'Last tube'. Current stock: 1, Required: 2");
    expect(await movementsOf(t.db, item.id)).toHaveLength(1);
  });

  it('400 for an invalid type, a zero quantity or a negative adjustment', async () => {
    const item = await buildStockedItem(t.db, 1, { categoryId: category.id });
    await as.manager.post(`/api/items/${item.id}/stock`).send({ type: 'sideways', quantity: 1 }).expect(400);
    await as.manager.post(`/api/items/${item.id}/stock`).send({ type: 'in', quantity: 0 }).expect(400);
    await as.manager.post(`/api/items/${item.id}/stock`).send({ type: 'adjustment', quantity: -1 }).expect(400);
    expect(await stockOf(t.db, item.id)).toBe('1.00');
  });

  it('two parallel outs of the last unit: one succeeds, stock never negative', async () => {
    const item = await buildStockedItem(t.db, 1, { categoryId: category.id });
    const results = await Promise.all([
      as.manager.post(`/api/items/${item.id}/stock`).send({ type: 'out', quantity: 1, reason: 'a' }),
      as.admin.post(`/api/items/${item.id}/stock`).send({ type: 'out', quantity: 1, reason: 'b' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(await stockOf(t.db, item.id)).toBe('0.00');
    expect(await movementsOf(t.db, item.id)).toHaveLength(2);
  });

  it('403 for a user; 404 unknown item', async () => {
    const item = await buildItem(t.db, { categoryId: category.id });
    await as.user.post(`/api/items/${item.id}/stock`).send({ type: 'in', quantity: 1 }).expect(403);
    await as.manager.post('/api/items/999999/stock').send({ type: 'in', quantity: 1 }).expect(404);
  });
});

describe('GET /api/items/:id/stock-movements', () => {
  it('200 newest first in the movement shape', async () => {
    const item = await buildStockedItem(t.db, 5, { categoryId: category.id });
    await as.manager.post(`/api/items/${item.id}/stock`).send({ type: 'out', quantity: 1, reason: 'used' }).expect(200);
    const res = await as.user.get(`/api/items/${item.id}/stock-movements`).expect(200);
    expect(res.body.movements.map((m: { type: string }) => m.type)).toEqual(['out', 'in']);
    expect(res.body.movements[0]).toMatchObject({
      itemId: item.id,
      item: { id: item.id, name: item.name, sku: item.sku },
      itemName: item.name,
      quantity: -1,
      previousStock: 5,
      newStock: 4,
      performedBy: as.ids.manager,
      performer: { id: as.ids.manager },
    });
  });
  it('404 for an unknown item', () => as.user.get('/api/items/999999/stock-movements').expect(404));
});

describe('GET /api/items/:id/deletion-check and DELETE /api/items/:id/safe', () => {
  it('200 canDelete true and 204 for an unreferenced item', async () => {
    const item = await buildItem(t.db, { categoryId: category.id });
    expect((await as.admin.get(`/api/items/${item.id}/deletion-check`).expect(200)).body).toEqual({
      canDelete: true,
      reasons: [],
    });
    await as.admin.delete(`/api/items/${item.id}/safe`).expect(204);
    expect(await t.db('items').where({ id: item.id }).first()).toBeUndefined();
  });

  it('409 with reasons when movements and notes reference the item', async () => {
    const item = await buildStockedItem(t.db, 3, { categoryId: category.id });
    await t
      .db('notes')
      .insert({ text: 'n', reference_type: 'item', reference_id: String(item.id), created_by: as.ids.admin });
    const check = await as.admin.get(`/api/items/${item.id}/deletion-check`).expect(200);
    expect(check.body.canDelete).toBe(false);
    expect(check.body.reasons).toEqual(
      expect.arrayContaining([expect.stringContaining('stock movements'), expect.stringContaining('note')]),
    );
    const res = await as.admin.delete(`/api/items/${item.id}/safe`).expect(409);
    expect(res.body.reasons).toEqual(check.body.reasons);
    expect(await t.db('items').where({ id: item.id }).first()).toBeDefined();
  });

  it('403 for a manager; 404 unknown', async () => {
    const item = await buildItem(t.db, { categoryId: category.id });
    await as.manager.get(`/api/items/${item.id}/deletion-check`).expect(403);
    await as.manager.delete(`/api/items/${item.id}/safe`).expect(403);
    await as.admin.get('/api/items/999999/deletion-check').expect(404);
    await as.admin.delete('/api/items/999999/safe').expect(404);
  });
});

describe('reorderQuantity (replenishment, issue 17)', () => {
  it('201 create takes it (null when omitted) and records it in the audit row; GET and the list read it', async () => {
    const without = await as.manager.post('/api/items').send(newItem()).expect(201);
    expect(without.body.reorderQuantity).toBeNull();
    const res = await as.manager
      .post('/api/items')
      .send(newItem({ name: 'Reordered', reorderQuantity: '20.5' }))
      .expect(201);
    expect(res.body).toMatchObject({ minimumStock: 3, reorderQuantity: 20.5 });
    expect((await t.db('items').where({ id: res.body.id }).first()).reorder_quantity).toBe('20.50');
    const [audit] = await t
      .db('audit_log')
      .where({ entity_type: 'item', entity_id: String(res.body.id), action: 'create' });
    expect(audit.after).toMatchObject({ minimum_stock: '3.00', reorder_quantity: '20.50' });
    expect((await as.user.get(`/api/items/${res.body.id}`).expect(200)).body.reorderQuantity).toBe(20.5);
    const list = await as.user.get('/api/items').query({ search: 'Reordered' }).expect(200);
    expect(list.body.items).toEqual([expect.objectContaining({ id: res.body.id, reorderQuantity: 20.5 })]);
  });

  it('200 update sets and clears it; the audit row has the change before and after', async () => {
    const item = await buildItem(t.db, { categoryId: category.id, minimumStock: 4 });
    const set = await as.manager.put(`/api/items/${item.id}`).send({ reorderQuantity: 12 }).expect(200);
    expect(set.body.reorderQuantity).toBe(12);
    const cleared = await as.manager.put(`/api/items/${item.id}`).send({ reorderQuantity: null }).expect(200);
    expect(cleared.body.reorderQuantity).toBeNull();
    expect((await t.db('items').where({ id: item.id }).first()).reorder_quantity).toBeNull();
    const audit = await t
      .db('audit_log')
      .where({ entity_type: 'item', entity_id: String(item.id), action: 'update' })
      .orderBy('id');
    expect(audit.map((a) => [a.before, a.after])).toEqual([
      [{ reorder_quantity: null }, { reorder_quantity: '12.00' }],
      [{ reorder_quantity: '12.00' }, { reorder_quantity: null }],
    ]);
    // the same value again is no change, so no audit row
    await as.manager.put(`/api/items/${item.id}`).send({ reorderQuantity: null }).expect(200);
    expect(
      await t.db('audit_log').where({ entity_type: 'item', entity_id: String(item.id), action: 'update' }),
    ).toHaveLength(2);
  });

  it('400 for a negative value, more than 2 places or text; nothing changes', async () => {
    for (const reorderQuantity of [-1, '1.234', 'lots']) {
      const res = await as.manager.post('/api/items').send(newItem({ reorderQuantity })).expect(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'reorderQuantity' })]);
    }
    const item = await buildItem(t.db, { categoryId: category.id });
    await as.manager.put(`/api/items/${item.id}`).send({ reorderQuantity: -5 }).expect(400);
    expect((await t.db('items').where({ id: item.id }).first()).reorder_quantity).toBeNull();
  });

  it('bulk import takes it (optional) and the export carries it, empty when none', async () => {
    const sku = `IMP-RQ-${Math.random().toString(36).slice(2, 8)}`;
    const res = await as.manager
      .post('/api/items/bulk-import')
      .send({
        items: [
          {
            name: 'Imported reorder',
            sku,
            categoryName: 'glassware',
            price: '1.00',
            currentStock: 0,
            minimumStock: 2,
            reorderQuantity: '7.5',
          },
          { name: 'Imported plain', sku: `${sku}-2`, categoryName: 'Glassware', price: '1.00', currentStock: 0 },
          {
            name: 'Imported bad',
            sku: `${sku}-3`,
            categoryName: 'Glassware',
            price: '1.00',
            currentStock: 0,
            reorderQuantity: -1,
          },
        ],
      })
      .expect(200);
    expect(res.body).toMatchObject({
      successful: 2,
      failed: 1,
      errors: [expect.stringMatching(/^Item 3: reorderQuantity /)],
    });
    const rows = await t
      .db('items')
      .whereIn('sku', [sku, `${sku}-2`])
      .orderBy('sku');
    expect(rows.map((r) => [r.sku, r.reorder_quantity])).toEqual([
      [sku, '7.50'],
      [`${sku}-2`, null],
    ]);
    const exported = await as.user
      .post('/api/items/bulk/export')
      .send({ itemIds: rows.map((r) => r.id), format: 'csv' })
      .expect(200);
    const cells = (parseCsv(exported.text, { bom: true, columns: true }) as Record<string, string>[]).map((r) => [
      r.SKU,
      r['Minimum Stock'],
      r['Reorder Quantity'],
    ]);
    expect(cells.sort()).toEqual([
      [sku, '2.00', '7.50'],
      [`${sku}-2`, '0.00', ''],
    ]);
  });
});
