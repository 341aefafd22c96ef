import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem } from './helpers/factories';
import { agentsByRole, movementsOf, type Agents } from './helpers/inventory-factories';

let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  await buildCategory(t.db, { name: 'Plastics' });
});
afterAll(() => t.close());

const row = (sku: string, overrides: Record<string, unknown> = {}) => ({
  name: `Item ${sku}`,
  sku,
  description: 'imported',
  categoryName: 'plastics',
  price: '1.25',
  currentStock: 4,
  ...overrides,
});

describe('POST /api/items/bulk-import', () => {
  it('401 without a session', () =>
    t.request
      .post('/api/items/bulk-import')
      .send({ items: [row('IMP-0')] })
      .expect(401));

  it('400 for a missing or empty items array, or more than 10,000 items', async () => {
    await as.user.post('/api/items/bulk-import').send({}).expect(400);
    await as.user.post('/api/items/bulk-import').send({ items: [] }).expect(400);
    await as.user.post('/api/items/bulk-import').send({ items: 'x' }).expect(400);
    await as.user
      .post('/api/items/bulk-import')
      .send({ items: Array.from({ length: 10_001 }, () => ({})) })
      .expect(400);
  });

  it('200 imports valid items and reports each failure with its 1-based position; failures do not block the rest', async () => {
    await buildItem(t.db, { sku: 'IMP-TAKEN' });
    const res = await as.user
      .post('/api/items/bulk-import')
      .send({
        items: [
          row('IMP-1', { categoryName: 'PLASTICS', minimumStock: 2 }),
          row('IMP-2', { name: '' }),
          row('IMP-3', { categoryName: 'Metals' }),
          row('IMP-4', { price: 'cheap' }),
          row('IMP-TAKEN'),
          row('IMP-1'),
          row('IMP-7', { currentStock: 0, price: 3 }),
          'not an object',
          row('IMP-9', { currentStock: -1 }),
          row('IMP-10', { sku: undefined }),
          row('IMP-11', { name: 42, description: 'x'.repeat(5001) }),
        ],
      })
      .expect(200);
    expect(res.body.successful).toBe(2);
    expect(res.body.failed).toBe(9);
    expect(res.body.errors).toEqual([
      'Item 2: name is required',
      "Item 3: category 'Metals' does not exist",
      'Item 4: price must be a decimal number',
      "Item 5: an item with sku 'IMP-TAKEN' already exists",
      "Item 6: sku 'IMP-1' already appears at item 1 of this import",
      'Item 8: must be an object',
      'Item 9: currentStock must be at least 0',
      'Item 10: sku is required',
      'Item 11: name must be text; description is too long (max 5000)',
    ]);
    const created = await t.db('items').whereIn('sku', ['IMP-1', 'IMP-7']).orderBy('sku');
    expect(created.map((i) => [i.sku, i.price, i.current_stock, i.minimum_stock, i.created_by, i.is_active])).toEqual([
      ['IMP-1', '1.25', '4.00', '2.00', as.ids.user, true],
      ['IMP-7', '3.00', '0.00', '0.00', as.ids.user, true],
    ]);
    expect((await movementsOf(t.db, created[0].id)).map((m) => [m.type, m.quantity, m.reason])).toEqual([
      ['in', '4.00', 'Initial stock (bulk import)'],
    ]);
    expect(await movementsOf(t.db, created[1].id)).toHaveLength(0);
  });

  it('200 with every item failing still answers 200', async () => {
    const res = await as.user
      .post('/api/items/bulk-import')
      .send({ items: [row('IMP-X', { categoryName: 'Nope' })] })
      .expect(200);
    expect(res.body).toEqual({ successful: 0, failed: 1, errors: ["Item 1: category 'Nope' does not exist"] });
  });

  it('200 when the database refuses one item of a chunk: that item fails, the rest of the chunk is saved', async () => {
    await t.db.raw(`ALTER TABLE items ADD CONSTRAINT test_refuse_explode CHECK (name <> 'EXPLODE')`);
    try {
      const res = await as.user
        .post('/api/items/bulk-import')
        .send({ items: [row('CHUNK-1'), row('CHUNK-2', { name: 'EXPLODE' }), row('CHUNK-3')] })
        .expect(200);
      expect(res.body).toMatchObject({ successful: 2, failed: 1 });
      expect(res.body.errors).toEqual([expect.stringMatching(/^Item 2: could not be saved/)]);
      expect(
        (await t.db('items').whereIn('sku', ['CHUNK-1', 'CHUNK-2', 'CHUNK-3']).orderBy('sku')).map((i) => i.sku),
      ).toEqual(['CHUNK-1', 'CHUNK-3']);
    } finally {
      await t.db.raw('ALTER TABLE items DROP CONSTRAINT test_refuse_explode');
    }
  });

  it('200 imports more than one chunk (1,200 items) in one request', async () => {
    const items = Array.from({ length: 1200 }, (_, i) => row(`BULK-${i}`, { currentStock: i % 3 }));
    const res = await as.manager.post('/api/items/bulk-import').send({ items }).expect(200);
    expect(res.body).toEqual({ successful: 1200, failed: 0, errors: [] });
    const [{ count }] = await t
      .db('stock_movements')
      .where('item_sku', 'like', 'BULK-%')
      .count<{ count: number }[]>('* as count');
    expect(count).toBe(800);
  });
});
