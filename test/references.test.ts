import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countReferences, referenceCountersOf, type ReferencedTable } from '../src/db/references';
import { testApp, type TestApp } from './helpers/app';
import { buildItem } from './helpers/factories';

/*
 * Issue 41: a deletion check asks each owner to count its own rows pointing at the record (the
 * counters composed in src/owners.ts). The catalogue keeps the owners honest: every single-column
 * foreign key to a guarded table must be counted by some owner, or a delete could be refused by
 * the database without a reason, or allowed where it should not be.
 */

let t: TestApp;

beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const GUARDED: ReferencedTable[] = ['items', 'categories', 'suppliers', 'users'];

async function foreignKeysTo(table: string): Promise<string[]> {
  const { rows } = await t.db.raw<{ rows: { name: string }[] }>(
    `SELECT cl.relname || '.' || att.attname AS name
       FROM pg_constraint con
       JOIN pg_class cl ON cl.oid = con.conrelid
       JOIN pg_attribute att ON att.attrelid = con.conrelid AND att.attnum = con.conkey[1]
      WHERE con.contype = 'f' AND con.confrelid = ?::regclass AND array_length(con.conkey, 1) = 1`,
    [table],
  );
  return rows.map((r) => r.name).sort();
}

describe('the owners’ reference counters', () => {
  it.each(GUARDED)('count every foreign key to %s, once each', async (table) => {
    const counted = referenceCountersOf(table)
      .map((c) => `${c.table}.${c.column}`)
      .sort();
    expect(counted).toEqual(await foreignKeysTo(table));
  });

  it('count the rows that point at a record, by table and column', async () => {
    const item = await buildItem(t.db);
    await t.db('stock_movements').insert({
      item_id: item.id,
      item_name: item.name,
      item_sku: item.sku,
      type: 'in',
      quantity: '1',
      previous_stock: '0',
      new_stock: '1',
      reason: 'references test',
    });
    expect(await countReferences(t.db, 'items', item.id)).toEqual([
      { table: 'stock_movements', column: 'item_id', count: 1 },
    ]);
  });

  it('find nothing pointing at a record no row names, asking every owner', async () => {
    const nobody: Record<ReferencedTable, string | number> = {
      items: 0,
      categories: 0,
      suppliers: 'no-such-supplier',
      users: '00000000-0000-0000-0000-000000000000',
    };
    for (const table of GUARDED) expect(await countReferences(t.db, table, nobody[table])).toEqual([]);
  });
});
