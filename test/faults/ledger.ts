import type { Knex } from 'knex';

/**
 * What must hold after any fault: every sale has its lines and, per item, exactly its lines'
 * quantities as 'out' movements naming it; no movement names a sale that does not exist; every
 * item's stock is the sum of its movements (opening stock went through the ledger). Each list
 * is empty when the ledger reconciles.
 */
export async function ledgerProblems(db: Knex): Promise<Record<string, unknown[]>> {
  const salesWithoutLines = await db('sales as s')
    .whereNotExists(db('sale_items as l').whereRaw('l.sale_id = s.id'))
    .pluck('s.sale_id');
  const { rows: linesWithoutMovements } = await db.raw(
    `SELECT s.sale_id, l.item_id, l.sold, coalesce(m.moved, 0) AS moved
       FROM sales s
       JOIN (SELECT sale_id, item_id, sum(quantity) AS sold FROM sale_items GROUP BY sale_id, item_id) l ON l.sale_id = s.id
       LEFT JOIN (SELECT reference_id, item_id, -sum(quantity) AS moved FROM stock_movements
                   WHERE reference_type = 'sale' GROUP BY reference_id, item_id) m
              ON m.reference_id = s.sale_id AND m.item_id = l.item_id
      WHERE coalesce(m.moved, 0) <> l.sold`,
  );
  const { rows: movementsWithoutSale } = await db.raw(
    `SELECT m.id, m.reference_id FROM stock_movements m
      WHERE m.reference_type = 'sale' AND NOT EXISTS (SELECT 1 FROM sales s WHERE s.sale_id = m.reference_id)`,
  );
  const { rows: stockDrift } = await db.raw(
    `SELECT i.id, i.current_stock, coalesce(sum(m.quantity), 0) AS moved
       FROM items i LEFT JOIN stock_movements m ON m.item_id = i.id
      GROUP BY i.id HAVING i.current_stock <> coalesce(sum(m.quantity), 0)`,
  );
  return { salesWithoutLines, linesWithoutMovements, movementsWithoutSale, stockDrift };
}

export const NO_PROBLEMS = {
  salesWithoutLines: [],
  linesWithoutMovements: [],
  movementsWithoutSale: [],
  stockDrift: [],
};

/** Connections of the service's database that sit idle inside a transaction. */
export async function idleInTransaction(db: Knex): Promise<unknown[]> {
  const { rows } = await db.raw(
    `SELECT pid, state, query, now() - state_change AS for FROM pg_stat_activity
      WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`,
  );
  return rows;
}
