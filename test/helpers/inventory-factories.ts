import type { Knex } from 'knex';
import type supertest from 'supertest';
import { changeStock } from '../../src/modules/stock-movements/stock-movements.ledger';
import { itemStock } from '../../src/modules/items/items.queries';
import type { TestApp } from './app';
import { buildItem, buildUser } from './factories';

export type Agents = {
  admin: supertest.Agent;
  manager: supertest.Agent;
  user: supertest.Agent;
  ids: { admin: string; manager: string; user: string };
};

/** One signed-in agent per role. */
export async function agentsByRole(t: TestApp): Promise<Agents> {
  const [admin, manager, user] = await Promise.all([
    buildUser(t.db, { role: 'admin' }),
    buildUser(t.db, { role: 'manager' }),
    buildUser(t.db, { role: 'user' }),
  ]);
  const [a, m, u] = await Promise.all([t.loginAs(admin), t.loginAs(manager), t.loginAs(user)]);
  return { admin: a, manager: m, user: u, ids: { admin: admin.id, manager: manager.id, user: user.id } };
}

/** An item whose opening stock went through the ledger (an 'in' movement), as the API does it. */
export async function buildStockedItem(
  db: Knex,
  stock: number | string,
  overrides: Parameters<typeof buildItem>[1] = {},
): Promise<Awaited<ReturnType<typeof buildItem>>> {
  const item = await buildItem(db, { ...overrides, currentStock: 0 });
  if (Number(stock) > 0)
    await changeStock(db, itemStock, {
      itemId: item.id,
      type: 'in',
      quantity: stock,
      reason: 'Initial stock',
      performedBy: null,
    });
  return item;
}

export const stockOf = async (db: Knex, id: number): Promise<string> =>
  (await db('items').where({ id }).first('current_stock')).current_stock as string;

export const movementsOf = (db: Knex, id: number) => db('stock_movements').where({ item_id: id }).orderBy('id');

/** item_counts (kept by triggers) against a real count, per category; [] when they agree. */
export async function itemCountDrift(db: Knex): Promise<unknown[]> {
  const { rows } = await db.raw(
    `SELECT coalesce(r.category_id, c.category_id) AS category_id, r.active, r.inactive, c.active AS kept_active, c.inactive AS kept_inactive
       FROM (SELECT category_id, count(*) FILTER (WHERE is_active) AS active, count(*) FILTER (WHERE NOT is_active) AS inactive
               FROM items GROUP BY category_id) r
       FULL JOIN item_counts c ON c.category_id = r.category_id
      WHERE coalesce(r.active, 0) <> coalesce(c.active, 0) OR coalesce(r.inactive, 0) <> coalesce(c.inactive, 0)`,
  );
  return rows;
}
