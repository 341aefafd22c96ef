import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as itemStockFiguresMigration from '../migrations/20261128020000_item_stock_figures';
import { migrateLatest } from '../src/db/migrate';
import { sql, toRaw } from '../src/db/sql';
import { dueForCount, lowStock, lowStockCounts, lowStockQuery } from '../src/modules/items/items.queries';
import { stockCountFigures } from '../src/modules/stocktakes/stocktakes.queries';
import { appWithAdmin, NO_FITTING_CLIENT } from './backup-helpers';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildItem, TEST_PASSWORD } from './helpers/factories';
import { refund, sell } from './helpers/finance-factories';
import { agentsByRole, buildStockedItem, itemCountDrift, type Agents } from './helpers/inventory-factories';
import { buildOrder, buildSupplier } from './helpers/purchasing-factories';
import { buildChargeCode } from './helpers/sales-factories';

/*
 * Issue 34: the dashboard's figures are kept by triggers on items (item_stock_figures,
 * item_count_days, and item_counts before them). After every kind of change, the kept figures
 * equal a straight recount over the items, and every endpoint that reads them answers as the
 * straight query over the whole catalogue answered before they were kept.
 */

const MIGRATION = '20261128020000_item_stock_figures.ts';

/** The kept per-category and per-day figures against a recount of the items by the one rule; [] when they agree. */
async function keptFigureDrift(db: Knex): Promise<unknown[]> {
  const { rows: categories } = await toRaw<{ rows: unknown[] }>(
    db,
    sql`SELECT coalesce(r.category_id, k.category_id) AS category_id, r.low, r.out, r.value, k.low AS kept_low, k.out AS kept_out, k.value AS kept_value
          FROM (SELECT i.category_id, count(*) FILTER (WHERE ${lowStock('i')}) AS low,
                       count(*) FILTER (WHERE ${lowStock('i')} AND i.current_stock = 0) AS out,
                       coalesce(sum(i.price * i.current_stock) FILTER (WHERE i.is_active), 0) AS value
                  FROM items i GROUP BY i.category_id) r
          FULL JOIN (SELECT category_id, sum(low_stock) AS low, sum(out_of_stock) AS out, sum(stock_value) AS value
                       FROM item_stock_figures GROUP BY category_id) k ON k.category_id = r.category_id
         WHERE coalesce(r.low, 0) <> coalesce(k.low, 0) OR coalesce(r.out, 0) <> coalesce(k.out, 0)
            OR coalesce(r.value, 0) <> coalesce(k.value, 0)`,
  );
  const { rows: days } = await db.raw(
    `SELECT coalesce(r.day, k.day) AS day, r.items, k.items AS kept_items
       FROM (SELECT coalesce((last_counted_at AT TIME ZONE 'UTC')::date, '-infinity'::date) AS day, count(*) AS items
               FROM items WHERE is_active GROUP BY 1) r
       FULL JOIN (SELECT day, sum(items) AS items FROM item_count_days GROUP BY day) k ON k.day = r.day
      WHERE coalesce(r.items, 0) <> coalesce(k.items, 0)`,
  );
  return [...categories, ...days, ...(await itemCountDrift(db))];
}

/** What the endpoints answered when they read every item per request (the statements before issue 34). */
async function straightAnswers(db: Knex) {
  const { rows: stats } = await toRaw<{ rows: { totalItems: number; lowStockItems: number; totalValue: number }[] }>(
    db,
    sql`SELECT count(*)::int AS "totalItems", count(*) FILTER (WHERE ${lowStock('i')})::int AS "lowStockItems",
               coalesce(sum(i.price * i.current_stock), 0)::numeric(20,2)::float8 AS "totalValue"
          FROM items i WHERE i.is_active`,
  );
  const { rows: categories } = await db.raw(
    `SELECT json_build_object('id', c.id, 'name', c.name, 'color', c.color) AS category, count(i.id)::int AS "itemCount",
            coalesce(sum(i.price * i.current_stock), 0)::numeric(20,2)::float8 AS "totalValue"
       FROM categories c LEFT JOIN items i ON i.category_id = c.id AND i.is_active
      GROUP BY c.id ORDER BY c.name, c.id`,
  );
  const overdue = async (days: number) =>
    (
      await toRaw<{ rows: { n: number }[] }>(
        db,
        sql`SELECT count(*)::int AS n FROM items i WHERE ${dueForCount('i', days)}`,
      )
    ).rows[0].n;
  const { rows: stock } = await toRaw<{ rows: { low: number; out: number }[] }>(
    db,
    sql`SELECT count(*) FILTER (WHERE i.current_stock > 0)::int AS low, count(*) FILTER (WHERE i.current_stock = 0)::int AS out
          FROM items i WHERE ${lowStock('i')}`,
  );
  return { stats: stats[0], categories, overdue, stock: stock[0] };
}

/** The kept figures agree with the recount, and the dashboard's endpoints answer as the straight queries did. */
async function expectFiguresRight(app: TestApp, agent: Agents['user'], step: string): Promise<void> {
  expect(await keptFigureDrift(app.db), step).toEqual([]);
  const straight = await straightAnswers(app.db);
  const stats = (await agent.get('/api/dashboard/stats').expect(200)).body;
  expect({ ...stats, activeUsers: undefined }, step).toEqual({ ...straight.stats, activeUsers: undefined });
  expect((await agent.get('/api/dashboard/category-stats').expect(200)).body, step).toEqual(straight.categories);
  expect((await agent.get('/api/dashboard/stock-counts').expect(200)).body.itemsOverdue, step).toBe(
    await straight.overdue(90),
  );
  expect(await lowStockCounts(app.db), step).toEqual(straight.stock);
  const lowList = (await agent.get('/api/dashboard/low-stock').expect(200)).body as unknown[];
  expect(lowList.length, step).toBe(straight.stats.lowStockItems);
}

let t: TestApp;
let as: Agents;
let code: string;
let categories: { id: number; name: string }[];
let items: { id: number; category_id: number }[];

beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
  await t.db('user_permissions').insert({ user_id: as.ids.admin, permission: 'sales.refund' }).onConflict().ignore();
  code = (await buildChargeCode(t.db)).code;
  categories = await Promise.all(['Glass', 'Plastic', 'Metal'].map((name) => buildCategory(t.db, { name })));
  items = [];
  // prices with pence, stock with fractions, some low, some out, some inactive, in every category
  for (let i = 0; i < 18; i += 1) {
    const categoryId = categories[i % 3].id;
    const overrides = {
      categoryId,
      price: `${1 + i}.${(i * 37) % 100}`.replace(/\.(\d)$/, '.0$1'),
      minimumStock: i % 4 === 0 ? 5 : 1,
      isActive: i % 7 !== 6,
    };
    items.push(
      i % 5 === 0 ? await buildItem(t.db, overrides) : await buildStockedItem(t.db, `${3 + (i % 6)}.5`, overrides),
    );
  }
}, 60_000);
afterAll(() => t.close());

describe('the kept item figures (issue 34)', () => {
  it('start right: created items, low, out of stock and inactive in every category', async () => {
    const straight = await straightAnswers(t.db);
    expect(straight.stats.lowStockItems).toBeGreaterThan(2);
    expect(straight.stock.out).toBeGreaterThan(0);
    await expectFiguresRight(t, as.user, 'created');
  });

  it('stay right through sales and refunds, several at once over several connections', async () => {
    const active = items.filter((_, i) => i % 7 !== 6 && i % 5 !== 0);
    const sales = await Promise.all(
      active.slice(0, 8).map((item) => sell(as.admin, code, [{ itemId: item.id, quantity: 1 }])),
    );
    await expectFiguresRight(t, as.user, 'sales');
    // one line sold down to zero: out of stock
    const last = active[8];
    const { current_stock: stock } = await t.db('items').where({ id: last.id }).first('current_stock');
    const emptied = await sell(as.admin, code, [{ itemId: last.id, quantity: Number(stock) }]);
    await expectFiguresRight(t, as.user, 'sold out');
    await refund(as.admin, emptied, [{ itemId: last.id, refundQty: 1 }]);
    await Promise.all(
      sales.slice(0, 4).map((sale, i) => refund(as.admin, sale, [{ itemId: active[i].id, refundQty: 1 }])),
    );
    await expectFiguresRight(t, as.user, 'refunds');
    const { rows } = await t.db.raw(
      'SELECT count(*)::int AS striped FROM (SELECT 1 FROM item_stock_figures GROUP BY category_id HAVING count(*) > 1) k',
    );
    expect(rows[0].striped, 'concurrent writers use their own slots').toBeGreaterThan(0);
  });

  it('stay right through a receipt and adjustments (in, out, set)', async () => {
    const supplier = await buildSupplier(t.db);
    const [a, b] = [items[1], items[5]];
    const { order, lines } = await buildOrder(t.db, supplier.id, [
      { itemId: a.id, name: 'A', quantity: '10', unitCost: '1.00' },
      { itemId: b.id, name: 'B', quantity: '4', unitCost: '2.00' },
    ]);
    await as.manager
      .post(`/api/orders/${order.id}/receive`)
      .send({ receivedItems: lines.map((l) => ({ orderItemId: l.id, receivedQuantity: 3 })) })
      .expect(200);
    await expectFiguresRight(t, as.user, 'receipt');
    await as.manager.post(`/api/items/${items[2].id}/stock`).send({ type: 'in', quantity: 7 }).expect(200);
    await as.manager.post(`/api/items/${items[3].id}/stock`).send({ type: 'out', quantity: 1 }).expect(200);
    await as.manager
      .post(`/api/items/${items[4].id}/stock`)
      .send({ type: 'adjustment', quantity: 0, reason: 'counted none' })
      .expect(200);
    await expectFiguresRight(t, as.user, 'adjustments');
  });

  it('stay right through edits: price, minimum stock, category, deactivation and reactivation', async () => {
    const [a, b, c] = [items[7], items[8], items[9]];
    await as.manager.put(`/api/items/${a.id}`).send({ price: '123.45' }).expect(200);
    await as.manager.put(`/api/items/${b.id}`).send({ minimumStock: 1000 }).expect(200);
    await as.manager
      .put(`/api/items/${c.id}`)
      .send({ categoryId: categories[(categories.findIndex((x) => x.id === c.category_id) + 1) % 3].id })
      .expect(200);
    await expectFiguresRight(t, as.user, 'edits');
    await as.manager.delete(`/api/items/${b.id}`).expect(204);
    await expectFiguresRight(t, as.user, 'deactivated');
    await as.manager.put(`/api/items/${b.id}`).send({ isActive: true }).expect(200);
    await expectFiguresRight(t, as.user, 'reactivated');
  });

  it('stay right through every bulk action and an import', async () => {
    const ids = (range: number[]) => range.map((i) => items[i].id);
    const steps: [string, Record<string, unknown>][] = [
      ['set-inactive', { itemIds: ids([10, 11, 12]) }],
      ['set-active', { itemIds: ids([10, 6]) }],
      ['change-category', { itemIds: ids([11, 13, 14]), categoryId: categories[0].id }],
      ['set-stock-zero', { itemIds: ids([13, 15]) }],
    ];
    for (const [action, body] of steps) {
      await as.manager.post(`/api/items/bulk/${action}`).send(body).expect(200);
      await expectFiguresRight(t, as.user, action);
    }
    const row = (sku: string, currentStock: number, minimumStock: number) => ({
      name: `Imported ${sku}`,
      sku,
      categoryName: categories[1].name,
      price: '2.75',
      currentStock,
      minimumStock,
    });
    const imported = await as.manager
      .post('/api/items/bulk-import')
      .send({ items: [row('FIG-IMP-1', 4, 2), row('FIG-IMP-2', 0, 1), row('FIG-IMP-3', 1, 3)] })
      .expect(200);
    expect(imported.body.successful).toBe(3);
    await expectFiguresRight(t, as.user, 'import');
    const doomed = await buildItem(t.db, {
      categoryId: categories[2].id,
      price: '9.99',
      currentStock: 0,
      minimumStock: 2,
    });
    await expectFiguresRight(t, as.user, 'created to delete');
    await as.manager
      .post('/api/items/bulk/delete')
      .send({ itemIds: [doomed.id] })
      .expect(200);
    await expectFiguresRight(t, as.user, 'bulk delete');
    const single = await buildItem(t.db, {
      categoryId: categories[0].id,
      price: '4.00',
      currentStock: 0,
      minimumStock: 3,
    });
    await as.admin.delete(`/api/items/${single.id}/safe`).expect(204);
    await expectFiguresRight(t, as.user, 'delete');
  });

  it('stay right when a stocktake is posted, and the items due for a count follow the cut-off to the second', async () => {
    const counted = items.filter((_, i) => i % 7 !== 6).slice(0, 6);
    const st = (
      await as.manager
        .post('/api/stocktakes')
        .send({ scope: { itemIds: counted.map((i) => i.id) } })
        .expect(201)
    ).body;
    for (const item of counted.slice(0, 4)) {
      const { sku, current_stock: stock } = await t.db('items').where({ id: item.id }).first('sku', 'current_stock');
      await as.manager
        .post(`/api/stocktakes/${st.id}/counts`)
        .send({ code: sku, quantity: Math.max(0, Number(stock) - 1), mode: 'set' })
        .expect(200);
    }
    await as.manager.post(`/api/stocktakes/${st.id}/post`).send({}).expect(200);
    await expectFiguresRight(t, as.user, 'stocktake posted');

    // counts spread around the cut-off: just inside and outside 90 days, at midnight UTC, and long ago
    const now = Date.now();
    const DAY = 86_400_000;
    const midnight = Math.floor((now - 90 * DAY) / DAY) * DAY;
    const times = [
      now - 90 * DAY + 60_000,
      now - 90 * DAY - 60_000,
      midnight,
      midnight - 1,
      midnight + 1,
      now - 400 * DAY,
      now - DAY,
    ];
    const active = await t.db('items').where({ is_active: true }).orderBy('id').pluck('id');
    for (const [i, at] of times.entries())
      await t
        .db('items')
        .where({ id: active[i] })
        .update({ last_counted_at: new Date(at) });
    await expectFiguresRight(t, as.user, 'counted at the edges');
    const straight = await straightAnswers(t.db);
    for (const days of [0, 1, 30, 89, 90, 91, 365, 1000])
      expect((await stockCountFigures(t.db, days)).itemsOverdue, `${days} days`).toBe(await straight.overdue(days));
  });

  it('stay right through an archive purge (sales and movements go, items stay)', async () => {
    await t.db('sales').update({ created_at: t.db.raw(`created_at - interval '400 days'`) });
    const archive = (
      await as.admin
        .post('/api/archives/create')
        .send({ ageThresholdDays: 365, includeRecordTypes: ['sales', 'stock_movements', 'orders'] })
        .expect(201)
    ).body;
    await as.admin.delete(`/api/archives/${archive.id}/purge-data`).expect(200);
    await expectFiguresRight(t, as.user, 'archive purge');
  });

  it('are reset by TRUNCATE and start again from the next item', async () => {
    const other = await testApp();
    try {
      const a = await agentsByRole(other);
      await buildStockedItem(other.db, 3, { minimumStock: 5, price: '1.10' });
      await other.db.raw('TRUNCATE items CASCADE');
      await expectFiguresRight(other, a.user, 'truncated');
      await buildStockedItem(other.db, 0, { minimumStock: 1, price: '2.20' });
      await expectFiguresRight(other, a.user, 'after truncate');
    } finally {
      await other.close();
    }
  });
});

describe.skipIf(NO_FITTING_CLIENT)('the kept item figures across a restore', () => {
  it('a restored backup brings its own figures back with its items', async () => {
    const { app, admin, adminEmail } = await appWithAdmin();
    const cat = await buildCategory(app.db);
    const a = await buildStockedItem(app.db, 10, { categoryId: cat.id, price: '3.30', minimumStock: 2 });
    await buildStockedItem(app.db, 1, { categoryId: cat.id, price: '7.00', minimumStock: 4 });
    const { filename } = (await admin.post('/api/backups').expect(201)).body;
    // changes after the backup: gone with the restore, and so are their figures
    await admin.post(`/api/items/${a.id}/stock`).send({ type: 'out', quantity: 9 }).expect(200);
    await buildStockedItem(app.db, 0, { categoryId: cat.id, price: '1.00', minimumStock: 1 });
    await admin.post(`/api/backups/${filename}/restore`).expect(200);
    await admin.post('/api/auth/login').send({ email: adminEmail, password: TEST_PASSWORD }).expect(200);
    await expectFiguresRight(app, admin, 'restored');
    expect((await admin.get('/api/dashboard/stats').expect(200)).body).toMatchObject({
      totalItems: 2,
      lowStockItems: 1,
    });
  });

  it('a backup older than the kept figures is restored with figures counted from its items', async () => {
    const { app, admin, adminEmail } = await appWithAdmin();
    const cat = await buildCategory(app.db);
    await buildStockedItem(app.db, 5, { categoryId: cat.id, price: '2.00', minimumStock: 1 });
    // the database as it was before the migration, and a backup of it with items it never counted
    await itemStockFiguresMigration.down(app.db);
    await app.db('knex_migrations').where({ name: MIGRATION }).delete();
    await buildItem(app.db, { categoryId: cat.id, price: '5.50', currentStock: 0, minimumStock: 2 });
    await buildItem(app.db, { categoryId: cat.id, price: '1.25', currentStock: 8, minimumStock: 9 });
    const { filename } = (await admin.post('/api/backups').expect(201)).body;
    await migrateLatest(app.db);
    await buildStockedItem(app.db, 50, { categoryId: cat.id, price: '100.00' });

    expect((await admin.post(`/api/backups/${filename}/restore`).expect(200)).body.migrationsApplied).toEqual([
      MIGRATION,
    ]);
    await admin.post('/api/auth/login').send({ email: adminEmail, password: TEST_PASSWORD }).expect(200);
    await expectFiguresRight(app, admin, 'older backup restored');
    expect((await admin.get('/api/dashboard/stats').expect(200)).body).toMatchObject({
      totalItems: 3,
      lowStockItems: 2,
      totalValue: 20,
    });
  });
});

describe('the low-stock rule and its partial index', () => {
  it('the predicate of items_low_stock and of the kept low-stock figures is the lowStock rule, as PostgreSQL reads both', async () => {
    // the rule as PostgreSQL stores it, read back from a view over it (alias dropped), against the index's predicate
    const trx = await t.db.transaction();
    try {
      await toRaw(trx, sql`CREATE TEMP VIEW low_stock_rule AS SELECT i.id FROM items i WHERE ${lowStock('i')}`);
      const { rows } = await trx.raw(
        `SELECT pg_get_viewdef('low_stock_rule'::regclass) AS rule,
                (SELECT pg_get_expr(x.indpred, x.indrelid) FROM pg_index x WHERE x.indexrelid = 'items_low_stock'::regclass) AS predicate,
                pg_get_functiondef('item_stock_figures_after_update'::regproc) AS figures`,
      );
      const { rule, predicate, figures } = rows[0] as { rule: string; predicate: string; figures: string };
      const where = /WHERE\s+([\s\S]*?);?\s*$/.exec(rule)![1].replace(/\bi\./g, '').trim();
      expect(where).toBe(predicate);
      expect(predicate).toBe('(is_active AND ((current_stock - minimum_stock) <= (0)::numeric))');
      // the trigger counts by the same expression
      expect(figures).toContain('is_active AND current_stock - minimum_stock <= 0');
    } finally {
      await trx.rollback();
    }
    // and the rule's lists answer what the kept count says
    expect((await lowStockQuery(t.db)).length).toBe((await straightAnswers(t.db)).stats.lowStockItems);
  });
});
