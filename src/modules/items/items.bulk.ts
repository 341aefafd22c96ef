import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { sql, toRaw } from '../../db/sql';
import { isForeignKeyViolation } from '../../db/pg-errors';
import { BadRequest, Conflict, HttpError } from '../../http/errors';
import { HazardInput } from '../hazards/hazards.schemas';
import { checkHazard } from '../hazards/hazards.service';
import { D } from '../../lib/money';
import { categoriesService } from '../categories/categories.service';
import type { Actor } from '../audit/audit.actor';
import { auditTrail, type AuditEntry } from '../audit/audit.service';
import { notesService } from '../notes/notes.service';
import { changeStockMany, writeStockChanges } from '../stock-movements/stock-movements.ledger';
import { ImportRow } from './items.schemas';
import { UNLOTTED, type NamedLot } from '../lots/lots.picking';
import { BARCODE_SEPARATOR, checkBarcode, lookupKey, type CheckedBarcode } from '../../lib/barcodes';
import { codeOwners, itemStock, lockCodes, lockItemsForStock } from './items.queries';
import { barcodeClash, skuIsBarcode } from './item-barcodes.service';
import { hazardColumns, ITEM_COLUMNS, ITEM_FROM, itemWhere, type ItemFilter, type ItemReadRow } from './items.service';

/** What a bulk action did, to how many (deduplicated) items; items.present turns it into {success, message}. */
export type BulkOutcome =
  | { action: 'delete'; count: number }
  | { action: 'setActive'; count: number; active: boolean }
  | { action: 'setStockZero'; count: number; changed: number }
  | { action: 'addNote'; count: number }
  | { action: 'changeVatRate'; count: number; vatRate: string }
  | { action: 'changeCategory'; count: number; categoryName: string };

/** An exported item: the item and its barcodes' codes, oldest first. */
export type ItemExportRow = ItemReadRow & { barcodes: string[] };

/** An import's outcome: how many items were created, and why each failed one failed (by 1-based position, in order). */
export type ImportOutcome = { successful: number; errors: { position: number; message: string }[] };

/**
 * The ids, deduplicated; every one must exist or the whole request is refused (400 naming the missing ids).
 * With `lock`, the rows are locked the ledger's way (lockItemsForStock: ascending id, FOR NO KEY
 * UPDATE) before anything writes them, so a bulk change queues behind a sale (which locks the same
 * way) instead of deadlocking with it; a bare UPDATE ... WHERE id = ANY(...) would lock the rows in
 * whatever order the scan meets them.
 */
async function existingIds(trx: Db, itemIds: number[], lock = false): Promise<number[]> {
  const ids = [...new Set(itemIds)].sort((a, b) => a - b);
  const found = lock
    ? new Set((await lockItemsForStock(trx as Knex.Transaction, ids)).keys())
    : new Set(
        (
          await trx('items')
            .where('id', trx.raw('ANY(?::int[])', [ids]))
            .select<{ id: number }[]>('id')
        ).map((r) => r.id),
      );
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) {
    const shown = missing.slice(0, 20).join(', ') + (missing.length > 20 ? `, ... (${missing.length} in all)` : '');
    throw BadRequest(`Item(s) not found: ${shown}. Nothing was changed.`, { missingIds: missing });
  }
  return ids;
}

/**
 * Sets one column of items already locked by this transaction, and records each item whose value
 * it changed (before and after as the database keeps them, so 0.2 over 0.20 is no change). The
 * self-join reads the rows as they were when the statement began.
 */
async function setColumnAudited(
  trx: Knex.Transaction,
  actor: Actor,
  ids: number[],
  { column, value }: { column: 'is_active' | 'vat_rate' | 'category_id'; value: boolean | string | number },
) {
  const { rows } = await toRaw<{ rows: { id: number; before: unknown; after: unknown }[] }>(
    trx,
    sql`UPDATE items i SET ${sql.raw(column)} = ${value}, updated_at = now() FROM items old
      WHERE old.id = i.id AND i.id = ANY(${ids}::int[])
      RETURNING i.id, old.${sql.raw(column)} AS before, i.${sql.raw(column)} AS after`,
  );
  await auditTrail(trx).recordMany(
    actor,
    rows
      .filter((row) => String(row.before) !== String(row.after))
      .map((row): AuditEntry => ({
        entityType: 'item',
        entityId: row.id,
        action: 'update',
        before: { [column]: row.before },
        after: { [column]: row.after },
      })),
  );
}

const IMPORT_CHUNK = 500;
type ImportCandidate = {
  position: number;
  name: string;
  sku: string;
  description: string | null;
  categoryId: number;
  price: string;
  currentStock: string;
  minimumStock: string;
  reorderQuantity: string | null;
  barcodes: CheckedBarcode[];
  tracking: 'none' | 'lot';
  shelfLifeDays: number | null;
  /** the hazard columns (issue 43) */
  hazard: ReturnType<typeof hazardColumns>;
  coshhRequired: boolean;
  restricted: boolean;
  /** a lot-tracked item's opening stock: the lot given, or UNLOTTED with no expiry */
  lot: NamedLot | undefined;
};

/**
 * An import row's `barcodes`: an array of codes, or one text of codes joined by `|` (as the export
 * writes them); absent, null or empty for none. Each is checked as POST /items/{id}/barcodes checks
 * it (kind guessed); an error message for the first bad one.
 */
function importBarcodes(value: unknown, sku: string): CheckedBarcode[] | string {
  if (value === undefined || value === null) return [];
  const codes =
    typeof value === 'string'
      ? value.split(BARCODE_SEPARATOR)
      : Array.isArray(value) && value.every((v) => typeof v === 'string')
        ? (value as string[])
        : undefined;
  if (codes === undefined)
    return `barcodes must be an array of codes or a text of codes joined by '${BARCODE_SEPARATOR}'`;
  const checked: CheckedBarcode[] = [];
  const skuKey = lookupKey(sku);
  for (const code of codes.map((c) => c.trim()).filter((c) => c !== '')) {
    const barcode = checkBarcode(code);
    if ('error' in barcode) return barcode.error;
    if (barcode.key === skuKey) return `barcode '${barcode.code}' is the item's own SKU`;
    if (checked.some((b) => b.key === barcode.key)) return `barcode '${barcode.code}' is given twice`;
    checked.push(barcode);
  }
  return checked;
}

/** The import's hazard columns (issue 43), by their names in the import and in HazardInput. */
const HAZARD_IMPORT_FIELDS = {
  signalWord: 'signalWord',
  pictograms: 'pictograms',
  hStatements: 'hStatements',
  pStatements: 'pStatements',
  casNumber: 'casNumber',
  unNumber: 'unNumber',
  hazardStorage: 'storage',
} as const;
const HAZARD_LISTS = new Set(['pictograms', 'hStatements', 'pStatements']);

/** A list cell: an array, or one text of codes joined by '|', ',' or ';' (spaces around a '+' dropped). */
function importCodes(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? undefined;
  return value
    .replace(/\s*\+\s*/g, '+')
    .split(/[|,;]/)
    .map((code) => code.trim())
    .filter((code) => code !== '');
}

/**
 * An import row's hazard data: the columns signalWord, pictograms, hStatements, pStatements (arrays,
 * or texts as the export writes them), casNumber, unNumber and hazardStorage, checked as POST /items
 * checks its hazard; the columns to write, or the first problem's message. Blank columns: no hazard.
 */
function importHazard(record: Record<string, unknown>): ReturnType<typeof hazardColumns> | string {
  const raw: Record<string, unknown> = {};
  for (const [column, field] of Object.entries(HAZARD_IMPORT_FIELDS)) {
    let value = record[column];
    if (HAZARD_LISTS.has(column)) value = importCodes(value);
    // a spreadsheet gives a UN number as a number, and drops its leading zeros
    else if (column === 'unNumber' && typeof value === 'number' && Number.isInteger(value) && value >= 0)
      value = String(value).padStart(4, '0');
    else if (typeof value === 'number') value = String(value);
    raw[field] = value;
  }
  const parsed = HazardInput.safeParse(raw);
  if (!parsed.success) {
    const names = Object.fromEntries(Object.entries(HAZARD_IMPORT_FIELDS).map(([column, field]) => [field, column]));
    return parsed.error.issues.map((i) => `${names[String(i.path[0])] ?? String(i.path[0])} ${i.message}`).join('; ');
  }
  try {
    return hazardColumns(checkHazard(parsed.data));
  } catch (err) {
    if (err instanceof HttpError) return err.message;
    throw err;
  }
}

function describeIssues(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => (i.path.length > 0 ? `${String(i.path[0])} ${i.message}` : i.message)).join('; ');
}

const REQUIRED_IMPORT_FIELDS = ['name', 'sku', 'categoryName', 'price', 'currentStock'] as const;

/** Bulk actions on items, each in one transaction, run again whole on a deadlock or lock timeout (`retry`). */
export function itemsBulkService(db: Db) {
  /**
   * Writes a chunk of the import in one transaction: under the advisory locks of its codes (each
   * SKU's and barcode's lookup key, as POST /items/{id}/barcodes and item creation take them), an
   * item whose SKU is another item's barcode, or one of whose barcodes is any item's SKU or
   * barcode, is refused (its message by position); the others are inserted (a SKU taken meanwhile
   * is skipped) with their barcodes and opening stock.
   */
  async function writeImportChunk(
    chunk: ImportCandidate[],
    userId: string,
  ): Promise<{ written: Set<string>; refused: Map<number, string> }> {
    return transaction(db, async (trx) => {
      const skuKeys = chunk.map((c) => lookupKey(c.sku));
      const barcodeKeys = chunk.flatMap((c) => c.barcodes.map((b) => b.key));
      await lockCodes(trx, [...skuKeys, ...barcodeKeys]);
      const skuOwners = await codeOwners(trx, skuKeys, { skus: false });
      const barcodeOwners = await codeOwners(trx, barcodeKeys, { skus: true });
      const refused = new Map<number, string>();
      for (const c of chunk) {
        const skuOwner = skuOwners.get(lookupKey(c.sku));
        const taken = c.barcodes.find((b) => barcodeOwners.has(b.key));
        if (skuOwner) refused.set(c.position, skuIsBarcode(c.sku, skuOwner).message);
        else if (taken) refused.set(c.position, barcodeClash(taken.code, barcodeOwners.get(taken.key)!).message);
      }
      const rows = chunk.filter((c) => !refused.has(c.position));
      const inserted =
        rows.length === 0
          ? []
          : await trx('items')
              .insert(
                rows.map((c) => ({
                  name: c.name,
                  sku: c.sku,
                  description: c.description,
                  category_id: c.categoryId,
                  price: c.price,
                  current_stock: 0,
                  minimum_stock: c.minimumStock,
                  reorder_quantity: c.reorderQuantity,
                  tracking: c.tracking,
                  shelf_life_days: c.shelfLifeDays,
                  ...c.hazard,
                  coshh_required: c.coshhRequired,
                  restricted: c.restricted,
                  is_active: true,
                  created_by: userId,
                })),
              )
              .onConflict('sku')
              .ignore()
              .returning<{ id: number; sku: string }[]>(['id', 'sku']);
      const bySku = new Map(rows.map((c) => [c.sku, c]));
      const barcodes = inserted.flatMap((row) =>
        bySku.get(row.sku)!.barcodes.map((b) => ({
          item_id: row.id,
          code: b.code,
          lookup_key: b.key,
          kind: b.kind,
          created_by: userId,
        })),
      );
      if (barcodes.length > 0) await trx('item_barcodes').insert(barcodes);
      await changeStockMany(
        trx,
        itemStock,
        inserted
          .filter((row) => new D(bySku.get(row.sku)!.currentStock).gt(0))
          .map((row) => ({
            itemId: row.id,
            type: 'in' as const,
            quantity: bySku.get(row.sku)!.currentStock,
            reason: 'Initial stock (bulk import)',
            performedBy: userId,
            lot: bySku.get(row.sku)!.lot,
          })),
      );
      return { written: new Set(inserted.map((r) => r.sku)), refused };
    });
  }

  return {
    async delete(itemIds: number[], actor: Actor): Promise<BulkOutcome> {
      return transaction(db, { retry: true }, async (trx) => {
        const ids = await existingIds(trx, itemIds, true);
        const deleted = await trx('items')
          .where('id', trx.raw('ANY(?::int[])', [ids]))
          .orderBy('id')
          .select(
            'id',
            'sku',
            'name',
            'category_id',
            'price',
            'vat_rate',
            'minimum_stock',
            'reorder_quantity',
            'current_stock',
            'is_active',
          );
        // Notes belong to the item and go with it; stock movements survive with item_id NULL.
        await notesService(trx).removeAllFor('item', ids.map(String));
        try {
          await trx('items')
            .where('id', trx.raw('ANY(?::int[])', [ids]))
            .delete();
        } catch (err) {
          if (isForeignKeyViolation(err)) {
            throw Conflict(
              'Cannot delete: some of these items are referenced by records that must keep them (for example sale lines). Deactivate them instead. Nothing was deleted.',
            );
          }
          throw err;
        }
        await auditTrail(trx).recordMany(
          actor,
          deleted.map(({ id, ...before }) => ({
            entityType: 'item',
            entityId: id,
            action: 'delete',
            before: { id, ...before },
          })),
        );
        return { action: 'delete', count: ids.length };
      });
    },

    async setActive(itemIds: number[], active: boolean, actor: Actor): Promise<BulkOutcome> {
      return transaction(db, { retry: true }, async (trx) => {
        const ids = await existingIds(trx, itemIds, true);
        await setColumnAudited(trx, actor, ids, { column: 'is_active', value: active });
        return { action: 'setActive', count: ids.length, active };
      });
    },

    /** Through the ledger: one adjustment movement per item whose stock was not already zero. */
    async setStockZero(itemIds: number[], userId: string | null): Promise<BulkOutcome> {
      return transaction(db, { retry: true }, async (trx) => {
        const ids = await existingIds(trx, itemIds);
        const locked = await lockItemsForStock(trx, ids);
        const changes = [...locked.values()]
          .filter((item) => !new D(item.current_stock).isZero())
          .map((item) => ({
            itemId: item.id,
            type: 'adjustment' as const,
            quantity: 0,
            reason: 'Bulk set stock to zero',
            performedBy: userId,
          }));
        await writeStockChanges(trx, { itemStock, locked, changes });
        return { action: 'setStockZero', count: ids.length, changed: changes.length };
      });
    },

    async addNote(itemIds: number[], text: string, userId: string | null): Promise<BulkOutcome> {
      return transaction(db, { retry: true }, async (trx) => {
        const ids = await existingIds(trx, itemIds);
        await notesService(trx).addMany(
          ids.map((id) => ({ text, referenceType: 'item', referenceId: String(id), createdBy: userId })),
        );
        return { action: 'addNote', count: ids.length };
      });
    },

    async changeVatRate(itemIds: number[], vatRate: string, actor: Actor): Promise<BulkOutcome> {
      return transaction(db, { retry: true }, async (trx) => {
        const ids = await existingIds(trx, itemIds, true);
        await setColumnAudited(trx, actor, ids, { column: 'vat_rate', value: vatRate });
        return { action: 'changeVatRate', count: ids.length, vatRate };
      });
    },

    async changeCategory(itemIds: number[], categoryId: number, actor: Actor): Promise<BulkOutcome> {
      return transaction(db, { retry: true }, async (trx) => {
        const category = await categoriesService(trx).get(categoryId);
        const ids = await existingIds(trx, itemIds, true);
        await setColumnAudited(trx, actor, ids, { column: 'category_id', value: categoryId });
        return { action: 'changeCategory', count: ids.length, categoryName: category.name };
      });
    },

    /** Checks the ids of a selected-items export. */
    exportIds(itemIds: number[]): Promise<number[]> {
      return existingIds(db, itemIds);
    },

    /**
     * Reads items page by page (keyset on name, id) so an export of any size holds one page
     * in memory at a time.
     */
    async *exportPages(filter: ItemFilter, pageSize = 1000): AsyncGenerator<ItemExportRow[]> {
      let after: { name: string; id: number } | undefined;
      for (;;) {
        const where = itemWhere(filter);
        const keyset = after
          ? sql`${where.text ? sql.raw('AND') : sql.raw('WHERE')} (i.name, i.id) > (${after.name}, ${after.id})`
          : sql.raw('');
        const { rows } = await toRaw<{ rows: ItemExportRow[] }>(
          db,
          sql`SELECT ${ITEM_COLUMNS},
                     array(SELECT b.code FROM item_barcodes b WHERE b.item_id = i.id ORDER BY b.id) AS barcodes
                FROM ${ITEM_FROM} ${where} ${keyset} ORDER BY i.name, i.id LIMIT ${pageSize}`,
        );
        if (rows.length === 0) return;
        yield rows;
        if (rows.length < pageSize) return;
        const last = rows[rows.length - 1];
        after = { name: last.name, id: last.id };
      }
    },

    /**
     * Bulk import. Every item is validated on its own, in order (so of two items with one sku
     * the first wins, as if processed sequentially); valid items are written in chunks, each
     * chunk in its own transaction, with opening stock recorded as 'in' movements through the
     * ledger (a lot-tracked item's into its lotNumber, or UNLOTTED with no expiry when none is given). If a chunk fails unexpectedly, its items are retried one by one, so one bad item
     * never blocks the others.
     */
    async import(rawItems: unknown[], userId: string): Promise<ImportOutcome> {
      const errors: { position: number; message: string }[] = [];
      const fail = (position: number, message: string) => errors.push({ position, message });
      const categories = await categoriesService(db).byLowerName();
      const candidates: ImportCandidate[] = [];
      const firstSeen = new Map<string, number>();
      /** the lookup keys of the SKUs and barcodes of the items accepted so far, with their position */
      const codesSeen = new Map<string, { position: number; asSku: boolean }>();

      rawItems.forEach((raw, index) => {
        const position = index + 1;
        if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail(position, 'must be an object');
        const record = raw as Record<string, unknown>;
        const missing = REQUIRED_IMPORT_FIELDS.filter(
          (f) => record[f] === undefined || record[f] === null || String(record[f]).trim() === '',
        );
        if (missing.length > 0)
          return fail(position, `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required`);
        const parsed = ImportRow.safeParse(record);
        if (!parsed.success) return fail(position, describeIssues(parsed.error));
        const row = parsed.data;
        const category = categories.get(row.categoryName.toLowerCase());
        if (!category) return fail(position, `category '${row.categoryName}' does not exist`);
        const earlier = firstSeen.get(row.sku);
        if (earlier !== undefined)
          return fail(position, `sku '${row.sku}' already appears at item ${earlier} of this import`);
        const barcodes = importBarcodes(record.barcodes, row.sku);
        if (typeof barcodes === 'string') return fail(position, barcodes);
        const skuSeen = codesSeen.get(lookupKey(row.sku));
        if (skuSeen && !skuSeen.asSku)
          return fail(
            position,
            `sku '${row.sku}' already appears as a barcode at item ${skuSeen.position} of this import`,
          );
        const repeated = barcodes.find((b) => codesSeen.has(b.key));
        if (repeated)
          return fail(
            position,
            `barcode '${repeated.code}' already appears at item ${codesSeen.get(repeated.key)!.position} of this import`,
          );
        const tracking = row.tracking ?? 'none';
        if (tracking !== 'lot' && (row.lotNumber != null || row.expiresOn != null))
          return fail(
            position,
            `${row.lotNumber != null ? 'lotNumber' : 'expiresOn'} is only for an item tracked by lot (tracking: lot)`,
          );
        if (row.expiresOn != null && row.lotNumber == null)
          return fail(position, 'lotNumber is required with expiresOn');
        const hazard = importHazard(record);
        if (typeof hazard === 'string') return fail(position, hazard);
        firstSeen.set(row.sku, position);
        if (!codesSeen.has(lookupKey(row.sku))) codesSeen.set(lookupKey(row.sku), { position, asSku: true });
        for (const b of barcodes) codesSeen.set(b.key, { position, asSku: false });
        candidates.push({
          position,
          name: row.name,
          sku: row.sku,
          description: row.description ?? null,
          categoryId: category.id,
          price: row.price,
          currentStock: row.currentStock,
          minimumStock: row.minimumStock ?? '0',
          reorderQuantity: row.reorderQuantity ?? null,
          barcodes,
          tracking,
          shelfLifeDays: row.shelfLifeDays ?? null,
          hazard,
          coshhRequired: row.coshhRequired ?? false,
          restricted: row.restricted ?? false,
          // as POST /items does, opening stock of no named lot goes into UNLOTTED; an imported lot keeps
          // the expiry given (none when blank, even past: stock brought over from a spreadsheet)
          lot:
            tracking === 'lot'
              ? {
                  lotNumber: row.lotNumber ?? UNLOTTED,
                  expiresOn: row.lotNumber == null ? null : (row.expiresOn ?? null),
                }
              : undefined,
        });
      });

      const taken = new Set<string>();
      if (candidates.length > 0) {
        const rows = await db('items')
          .where('sku', db.raw('ANY(?::text[])', [candidates.map((c) => c.sku)]))
          .select<{ sku: string }[]>('sku');
        for (const r of rows) taken.add(r.sku);
      }
      const toWrite = candidates.filter((c) => {
        if (!taken.has(c.sku)) return true;
        fail(c.position, `an item with sku '${c.sku}' already exists`);
        return false;
      });

      let successful = 0;
      const record = (
        chunk: ImportCandidate[],
        { written, refused }: { written: Set<string>; refused: Map<number, string> },
      ) => {
        for (const c of chunk) {
          if (refused.has(c.position)) fail(c.position, refused.get(c.position)!);
          else if (written.has(c.sku)) successful += 1;
          else fail(c.position, `an item with sku '${c.sku}' already exists`);
        }
      };
      for (let i = 0; i < toWrite.length; i += IMPORT_CHUNK) {
        const chunk = toWrite.slice(i, i + IMPORT_CHUNK);
        try {
          record(chunk, await writeImportChunk(chunk, userId));
        } catch {
          for (const c of chunk) {
            try {
              record([c], await writeImportChunk([c], userId));
            } catch (err) {
              fail(c.position, `could not be saved: ${(err as Error).message}`);
            }
          }
        }
      }
      errors.sort((a, b) => a.position - b.position);
      return { successful, errors };
    },
  };
}

export type ItemsBulkService = ReturnType<typeof itemsBulkService>;
