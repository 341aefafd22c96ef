import type { Db } from '../../db/knex';
import { Conflict, NotFound } from '../../http/errors';
import { findItemsForLines } from '../items/items.lookup';
import type { LinkItem } from './sources.schemas';

export type ItemSourceRow = {
  id: number;
  supplier_id: string;
  item_id: number;
  price: string;
  notes: string | null;
  created_at: Date;
  item_name: string;
  item_sku: string;
  item_is_active: boolean;
};

/** Item-supplier links ("item sources"). */
export function sourcesService(db: Db) {
  const withItem = () =>
    db('item_sources as s')
      .join('items as i', 'i.id', 's.item_id')
      .select<ItemSourceRow[]>('s.*', 'i.name as item_name', 'i.sku as item_sku', 'i.is_active as item_is_active');

  async function get(id: number): Promise<ItemSourceRow> {
    const row = await withItem().where('s.id', id).first();
    if (!row) throw NotFound('Item source not found');
    return row;
  }

  return {
    get,

    /** The suppliers an item can be bought from, by supplier name. */
    listForItem(itemId: number): Promise<(ItemSourceRow & { supplier_name: string })[]> {
      return withItem().join('suppliers as sup', 'sup.id', 's.supplier_id').select('sup.name as supplier_name').where('s.item_id', itemId).orderBy('sup.name').orderBy('s.id');
    },

    listForSupplier(supplierId: string): Promise<ItemSourceRow[]> {
      return withItem().where('s.supplier_id', supplierId).orderBy('i.name').orderBy('s.id');
    },

    /** Links an item to a supplier; the caller has checked the supplier exists. */
    async link(supplierId: string, input: LinkItem): Promise<ItemSourceRow> {
      const item = (await findItemsForLines(db, [input.itemId])).get(input.itemId);
      if (!item) throw NotFound('Item not found');
      const [row] = await db('item_sources')
        .insert({ supplier_id: supplierId, item_id: input.itemId, price: input.price, notes: input.notes ?? null })
        .onConflict(['supplier_id', 'item_id'])
        .ignore()
        .returning('id');
      if (!row) throw Conflict(`Item '${item.name}' is already linked to supplier '${supplierId}'`);
      return get(row.id);
    },

    /** Links when not linked yet (used when orders create items); returns whether a link was made. */
    async ensureLink(supplierId: string, itemId: number, price: string, notes: string | null): Promise<boolean> {
      const rows = await db('item_sources')
        .insert({ supplier_id: supplierId, item_id: itemId, price, notes })
        .onConflict(['supplier_id', 'item_id'])
        .ignore()
        .returning('id');
      return rows.length > 0;
    },

    async remove(id: number): Promise<void> {
      const deleted = await db('item_sources').where({ id }).delete();
      if (deleted === 0) throw NotFound('Item source not found');
    },
  };
}
