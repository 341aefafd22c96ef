import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, buildUser } from './helpers/factories';
import { buildMcpKey, withKey } from './helpers/mcp-factories';
import { buildChargeCode } from './helpers/sales-factories';

let t: TestApp;
let clerk: supertest.Agent;
let key: string;
const sales: Record<'chem' | 'chemOld' | 'phys', { id: number; saleId: string }> = {} as never;
const items: Record<'beaker' | 'flask' | 'acid' | 'retired', { id: number; name: string }> = {} as never;

const mcpError = (code: string) => ({
  error: { code, message: expect.any(String), timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
});

// Fixture: two categories, three active items (two low on stock) and a retired one; three sales on
// two charge codes, one of them dated 2025-06-15 and one with two lines.
beforeAll(async () => {
  t = await testApp();
  const user = await buildUser(t.db);
  clerk = await t.loginAs(user);
  key = (await buildMcpKey(t.db)).key;
  const glass = await buildCategory(t.db, { name: 'Glassware' });
  const chemicals = await buildCategory(t.db, { name: 'Chemicals' });
  items.beaker = await buildItem(t.db, {
    name: 'Beaker 250 ml',
    sku: 'BK-250',
    categoryId: glass.id,
    price: '10.00',
    currentStock: 100,
    minimumStock: 5,
  });
  items.flask = await buildItem(t.db, {
    name: 'Flask 1 l',
    sku: 'FL-1000',
    categoryId: glass.id,
    price: '12.50',
    currentStock: 10,
    minimumStock: 8,
  });
  items.acid = await buildItem(t.db, {
    name: 'Citric acid',
    sku: 'CA-500',
    categoryId: chemicals.id,
    price: '7.25',
    currentStock: '2.5',
    minimumStock: 2,
  });
  items.retired = await buildItem(t.db, { name: 'Beaker, old', sku: 'BK-OLD', categoryId: glass.id, isActive: false });
  await buildChargeCode(t.db, { code: 'CHEM-001' });
  await buildChargeCode(t.db, { code: 'PHYS-001' });
  const sell = async (chargeCode: string, lines: { itemId: number; quantity: number }[]) =>
    (await clerk.post('/api/sales').send({ chargeCode, items: lines }).expect(201)).body.sale as {
      id: number;
      saleId: string;
    };
  sales.chemOld = await sell('CHEM-001', [{ itemId: items.beaker.id, quantity: 2 }]);
  sales.chem = await sell('CHEM-001', [
    { itemId: items.beaker.id, quantity: 1 },
    { itemId: items.flask.id, quantity: 3 },
  ]);
  sales.phys = await sell('PHYS-001', [{ itemId: items.acid.id, quantity: 1 }]);
  await t
    .db('sales')
    .where({ id: sales.chemOld.id })
    .update({ created_at: new Date('2025-06-15T10:00:00Z') });
});
afterAll(() => t.close());

const getSales = (query: Record<string, string | number> = {}) =>
  t.request.get('/api/mcp/sales').query(query).set(withKey(key));
const getInventory = (query: Record<string, string | number> = {}) =>
  t.request.get('/api/mcp/inventory').query(query).set(withKey(key));
const ids = (list: { id: string }[]) => list.map((e) => e.id);

describe('GET /api/mcp/sales', () => {
  it('200 the spec shape: ids as strings, the total a JSON number, items the number of lines, newest first', async () => {
    const res = await getSales().expect(200);
    const rows = await t.db('sales').orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
    expect(res.body).toEqual({
      sales: rows.map((row) => ({
        id: String(row.id),
        charge_code: row.charge_code,
        total: Number(row.total_amount),
        items: expect.any(Number),
        timestamp: row.created_at.toISOString(),
      })),
      pagination: { total: 3, page: 1, limit: 50 },
    });
    const chem = res.body.sales.find((s: { id: string }) => s.id === String(sales.chem.id));
    expect(chem).toMatchObject({ charge_code: 'CHEM-001', items: 2 });
    expect(typeof chem.total).toBe('number');
    expect(chem.total).toBe(Number((await t.db('sales').where({ id: sales.chem.id }).first()).total_amount));
    expect(ids(res.body.sales)).toEqual([sales.phys.id, sales.chem.id, sales.chemOld.id].map(String));
  });

  it('since and until: a date covers its whole UTC day, a timestamp is exact, both inclusive', async () => {
    expect(ids((await getSales({ since: '2025-06-15', until: '2025-06-15' }).expect(200)).body.sales)).toEqual([
      String(sales.chemOld.id),
    ]);
    expect(ids((await getSales({ until: '2025-06-15T10:00:00Z' }).expect(200)).body.sales)).toEqual([
      String(sales.chemOld.id),
    ]);
    expect(
      ids((await getSales({ since: '2025-06-15T10:00:00.001Z', until: '2025-12-31' }).expect(200)).body.sales),
    ).toEqual([]);
    const recent = await getSales({ since: '2025-06-16' }).expect(200);
    expect(ids(recent.body.sales)).toEqual([sales.phys.id, sales.chem.id].map(String));
    expect(recent.body.pagination.total).toBe(2);
  });

  it('chargeCode matches part of the code, case-insensitive; page and limit page through', async () => {
    const chem = await getSales({ chargeCode: 'chem' }).expect(200);
    expect(ids(chem.body.sales)).toEqual([sales.chem.id, sales.chemOld.id].map(String));
    expect((await getSales({ chargeCode: 'BIO' }).expect(200)).body).toEqual({
      sales: [],
      pagination: { total: 0, page: 1, limit: 50 },
    });
    const second = await getSales({ limit: 2, page: 2 }).expect(200);
    expect(second.body).toEqual({
      sales: [expect.objectContaining({ id: String(sales.chemOld.id) })],
      pagination: { total: 3, page: 2, limit: 2 },
    });
    await getSales({ limit: 100 }).expect(200);
  });

  it('400 MCP_INVALID_REQUEST naming the refused parameter', async () => {
    for (const [query, field] of [
      [{ limit: 101 }, 'limit'],
      [{ limit: 0 }, 'limit'],
      [{ page: 0 }, 'page'],
      [{ since: 'yesterday' }, 'since'],
      [{ until: '2025-13-01' }, 'until'],
      [{ since: '2025-06-16', until: '2025-06-15' }, 'until'],
    ] as const) {
      const res = await getSales(query).expect(400);
      expect(res.body).toEqual(mcpError('MCP_INVALID_REQUEST'));
      expect(res.body.error.message).toMatch(new RegExp(`^Validation failed: ${field} `));
    }
  });
});

describe('GET /api/mcp/inventory', () => {
  it('200 the spec shape: active items by name, ids as strings, stock and price JSON numbers, every category name', async () => {
    const res = await getInventory().expect(200);
    const active = await t
      .db('items as i')
      .join('categories as c', 'c.id', 'i.category_id')
      .where('i.is_active', true)
      .orderBy([{ column: 'i.name' }, { column: 'i.id' }])
      .select('i.*', 'c.name as category');
    expect(res.body.items).toEqual(
      active.map((row) => ({
        id: String(row.id),
        name: row.name,
        category: row.category,
        stock: Number(row.current_stock),
        price: Number(row.price),
      })),
    );
    expect(res.body.items).toContainEqual({
      id: String(items.acid.id),
      name: 'Citric acid',
      category: 'Chemicals',
      stock: 1.5,
      price: 7.25,
    });
    expect(ids(res.body.items)).not.toContain(String(items.retired.id));
    const categories = (await t.db('categories').pluck('name')).sort((a: string, b: string) => a.localeCompare(b));
    expect(res.body.categories).toEqual(categories);
    expect(res.body.pagination).toEqual({ total: active.length, page: 1, limit: 50 });
  });

  it('search (name, description or SKU), category by name (case-insensitive), lowStock true and false, paging', async () => {
    expect(ids((await getInventory({ search: 'beaker' }).expect(200)).body.items)).toEqual([String(items.beaker.id)]);
    expect(ids((await getInventory({ search: 'fl-10' }).expect(200)).body.items)).toEqual([String(items.flask.id)]);
    expect(ids((await getInventory({ category: 'glassware' }).expect(200)).body.items)).toEqual(
      [items.beaker.id, items.flask.id].map(String),
    );
    expect((await getInventory({ category: 'Nope' }).expect(200)).body).toMatchObject({
      items: [],
      pagination: { total: 0 },
    });
    // flask: 10 - 3 sold = 7 <= 8; acid: 2.5 - 1 = 1.5 <= 2; beaker: 97 > 5
    const low = await getInventory({ lowStock: 'true' }).expect(200);
    expect(ids(low.body.items)).toEqual([items.acid.id, items.flask.id].map(String));
    expect(ids((await getInventory({ lowStock: 'false', category: 'Glassware' }).expect(200)).body.items)).toEqual([
      String(items.beaker.id),
    ]);
    expect(ids((await getInventory({ lowStock: 'true', search: 'flask' }).expect(200)).body.items)).toEqual([
      String(items.flask.id),
    ]);
    const page2 = await getInventory({ category: 'Glassware', limit: 1, page: 2 }).expect(200);
    expect(page2.body).toMatchObject({
      items: [{ id: String(items.flask.id) }],
      pagination: { total: 2, page: 2, limit: 1 },
    });
    expect((await getInventory({ category: 'Glassware', page: 9 }).expect(200)).body.pagination).toEqual({
      total: 2,
      page: 9,
      limit: 50,
    });
  });

  it('400 MCP_INVALID_REQUEST naming the refused parameter', async () => {
    for (const [query, field] of [
      [{ limit: 101 }, 'limit'],
      [{ lowStock: 'yes' }, 'lowStock'],
      [{ page: 'two' }, 'page'],
      [{ category: '' }, 'category'],
    ] as const) {
      const res = await getInventory(query).expect(400);
      expect(res.body).toEqual(mcpError('MCP_INVALID_REQUEST'));
      expect(res.body.error.message).toMatch(new RegExp(`^Validation failed: ${field} `));
    }
  });
});

describe('MCP data access and limits', () => {
  it('401 MCP_AUTH_REQUIRED without a key, MCP_AUTH_INVALID for any other credential: a session or a bearer token does not open them', async () => {
    const token = (await clerk.post('/api/auth/tokens').send({ name: 'script' }).expect(201)).body.token;
    for (const path of ['/api/mcp/sales', '/api/mcp/inventory']) {
      expect((await t.request.get(path).expect(401)).body).toEqual(mcpError('MCP_AUTH_REQUIRED'));
      expect((await clerk.get(path).expect(401)).body).toEqual(mcpError('MCP_AUTH_REQUIRED'));
      expect((await t.request.get(path).set('Authorization', `Bearer ${token}`).expect(401)).body).toEqual(
        mcpError('MCP_AUTH_INVALID'),
      );
      expect((await t.request.get(path).set(withKey('mcp_unknown')).expect(401)).body).toEqual(
        mcpError('MCP_AUTH_INVALID'),
      );
    }
  });

  it('the key opens no other route: 401 on /api/items and /api/sales', async () => {
    for (const path of ['/api/items', '/api/sales']) {
      const res = await t.request.get(path).set(withKey(key)).expect(401);
      expect(res.body).toEqual(mcpError('MCP_AUTH_INVALID'));
    }
  });

  it('the 101st data request of a key within a minute is 429 MCP_RATE_LIMITED with Retry-After; another key still passes', async () => {
    const spent = await buildMcpKey(t.db, { name: 'Busy assistant' });
    const other = await buildMcpKey(t.db, { name: 'Quiet assistant' });
    for (let i = 0; i < 100; i += 1) {
      const path = i % 2 === 0 ? '/api/mcp/sales' : '/api/mcp/inventory';
      await t.request.get(path).query({ limit: 1 }).set(withKey(spent.key)).expect(200);
    }
    const limited = await t.request.get('/api/mcp/inventory').set(withKey(spent.key)).expect(429);
    expect(limited.body).toEqual(mcpError('MCP_RATE_LIMITED'));
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    await t.request.get('/api/mcp/sales').set(withKey(spent.key)).expect(429);
    await t.request.get('/api/mcp/sales').set(withKey(other.key)).expect(200);
  });
});

describe('GET /api/docs', () => {
  it('documents the parameters of the MCP sales and inventory routes (open point O16)', async () => {
    const doc = (await t.request.get('/api/docs').expect(200)).body;
    const names = (path: string) =>
      (doc.paths[path].get.parameters as { name: string; in: string }[])
        .filter((p) => p.in === 'query')
        .map((p) => p.name);
    expect(names('/api/mcp/sales').sort()).toEqual(['chargeCode', 'limit', 'page', 'since', 'until']);
    expect(names('/api/mcp/inventory').sort()).toEqual(['category', 'limit', 'lowStock', 'page', 'search']);
    expect(doc.paths['/api/mcp/sales'].get.description).toMatch(/items the number of lines/);
  });
});
