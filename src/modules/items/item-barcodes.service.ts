import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { isUniqueViolation } from '../../db/pg-errors';
import { BadRequest, Conflict, NotFound } from '../../http/errors';
import { checkBarcode, lookupKey, type BarcodeKind, type CheckedBarcode } from '../../lib/barcodes';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { codeOwner, lockCodes, whatSkuClashesWith, type CodeOwner } from './items.queries';

/** An item_barcodes row as read. */
export type BarcodeRow = {
  id: number;
  item_id: number;
  code: string;
  lookup_key: string;
  kind: BarcodeKind;
  note: string | null;
  created_by: string | null;
  created_at: Date;
};

export type NewBarcode = { code: string; kind?: BarcodeKind; note?: string | null };

/** The 409 of a code that already names an item (as its SKU or a barcode). */
export const barcodeClash = (code: string, owner: CodeOwner) =>
  Conflict(`Barcode '${code}' already belongs to ${owner.sku} ${owner.name}`);

/** The 409 of a SKU another item has (as written). */
export const skuClash = (sku: string) => Conflict(`An item with SKU '${sku}' already exists`);

/** The 409 of a SKU that is already another item's barcode. */
export const skuIsBarcode = (sku: string, owner: CodeOwner) =>
  Conflict(`SKU '${sku}' already belongs to ${owner.sku} ${owner.name} as a barcode`);

/** A code checked for storing (src/lib/barcodes.ts checkBarcode), or the 400 of a bad one. */
export function checkedBarcode(code: string, kind?: BarcodeKind): CheckedBarcode {
  const checked = checkBarcode(code, kind);
  if ('error' in checked) throw BadRequest(checked.error);
  return checked;
}

/** The audit trail's record of one barcode. */
const audited = (row: BarcodeRow) => ({ id: row.id, code: row.code, kind: row.kind, note: row.note });

/** An item's barcodes: its extra codes, each unique across every item's SKU and barcodes (issue 31). */
export function itemBarcodesService(db: Db) {
  async function assertItem(trx: Db, itemId: number): Promise<void> {
    if (!(await trx('items').where({ id: itemId }).first('id'))) throw NotFound('Item not found');
  }

  return {
    /** The item's barcodes, oldest first; 404 for an unknown item. */
    async list(itemId: number): Promise<BarcodeRow[]> {
      await assertItem(db, itemId);
      return db<BarcodeRow>('item_barcodes').where({ item_id: itemId }).orderBy('id');
    },

    /** The codes of each of these items, oldest first (an item without any is absent). */
    async codesOf(itemIds: number[]): Promise<Map<number, string[]>> {
      const codes = new Map<number, string[]>();
      if (itemIds.length === 0) return codes;
      const rows = await db('item_barcodes')
        .where('item_id', db.raw('ANY(?::int[])', [[...new Set(itemIds)]]))
        .orderBy(['item_id', 'id'])
        .select<{ item_id: number; code: string }[]>('item_id', 'code');
      for (const r of rows) codes.set(r.item_id, [...(codes.get(r.item_id) ?? []), r.code]);
      return codes;
    },

    /**
     * Adds a barcode: 400 for a bad code (a wrong check digit), 404 for an unknown item, 409 when
     * the code (or its UPC-A/EAN-13/GTIN-14 equivalent) is any item's SKU or barcode already.
     * Checked and written under the code's advisory lock, with the unique lookup key behind it, so
     * of two concurrent adds of one code one is refused.
     */
    add(itemId: number, input: NewBarcode, actor: Actor): Promise<BarcodeRow> {
      const checked = checkedBarcode(input.code, input.kind);
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        await lockCodes(trx, [checked.key]);
        await assertItem(trx, itemId);
        const owner = await codeOwner(trx, checked.key);
        if (owner) throw barcodeClash(checked.code, owner);
        let row: BarcodeRow;
        try {
          [row] = await trx<BarcodeRow>('item_barcodes')
            .insert({
              item_id: itemId,
              code: checked.code,
              lookup_key: checked.key,
              kind: checked.kind,
              note: input.note || null,
              created_by: actor.userId,
            })
            .returning('*');
        } catch (err) {
          const now = isUniqueViolation(err) ? await codeOwner(db, checked.key) : undefined;
          if (now) throw barcodeClash(checked.code, now);
          throw err;
        }
        return {
          result: row,
          audit: { entityType: 'item', entityId: itemId, action: 'add_barcode', after: audited(row) },
        };
      });
    },

    /** Removes one of the item's barcodes; 404 when the item has no barcode of that id. */
    remove(itemId: number, barcodeId: number, actor: Actor): Promise<void> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const [row] = await trx<BarcodeRow>('item_barcodes')
          .where({ id: barcodeId, item_id: itemId })
          .delete()
          .returning('*');
        if (!row) throw NotFound('Barcode not found');
        return {
          result: undefined,
          audit: { entityType: 'item', entityId: itemId, action: 'remove_barcode', before: audited(row) },
        };
      });
    },
  };
}

/**
 * Refuses (409) a SKU that another item has as written, or that is any item's barcode (or its
 * UPC-A/EAN-13/GTIN-14 equivalent), after taking the code's advisory lock for the rest of the
 * transaction (so the check and the write that follows are one step for every other writer of the
 * code): an item created or given a new SKU calls it in its transaction before writing the SKU.
 * `exceptId`: the item being renamed.
 */
export async function assertSkuFree(trx: Db, sku: string, exceptId?: number): Promise<void> {
  const key = lookupKey(sku.trim());
  await lockCodes(trx, [key]);
  const clash = await whatSkuClashesWith(trx, sku, key, exceptId);
  if (clash === 'taken') throw skuClash(sku);
  if (clash) throw skuIsBarcode(sku, clash);
}
