import type { Db } from '../../db/knex';

export type ItemForLine = {
  id: number;
  name: string;
  sku: string;
  price: string;
  /** the item's own rate, or the default rate when it has none */
  vatRate: string;
  categoryId: number;
  isActive: boolean;
  currentStock: string;
};

/** What other modules (quotes, sales, orders) read about items, without touching items' routes. */
export async function findItemsForLines(db: Db, ids: number[]): Promise<Map<number, ItemForLine>> {
  if (ids.length === 0) return new Map();
  const rows = await db('items as i')
    .whereIn('i.id', [...new Set(ids)])
    .select(
      'i.id',
      'i.name',
      'i.sku',
      'i.price',
      'i.category_id',
      'i.is_active',
      'i.current_stock',
      db.raw(`coalesce(i.vat_rate, (SELECT rate FROM vat_rates WHERE is_default), 0)::numeric(5,4)::text AS vat_rate`),
    );
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        name: r.name,
        sku: r.sku,
        price: r.price,
        vatRate: r.vat_rate,
        categoryId: r.category_id,
        isActive: r.is_active,
        currentStock: r.current_stock,
      },
    ]),
  );
}
