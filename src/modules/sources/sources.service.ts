import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { isUniqueViolation } from '../../db/pg-errors';
import { sql, toRaw } from '../../db/sql';
import { Conflict, NotFound } from '../../http/errors';
import { findItemsForLines, itemRefs } from '../items/items.queries';
import type { LinkItem, UpdateItemSource } from './sources.schemas';

export type ItemSourceRow = {
  id: number;
  supplier_id: string;
  item_id: number;
  price: string;
  notes: string | null;
  supplier_sku: string | null;
  preferred: boolean;
  created_at: Date;
  item_name: string;
  item_sku: string;
  item_is_active: boolean;
};

/** A source found by the supplier's part number: which item the supplier sells under it. */
export type SourceBySupplierSku = { supplierSku: string; itemId: number; itemName: string; itemSku: string };

/** What an order from an invoice records about an item it bought: the supplier's price and part number. */
export type InvoicedPrice = { itemId: number; price: string; supplierSku: string | null };

const lowered = (text: string) => text.toLowerCase();

/** Item-supplier links ("item sources"). */
export function sourcesService(db: Db) {
  const withItem = () =>
    db('item_sources as s')
      .join(toRaw(db, itemRefs('i')), 'i.item_id', 's.item_id')
      .select<ItemSourceRow[]>('s.*', 'i.item_name', 'i.item_sku', 'i.item_is_active');

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

  const violated = (err: unknown, constraint: string) =>
    isUniqueViolation(err) && (err as { constraint?: string }).constraint === constraint;

  /** The 409 of a refused write: another preferred mark, or a part number another item of the supplier has. */
  async function clash(
    err: unknown,
    supplierSku: { supplierId: string; value: string | null | undefined },
  ): Promise<unknown> {
    if (violated(err, 'item_sources_one_preferred'))
      return Conflict('Another source of this item was marked preferred at the same time; try again');
    if (!violated(err, 'item_sources_supplier_sku') || !supplierSku.value) return err;
    const holder = await withItem()
      .where('s.supplier_id', supplierSku.supplierId)
      .whereRaw('lower(s.supplier_sku) = lower(?)', [supplierSku.value])
      .first();
    return Conflict(
      `Supplier part number '${supplierSku.value}' is already used for item '${holder?.item_name ?? 'another item'}' of supplier '${supplierSku.supplierId}'`,
    );
  }

  return {
    get,

    /** The item's sources, in the order they were linked (the suppliers module's sourcesOfItem names and orders them by supplier). */
    listForItem(itemId: number): Promise<ItemSourceRow[]> {
      return withItem().where('s.item_id', itemId).orderBy('s.id');
    },

    listForSupplier(supplierId: string): Promise<ItemSourceRow[]> {
      return withItem().where('s.supplier_id', supplierId).orderBy('i.item_name').orderBy('s.id');
    },

    /**
     * Links an item to a supplier; the caller has checked the supplier exists. A link made
     * preferred unmarks the item's other sources in the same transaction.
     */
    async link(supplierId: string, input: LinkItem): Promise<ItemSourceRow> {
      const item = (await findItemsForLines(db, [input.itemId])).get(input.itemId);
      if (!item) throw NotFound('Item not found');
      const id = await transaction(db, async (trx) => {
        if (input.preferred) await unmarkOthers(trx, input.itemId, null);
        const [row] = await trx('item_sources')
          .insert({
            supplier_id: supplierId,
            item_id: input.itemId,
            price: input.price,
            notes: input.notes ?? null,
            supplier_sku: input.supplierSku ?? null,
            preferred: input.preferred ?? false,
          })
          .onConflict(['supplier_id', 'item_id'])
          .ignore()
          .returning('id');
        if (!row) throw Conflict(`Item '${item.name}' is already linked to supplier '${supplierId}'`);
        return row.id as number;
      }).catch(async (err: unknown) => {
        throw await clash(err, { supplierId, value: input.supplierSku });
      });
      return get(id);
    },

    /**
     * Changes a link's price, notes or preferred mark (partial). Marking it preferred unmarks the
     * item's other sources in the same transaction; false just unmarks it.
     */
    async update(id: number, input: UpdateItemSource): Promise<ItemSourceRow> {
      let supplierId = '';
      await transaction(db, async (trx) => {
        const current = await trx('item_sources')
          .where({ id })
          .first<{ item_id: number; supplier_id: string } | undefined>('item_id', 'supplier_id');
        if (!current) throw NotFound('Item source not found');
        supplierId = current.supplier_id;
        if (input.preferred === true) await unmarkOthers(trx, current.item_id, id);
        const changes: Record<string, unknown> = {};
        if (input.price !== undefined) changes.price = input.price;
        if (input.notes !== undefined) changes.notes = input.notes;
        if (input.supplierSku !== undefined) changes.supplier_sku = input.supplierSku;
        if (input.preferred !== undefined) changes.preferred = input.preferred;
        if (Object.keys(changes).length > 0) await trx('item_sources').where({ id }).update(changes);
      }).catch(async (err: unknown) => {
        throw await clash(err, { supplierId, value: input.supplierSku });
      });
      return get(id);
    },

    /**
     * The supplier's sources whose part number is one of these (any case), keyed by the lowered
     * part number: one index lookup (item_sources_supplier_sku).
     */
    /** The supplier's own part numbers of these items, by item id (items without one are left out): what a purchase order prints. */
    async supplierSkusOf(supplierId: string, itemIds: number[]): Promise<Map<number, string>> {
      const rows = await db('item_sources')
        .where({ supplier_id: supplierId })
        .whereIn('item_id', itemIds)
        .whereNotNull('supplier_sku')
        .select<{ item_id: number; supplier_sku: string }[]>('item_id', 'supplier_sku');
      return new Map(rows.map((row) => [row.item_id, row.supplier_sku]));
    },

    async findBySupplierSkus(supplierId: string, supplierSkus: string[]): Promise<Map<string, SourceBySupplierSku>> {
      const wanted = [...new Set(supplierSkus.map(lowered))];
      if (wanted.length === 0) return new Map();
      const rows = await withItem()
        .where('s.supplier_id', supplierId)
        .whereRaw('lower(s.supplier_sku) = ANY(?::text[])', [wanted]);
      return new Map(
        rows.map((r) => [
          lowered(r.supplier_sku!),
          { supplierSku: r.supplier_sku!, itemId: r.item_id, itemName: r.item_name, itemSku: r.item_sku },
        ]),
      );
    },

    /**
     * An order from the supplier's invoice: each item it bought gets (or keeps) a source of this
     * supplier at the invoice's price, with the line's part number when it had one (a part number
     * another item of the supplier already has is left off rather than refused). One statement in
     * the caller's transaction; a later line of the same item wins.
     */
    async recordInvoicePrices(supplierId: string, prices: InvoicedPrice[]): Promise<void> {
      const byItem = new Map(prices.map((p) => [p.itemId, p]));
      const partNumbers = new Set<string>();
      const rows = [...byItem.values()].map((p) => {
        const partNumber = p.supplierSku && !partNumbers.has(lowered(p.supplierSku)) ? p.supplierSku : null;
        if (partNumber) partNumbers.add(lowered(partNumber));
        return { ...p, supplierSku: partNumber };
      });
      if (rows.length === 0) return;
      await toRaw(
        db,
        sql`INSERT INTO item_sources AS s (supplier_id, item_id, price, supplier_sku)
            SELECT ${supplierId}, l.item_id, l.price,
                   CASE WHEN NOT EXISTS (SELECT 1 FROM item_sources o
                                          WHERE o.supplier_id = ${supplierId} AND lower(o.supplier_sku) = lower(l.supplier_sku) AND o.item_id <> l.item_id)
                        THEN l.supplier_sku END
              FROM unnest(${rows.map((r) => r.itemId)}::int[], ${rows.map((r) => r.price)}::numeric[], ${rows.map((r) => r.supplierSku)}::text[])
                   AS l(item_id, price, supplier_sku)
            ON CONFLICT (supplier_id, item_id)
            DO UPDATE SET price = EXCLUDED.price, supplier_sku = coalesce(EXCLUDED.supplier_sku, s.supplier_sku)`,
      );
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
