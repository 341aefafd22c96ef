import type { Db } from '../../db/knex';
import { inTransaction } from '../../db/knex';
import { isUniqueViolation } from '../../db/pg-errors';
import { Conflict, NotFound } from '../../http/errors';
import { findItemsForLines } from '../items/items.lookup';
import type { LinkItem, UpdateItemSource } from './sources.schemas';

export type ItemSourceRow = {
  id: number;
  supplier_id: string;
  item_id: number;
  price: string;
  notes: string | null;
  preferred: boolean;
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

  /**
   * Makes the source the item's one preferred source: the item's sources are locked (FOR UPDATE, by
   * id) and the others unmarked first, in the caller's transaction. Two concurrent marks on one item
   * queue on those locks; the partial unique index item_sources_one_preferred backs it (409).
   */
  async function unmarkOthers(trx: Db, itemId: number, exceptId: number | null): Promise<void> {
    await trx('item_sources').where({ item_id: itemId }).orderBy('id').forUpdate().select('id');
    const others = trx('item_sources').where({ item_id: itemId, preferred: true });
    if (exceptId !== null) others.whereNot({ id: exceptId });
    await others.update({ preferred: false });
  }

  const preferredClash = (err: unknown) =>
    isUniqueViolation(err) && (err as { constraint?: string }).constraint === 'item_sources_one_preferred'
      ? Conflict('Another source of this item was marked preferred at the same time; try again')
      : err;

  return {
    get,

    /** The suppliers an item can be bought from, by supplier name. */
    listForItem(itemId: number): Promise<(ItemSourceRow & { supplier_name: string })[]> {
      return withItem().join('suppliers as sup', 'sup.id', 's.supplier_id').select('sup.name as supplier_name').where('s.item_id', itemId).orderBy('sup.name').orderBy('s.id');
    },

    listForSupplier(supplierId: string): Promise<ItemSourceRow[]> {
      return withItem().where('s.supplier_id', supplierId).orderBy('i.name').orderBy('s.id');
    },

    /**
     * Links an item to a supplier; the caller has checked the supplier exists. A link made
     * preferred unmarks the item's other sources in the same transaction.
     */
    async link(supplierId: string, input: LinkItem): Promise<ItemSourceRow> {
      const item = (await findItemsForLines(db, [input.itemId])).get(input.itemId);
      if (!item) throw NotFound('Item not found');
      const id = await inTransaction(db, async (trx) => {
        if (input.preferred) await unmarkOthers(trx, input.itemId, null);
        const [row] = await trx('item_sources')
          .insert({ supplier_id: supplierId, item_id: input.itemId, price: input.price, notes: input.notes ?? null, preferred: input.preferred ?? false })
          .onConflict(['supplier_id', 'item_id'])
          .ignore()
          .returning('id');
        if (!row) throw Conflict(`Item '${item.name}' is already linked to supplier '${supplierId}'`);
        return row.id as number;
      }).catch((err: unknown) => {
        throw preferredClash(err);
      });
      return get(id);
    },

    /**
     * Changes a link's price, notes or preferred mark (partial). Marking it preferred unmarks the
     * item's other sources in the same transaction; false just unmarks it.
     */
    async update(id: number, input: UpdateItemSource): Promise<ItemSourceRow> {
      await inTransaction(db, async (trx) => {
        const current = await trx('item_sources').where({ id }).first<{ item_id: number } | undefined>('item_id');
        if (!current) throw NotFound('Item source not found');
        if (input.preferred === true) await unmarkOthers(trx, current.item_id, id);
        const changes: Record<string, unknown> = {};
        if (input.price !== undefined) changes.price = input.price;
        if (input.notes !== undefined) changes.notes = input.notes;
        if (input.preferred !== undefined) changes.preferred = input.preferred;
        if (Object.keys(changes).length > 0) await trx('item_sources').where({ id }).update(changes);
      }).catch((err: unknown) => {
        throw preferredClash(err);
      });
      return get(id);
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
