import { preparedRaw } from '../../db/prepared';
import { sql, toRaw, type Sql } from '../../db/sql';
import { containsPattern } from '../../db/like-pattern';
import type { Db } from '../../db/knex';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { transaction } from '../../db/transaction';
import { countReferences, describeReferences } from '../../db/references';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/pg-errors';
import {
  effectiveVatRate,
  findItemsForLines,
  itemStock,
  lockItemsForStock,
  lotTrackedItemIds,
  lowStock,
  type ItemForLine,
} from './items.queries';
import { assertSkuFree, skuClash } from './item-barcodes.service';
import { categoryExists, categoryRefs } from '../categories/categories.queries';
import { leftJoinUserRef, userRefSelect } from '../users/users.queries';
import { searchMatchesCache } from './items.search-cache';
import { notesService } from '../notes/notes.service';
import { BadRequest, Conflict, NotFound } from '../../http/errors';
import { D } from '../../lib/money';
import { changeStock } from '../stock-movements/stock-movements.ledger';
import { expiryWarningDays, lotsHoldingStock, lotsOfItem, storesToday, type LotRow } from '../lots/lots.queries';
import { TRACKING_OFF_REASON, TRACKING_ON_REASON, UNLOTTED } from '../lots/lots.picking';
import { stockMovementsService, type MovementReadRow } from '../stock-movements/stock-movements.service';
import type { CreateItem, StockChangeBody, UpdateItem } from './items.schemas';
import { checkHazard, type HazardValues } from '../hazards/hazards.service';

/**
 * One line of an item's order history: the order, its supplier's name and the line's quantities.
 * The orders module reads it from its tables (itemHistory) in this shape.
 */
export type ItemOrderHistoryRow = {
  order_id: string;
  created_at: Date;
  supplier: string;
  quantity: string;
  received_quantity: string;
  unit_cost: string;
  status: string;
};

export type ItemReadRow = {
  id: number;
  name: string;
  sku: string;
  description: string | null;
  category_id: number;
  price: string;
  vat_rate: string;
  own_vat_rate: string | null;
  current_stock: string;
  minimum_stock: string;
  reorder_quantity: string | null;
  is_active: boolean;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  last_counted_at: Date | null;
  tracking: 'none' | 'lot';
  shelf_life_days: number | null;
  hazard_signal_word: 'Danger' | 'Warning' | null;
  hazard_pictograms: string[];
  hazard_statements: string[];
  precautionary_statements: string[];
  cas_number: string | null;
  un_number: string | null;
  hazard_storage: string | null;
  coshh_required: boolean;
  /** the item's or its category's coshh_required (issue 43) */
  needs_coshh_reference: boolean;
  restricted: boolean;
  category_name: string;
  category_description: string | null;
  category_icon: string | null;
  category_color: string | null;
  creator_email: string | null;
  creator_first_name: string | null;
  creator_last_name: string | null;
};

/**
 * The item columns every read returns: the effective VAT rate (own or default), the
 * embedded category and the creator, in one statement.
 */
export const ITEM_COLUMNS = sql`i.id, i.name, i.sku, i.description, i.category_id, i.price,
  ${effectiveVatRate('i')} AS vat_rate,
  i.vat_rate AS own_vat_rate, i.current_stock, i.minimum_stock, i.reorder_quantity, i.is_active, i.created_by, i.created_at, i.updated_at, i.last_counted_at,
  i.tracking, i.shelf_life_days,
  i.hazard_signal_word, i.hazard_pictograms, i.hazard_statements, i.precautionary_statements, i.cas_number, i.un_number, i.hazard_storage,
  i.coshh_required, (i.coshh_required OR c.category_coshh_required) AS needs_coshh_reference, i.restricted,
  c.category_name, c.category_description, c.category_icon, c.category_color,
  ${userRefSelect('creator_')}`;
export const ITEM_FROM = sql`items i JOIN ${categoryRefs('c')} ON c.category_id = i.category_id ${leftJoinUserRef('creator_', sql.raw('i.created_by'))}`;
/** Three letters or digits in a row: the least a term needs for pg_trgm to extract a trigram from it. */
const TRIGRAM_TERM = /[\p{L}\p{N}]{3}/u;

/**
 * The search: the items row `i` contains the term in its name, description or sku, in any case
 * (`i.search_text` is the three lowered, migration 20261123001000), as ILIKE '%term%' finds it. The
 * term is lowered once (the sub-select), not for every row checked. A term the trigram index can
 * look up is matched with LIKE, which the index serves. A shorter one gives it no trigram, and
 * PostgreSQL would then read the whole index before checking every row, so it is matched with
 * strpos, which no index serves: one pass over the table.
 */
export function itemSearch(term: string): Sql {
  return TRIGRAM_TERM.test(term)
    ? sql`i.search_text LIKE (SELECT lower(${containsPattern(term)}))`
    : sql`strpos(i.search_text, (SELECT lower(${term}))) > 0`;
}

export type ItemFilter = {
  search?: string;
  categoryId?: number;
  includeInactive?: boolean;
  ids?: number[];
  /** true: only the items low on stock (lowStock); false: only those not */
  lowStock?: boolean;
};

/** Adds the list filters to a raw WHERE clause and its bindings. */
export function itemWhere(filter: ItemFilter): Sql {
  const clauses: Sql[] = [];
  if (!filter.includeInactive) clauses.push(sql`i.is_active`);
  if (filter.categoryId !== undefined) clauses.push(sql`i.category_id = ${filter.categoryId}`);
  if (filter.search) clauses.push(itemSearch(filter.search));
  if (filter.ids) clauses.push(sql`i.id = ANY(${filter.ids}::int[])`);
  if (filter.lowStock !== undefined) clauses.push(filter.lowStock ? lowStock('i') : sql`NOT (${lowStock('i')})`);
  return clauses.length > 0 ? sql`WHERE ${sql.join(clauses, sql.raw(' AND '))}` : sql.raw('');
}

/** An item a free-text line (an imported order line) names. */
export type MatchedItem = { id: number; name: string; sku: string };

/** A name as items are compared by name: lowered, each run of whitespace one space, trimmed. */
export const normalisedName = (name: string) => name.toLowerCase().replace(/\s+/g, ' ').trim();

/** The same for the items row `i`; the expression of the index items_normalised_name_trgm (migration 20261126050100). */
const NORMALISED_NAME = sql.raw(String.raw`lower(regexp_replace(i.name, '\s+', ' ', 'g'))`);

/** What namedBy() finds, keyed by the normalised name, the lowered SKU and the normalised name searched for. */
export type NamedItems = {
  byName: Map<string, MatchedItem>;
  bySku: Map<string, MatchedItem>;
  similar: Map<string, MatchedItem & { similarity: number }>;
};

/** Tables whose rows belong to an item and go with it; they never block a delete. */
const OWNED_BY_ITEM = new Set(['low_stock_acknowledgements', 'item_barcodes', 'stock_lots']);

/** The items columns of an item's hazard data (none: every column empty). */
export function hazardColumns(hazard: HazardValues | null) {
  return {
    hazard_signal_word: hazard?.signalWord ?? null,
    hazard_pictograms: hazard?.pictograms ?? [],
    hazard_statements: hazard?.hStatements ?? [],
    precautionary_statements: hazard?.pStatements ?? [],
    cas_number: hazard?.casNumber ?? null,
    un_number: hazard?.unNumber ?? null,
    hazard_storage: hazard?.storage ?? null,
  };
}

/** An item row's hazard data in the hazards module's terms. */
export const hazardOf = (row: ItemReadRow): HazardValues => ({
  signalWord: row.hazard_signal_word,
  pictograms: row.hazard_pictograms,
  hStatements: row.hazard_statements,
  pStatements: row.precautionary_statements,
  casNumber: row.cas_number,
  unNumber: row.un_number,
  storage: row.hazard_storage,
});

/** The hazard columns a created item's audit entry records, only those set. */
function hazardAudit(row: ItemReadRow): Record<string, unknown> {
  const columns = hazardColumns(hazardOf(row));
  return Object.fromEntries(
    Object.entries(columns).filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0)),
  );
}

const PAGE_JOINS = sql`LEFT JOIN ${categoryRefs('c')} ON c.category_id = i.category_id ${leftJoinUserRef('creator_', sql.raw('i.created_by'))}`;

export function itemsService(db: Db) {
  /** A searched list's page; see list(). */
  async function searchedPage(
    filter: ItemFilter & { search: string; limit: number },
    offset: number,
  ): Promise<{ rows: ItemReadRow[]; total: number }> {
    type PageRow = ItemReadRow & { generation: string };
    const cache = searchMatchesCache(db);
    const key = JSON.stringify([filter.search, filter.categoryId ?? null, filter.includeInactive ?? false]);
    const known = cache.get(key);
    if (known) {
      const pageIds = known.ids.slice(offset, offset + filter.limit);
      const { rows } = await preparedRaw<{ rows: PageRow[] }>(
        db,
        sql`SELECT g.generation, ${ITEM_COLUMNS}
              FROM item_search_generation g
              LEFT JOIN unnest(${pageIds}::int[]) WITH ORDINALITY AS p(id, n) ON true
              LEFT JOIN items i ON i.id = p.id
              ${PAGE_JOINS}
             ORDER BY p.n`,
      );
      if (rows[0].generation === known.generation)
        return { rows: rows.filter((r) => r.id !== null), total: known.ids.length };
    }
    const { rows } = await preparedRaw<{ rows: (PageRow & { ids: number[] | null })[] }>(
      db,
      sql`WITH matches AS (SELECT coalesce(array_agg(i.id ORDER BY i.name, i.id), '{}') AS ids FROM items i ${itemWhere(filter)})
          SELECT g.generation, CASE WHEN coalesce(p.n, 1) = 1 THEN m.ids END AS ids, ${ITEM_COLUMNS}
            FROM item_search_generation g
            CROSS JOIN matches m
            LEFT JOIN unnest(m.ids[${offset + 1}::int:${offset + filter.limit}::int]) WITH ORDINALITY AS p(id, n) ON true
            LEFT JOIN items i ON i.id = p.id
            ${PAGE_JOINS}
           ORDER BY p.n`,
    );
    const ids = rows[0].ids ?? [];
    cache.set(key, { generation: rows[0].generation, ids });
    return { rows: rows.filter((r) => r.id !== null), total: ids.length };
  }

  /**
   * A page of a low-stock filter, which every stock movement changes, so neither the kept counts nor
   * the search cache can answer it: the matches are counted with the page, in one statement.
   */
  async function countedPage(
    filter: ItemFilter & { limit: number },
    offset: number,
  ): Promise<{ rows: ItemReadRow[]; total: number }> {
    const { rows } = await toRaw<{ rows: (ItemReadRow & { total: number })[] }>(
      db,
      sql`WITH matches AS MATERIALIZED (SELECT i.id, i.name FROM items i ${itemWhere(filter)}),
               total AS (SELECT count(*)::int AS total FROM matches)
          SELECT ${ITEM_COLUMNS}, total.total
            FROM total
            LEFT JOIN (SELECT m.id FROM matches m ORDER BY m.name, m.id LIMIT ${filter.limit} OFFSET ${offset}) p ON true
            LEFT JOIN items i ON i.id = p.id
            ${PAGE_JOINS}
           ORDER BY i.name, i.id`,
    );
    return { rows: rows.filter((r) => r.id !== null), total: rows[0]?.total ?? 0 };
  }

  async function find(id: number): Promise<ItemReadRow | undefined> {
    const { rows } = await preparedRaw<{ rows: ItemReadRow[] }>(
      db,
      sql`SELECT ${ITEM_COLUMNS} FROM ${ITEM_FROM} WHERE i.id = ${id}`,
    );
    return rows[0];
  }

  async function get(id: number): Promise<ItemReadRow> {
    const row = await find(id);
    if (!row) throw NotFound('Item not found');
    return row;
  }

  async function assertCategory(trx: Db, categoryId: number): Promise<void> {
    if (!(await categoryExists(trx, categoryId))) {
      throw BadRequest('Validation failed', {
        errors: [{ field: 'categoryId', message: `category ${categoryId} does not exist` }],
      });
    }
  }

  async function deletionCheck(id: number) {
    const item = await get(id);
    const refs = (await countReferences(db, 'items', id)).filter((r) => !OWNED_BY_ITEM.has(r.table));
    const reasons = describeReferences(refs, await notesService(db).count('item', String(id)));
    return { name: item.name, canDelete: reasons.length === 0, reasons };
  }

  return {
    find,
    get,

    /**
     * One page and the total. Without a search, in one statement: the total from the
     * trigger-kept item_counts (a primary-key read) and the page by the (is_active, name, id)
     * index. With a search, the matches are collected once (through the trigram index, see
     * itemSearch) into their ids in list order, which give the total and every page of that
     * search; they are kept in memory (searchMatchesCache) with the item_search_generation they
     * were read at, and a later page or repeat reads only its own rows, by id, with the current
     * generation in the same statement: when that differs, the matches are collected again.
     * A low-stock filter counts its matches with the page (countedPage). An empty page still
     * carries the total.
     */
    async list(filter: ItemFilter & { page: number; limit: number }): Promise<{ rows: ItemReadRow[]; total: number }> {
      const offset = (filter.page - 1) * filter.limit;
      if (filter.lowStock !== undefined) return countedPage(filter, offset);
      if (filter.search) return searchedPage({ ...filter, search: filter.search }, offset);
      const where = itemWhere(filter);
      const counted = sql.raw(filter.includeInactive ? 'active + inactive' : 'active');
      const byCategory = filter.categoryId !== undefined ? sql`WHERE category_id = ${filter.categoryId}` : sql.raw('');
      const { rows } = await preparedRaw<{ rows: (ItemReadRow & { total: number })[] }>(
        db,
        sql`WITH total AS (SELECT coalesce(sum(${counted}), 0)::int AS total FROM item_counts ${byCategory})
            SELECT ${ITEM_COLUMNS}, total.total
              FROM total
              LEFT JOIN (SELECT i.* FROM items i ${where} ORDER BY i.name, i.id LIMIT ${filter.limit} OFFSET ${offset}) i ON true
              ${PAGE_JOINS}
             ORDER BY i.name, i.id`,
      );
      return { rows: rows.filter((r) => r.id !== null), total: rows[0]?.total ?? 0 };
    },

    /** The id of each SKU (exact) that an item has. */
    /** The items of these ids as a line of a sale or request reads them (issue 43: hazardous, needs a COSHH reference), by id; one read. */
    async forLines(ids: number[]): Promise<Map<number, ItemForLine>> {
      return findItemsForLines(db, ids);
    },

    async idsBySku(skus: string[]): Promise<Map<string, number>> {
      if (skus.length === 0) return new Map();
      const rows = await db('items').whereIn('sku', skus).select<{ id: number; sku: string }[]>('id', 'sku');
      return new Map(rows.map((row) => [row.sku, row.id]));
    },

    /** Creates the item; opening stock is recorded as an 'in' movement, so the ledger explains every unit. */
    create(input: CreateItem, actor: Actor): Promise<ItemReadRow> {
      const userId = actor.userId;
      const hazard = hazardColumns(checkHazard(input.hazard ?? null));
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        await assertCategory(trx, input.categoryId);
        await assertSkuFree(trx, input.sku);
        let id: number;
        try {
          [{ id }] = await trx('items')
            .insert({
              name: input.name,
              sku: input.sku,
              description: input.description ?? null,
              category_id: input.categoryId,
              price: input.price,
              vat_rate: input.vatRate ?? null,
              current_stock: 0,
              minimum_stock: input.minimumStock,
              reorder_quantity: input.reorderQuantity ?? null,
              tracking: input.tracking,
              shelf_life_days: input.shelfLifeDays ?? null,
              ...hazard,
              coshh_required: input.coshhRequired ?? false,
              restricted: input.restricted ?? false,
              is_active: true,
              created_by: userId,
            })
            .returning('id');
        } catch (err) {
          if (isUniqueViolation(err)) throw skuClash(input.sku);
          throw err;
        }
        if (new D(input.currentStock).gt(0)) {
          await changeStock(trx, itemStock, {
            itemId: id,
            type: 'in',
            quantity: input.currentStock,
            reason: 'Initial stock',
            performedBy: userId,
            // a lot-tracked item's opening stock is of no known lot, as the stock is when tracking is turned on
            lot: input.tracking === 'lot' ? { lotNumber: UNLOTTED, expiresOn: null } : undefined,
          });
        }
        const created = await itemsService(trx).get(id);
        const { name, sku, category_id, price, vat_rate, minimum_stock, reorder_quantity, tracking, shelf_life_days } =
          created;
        const { coshh_required, restricted } = created;
        return {
          result: created,
          audit: {
            entityType: 'item',
            entityId: id,
            action: 'create',
            after: {
              name,
              sku,
              category_id,
              price,
              vat_rate,
              minimum_stock,
              reorder_quantity,
              tracking,
              shelf_life_days,
              ...hazardAudit(created),
              coshh_required,
              restricted,
            },
          },
        };
      });
    },

    /**
     * Partial update. A changed currentStock becomes an adjustment movement through the
     * ledger, in the same transaction as the other fields.
     */
    update(id: number, input: UpdateItem, actor: Actor): Promise<ItemReadRow> {
      const hazard = input.hazard === undefined ? undefined : hazardColumns(checkHazard(input.hazard));
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const current = (await lockItemsForStock(trx, [id])).get(id);
        if (!current) throw NotFound('Item not found');
        const before = await itemsService(trx).get(id);
        if (input.categoryId !== undefined) await assertCategory(trx, input.categoryId);
        if (input.sku !== undefined && input.sku !== current.sku) {
          await assertSkuFree(trx, input.sku, id);
        }
        const changes: Record<string, unknown> = {};
        if (input.name !== undefined) changes.name = input.name;
        if (input.sku !== undefined) changes.sku = input.sku;
        if (input.description !== undefined) changes.description = input.description;
        if (input.categoryId !== undefined) changes.category_id = input.categoryId;
        if (input.price !== undefined) changes.price = input.price;
        if (input.vatRate !== undefined) changes.vat_rate = input.vatRate;
        if (input.minimumStock !== undefined) changes.minimum_stock = input.minimumStock;
        if (input.reorderQuantity !== undefined) changes.reorder_quantity = input.reorderQuantity;
        if (input.isActive !== undefined) changes.is_active = input.isActive;
        if (input.shelfLifeDays !== undefined) changes.shelf_life_days = input.shelfLifeDays;
        if (hazard !== undefined) Object.assign(changes, hazard);
        if (input.coshhRequired !== undefined) changes.coshh_required = input.coshhRequired;
        if (input.restricted !== undefined) changes.restricted = input.restricted;
        if (input.tracking !== undefined && input.tracking !== current.tracking) {
          changes.tracking = input.tracking;
          const holding = input.tracking === 'lot' ? 0 : await lotsHoldingStock(trx, id);
          if (holding > 1)
            throw Conflict(`Tracking by lot cannot be turned off for ${current.sku}: ${holding} lots hold stock`);
          // the stock moves into UNLOTTED (on) or out of its lot (off) through the ledger: one movement that
          // leaves the level, whose lots explain the move (nothing to move, no movement)
          if (input.tracking === 'lot' ? new D(current.current_stock).gt(0) : holding > 0) {
            await changeStock(trx, itemStock, {
              itemId: id,
              type: 'adjustment',
              quantity: current.current_stock,
              lotTracking: input.tracking === 'lot' ? 'start' : 'stop',
              reason: input.tracking === 'lot' ? TRACKING_ON_REASON : TRACKING_OFF_REASON,
              performedBy: actor.userId,
            });
          }
        }
        if (Object.keys(changes).length > 0) {
          try {
            await trx('items')
              .where({ id })
              .update({ ...changes, updated_at: trx.fn.now() });
          } catch (err) {
            if (isUniqueViolation(err) && input.sku !== undefined) throw skuClash(input.sku);
            throw err;
          }
        }
        if (input.currentStock !== undefined && !new D(input.currentStock).eq(current.current_stock)) {
          if ((changes.tracking ?? current.tracking) === 'lot') {
            throw BadRequest(
              `${current.sku} is tracked by lot: change its stock by lot (POST /api/items/${id}/stock with lotNumber)`,
            );
          }
          await changeStock(trx, itemStock, {
            itemId: id,
            type: 'adjustment',
            quantity: input.currentStock,
            reason: input.stockReason || 'Stock corrected on item update',
            performedBy: actor.userId,
          });
        }
        // the fields that really changed (4.5 for 4.50 is no change), before and after; a stock change is the ledger's own record
        const updated = await itemsService(trx).get(id);
        const value = (row: object, field: string) => (row as Record<string, unknown>)[field];
        const changed = Object.keys(changes).filter(
          (field) => String(value(updated, field)) !== String(value(before, field)),
        );
        const pick = (row: object) => Object.fromEntries(changed.map((field) => [field, value(row, field)]));
        return {
          result: updated,
          audit:
            changed.length > 0
              ? { entityType: 'item', entityId: id, action: 'update', before: pick(before), after: pick(updated) }
              : null,
        };
      });
    },

    /** Soft delete: the row stays, hidden from the default list. */
    deactivate(id: number, actor: Actor): Promise<void> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const [before] = await trx('items')
          .where({ id })
          .forNoKeyUpdate()
          .select<{ is_active: boolean }[]>('is_active');
        if (!before) throw NotFound('Item not found');
        await trx('items').where({ id }).update({ is_active: false, updated_at: trx.fn.now() });
        return {
          result: undefined,
          audit: before.is_active
            ? {
                entityType: 'item',
                entityId: id,
                action: 'update',
                before: { is_active: true },
                after: { is_active: false },
              }
            : null,
        };
      });
    },

    /**
     * A manual stock change through the ledger: the item after it, and the movement as the
     * movements list reads it. Run again whole if it deadlocks with a sale or bulk change.
     */
    async changeStock(
      id: number,
      body: StockChangeBody,
      userId: string,
    ): Promise<{ item: ItemReadRow; movement: MovementReadRow }> {
      // Both read in the change's transaction: what it wrote, even if the rows are gone by the time
      // it has committed (a backup restored meanwhile by another instance).
      return transaction(db, { retry: true }, async (trx) => {
        const written = await changeStock(trx, itemStock, {
          itemId: id,
          type: body.type,
          quantity: body.quantity,
          reason: body.reason || `Manual stock ${body.type === 'adjustment' ? 'adjustment' : body.type}`,
          performedBy: userId,
          lot: body.lotNumber === undefined ? undefined : { lotNumber: body.lotNumber, expiresOn: body.expiresOn },
        });
        const [movement] = await stockMovementsService(trx).byIds([written.id]);
        return { movement, item: await itemsService(trx).get(id) };
      });
    },

    /** The item's lots, first expiry first; 404 for an unknown item. */
    async lots(id: number, includeEmpty: boolean): Promise<LotRow[]> {
      await get(id);
      return lotsOfItem(db, id, includeEmpty);
    },

    /** Which of these items are tracked by lot. */
    lotTracked(ids: number[]): Promise<Set<number>> {
      return lotTrackedItemIds(db, ids);
    },

    /** The item's lots holding stock as its page shows them: first expiry first, with the day and warning days their status is on. */
    async lotsToday(id: number): Promise<{ rows: LotRow[]; today: string; warningDays: number }> {
      const [rows, warningDays] = await Promise.all([lotsOfItem(db, id, false), expiryWarningDays(db)]);
      return { rows, today: storesToday(), warningDays };
    },

    /** The item's movements, newest first (older than beforeId when given); 404 for an unknown item. */
    async movements(id: number, limit: number, beforeId?: number): Promise<MovementReadRow[]> {
      await get(id);
      return stockMovementsService(db).list({ itemId: id, limit, beforeId });
    },

    /**
     * Locks the items FOR KEY SHARE in ascending id order. A writer of rows that reference items
     * (order lines) takes these first: the lines' foreign-key checks would otherwise take the same
     * locks in line order, crossing the ledger's ascending FOR NO KEY UPDATE order (a receipt) and
     * deadlocking with it.
     */
    async lockKeysShared(ids: number[]): Promise<void> {
      const sorted = [...new Set(ids)].sort((a, b) => a - b);
      if (sorted.length > 0) await db('items').whereIn('id', sorted).orderBy('id').forKeyShare().select('id');
    },

    /**
     * The items free text may name, in one statement over the indexes items_normalised_name_trgm and
     * items_sku_lower: the item of each name (normalised as normalisedName; of several, an active one,
     * then the oldest), of each SKU (any case; likewise), and for each of `similarTo` the active item
     * whose normalised name is nearest by trigrams (the index walks <->, 1 - similarity, nearest
     * first) when its pg_trgm similarity() is at least minSimilarity.
     */
    async namedBy(query: {
      names: string[];
      skus: string[];
      similarTo: string[];
      minSimilarity: number;
    }): Promise<NamedItems> {
      const keys = (values: string[], key: (v: string) => string) => [
        ...new Set(values.map(key).filter((v) => v !== '')),
      ];
      const names = keys(query.names, normalisedName);
      const skus = keys(query.skus, (v) => v.toLowerCase().trim());
      const similarTo = keys(query.similarTo, normalisedName);
      type Found = MatchedItem & { via: 'name' | 'sku' | 'similar'; key: string; similarity: number | null };
      const { rows } = await toRaw<{ rows: Found[] }>(
        db,
        sql`SELECT 'name' AS via, k.key, m.id, m.name, m.sku, NULL::real AS similarity
              FROM unnest(${names}::text[]) AS k(key)
              CROSS JOIN LATERAL (SELECT i.id, i.name, i.sku FROM items i WHERE ${NORMALISED_NAME} = k.key ORDER BY i.is_active DESC, i.id LIMIT 1) m
            UNION ALL
            SELECT 'sku', k.key, m.id, m.name, m.sku, NULL
              FROM unnest(${skus}::text[]) AS k(key)
              CROSS JOIN LATERAL (SELECT i.id, i.name, i.sku FROM items i WHERE lower(i.sku) = k.key ORDER BY i.is_active DESC, i.id LIMIT 1) m
            UNION ALL
            SELECT 'similar', k.key, m.id, m.name, m.sku, m.similarity
              FROM unnest(${similarTo}::text[]) AS k(key)
              CROSS JOIN LATERAL (SELECT i.id, i.name, i.sku, similarity(${NORMALISED_NAME}, k.key) AS similarity
                                    FROM items i WHERE i.is_active
                                   ORDER BY ${NORMALISED_NAME} <-> k.key LIMIT 1) m
             WHERE m.similarity >= ${query.minSimilarity}`,
      );
      const found: NamedItems = { byName: new Map(), bySku: new Map(), similar: new Map() };
      for (const { via, key, similarity, ...item } of rows) {
        if (via === 'name') found.byName.set(key, item);
        else if (via === 'sku') found.bySku.set(key, item);
        else found.similar.set(key, { ...item, similarity: similarity! });
      }
      return found;
    },

    /**
     * Which item each free-text line names: by sku (case-insensitive) first, then by exact name
     * (case-insensitive; of several items with one name an active one, then the oldest). Reads
     * all the lines' candidates at once and returns the matcher.
     */
    async matcherForLines(lines: { name: string; sku?: string | null }[]) {
      const skus = [...new Set(lines.map((l) => l.sku?.toLowerCase()).filter((s): s is string => !!s))];
      const names = [...new Set(lines.map((l) => l.name.toLowerCase()))];
      const bySku = new Map<string, MatchedItem>();
      const byName = new Map<string, MatchedItem>();
      if (skus.length > 0) {
        const rows = await db('items')
          .whereRaw('lower(sku) = ANY(?)', [skus])
          .select<MatchedItem[]>('id', 'name', 'sku');
        for (const r of rows) bySku.set(r.sku.toLowerCase(), r);
      }
      const rows = await db('items')
        .whereRaw('lower(name) = ANY(?)', [names])
        .orderBy([{ column: 'is_active', order: 'desc' }, { column: 'id' }])
        .select<MatchedItem[]>('id', 'name', 'sku');
      for (const r of rows) if (!byName.has(r.name.toLowerCase())) byName.set(r.name.toLowerCase(), r);
      return (line: { name: string; sku?: string | null }): MatchedItem | undefined =>
        (line.sku ? bySku.get(line.sku.toLowerCase()) : undefined) ?? byName.get(line.name.toLowerCase());
    },

    /** The preferred sku when no item has it, otherwise the fallback (suffixed -2, -3, ... until free). */
    async freeSku(preferred: string | null, fallback: string): Promise<string> {
      const taken = async (sku: string) => !!(await db('items').where({ sku }).first('id'));
      for (const sku of [...(preferred ? [preferred] : []), fallback]) {
        if (!(await taken(sku))) return sku;
      }
      for (let n = 2; ; n += 1) {
        const sku = `${fallback}-${n}`;
        if (!(await taken(sku))) return sku;
      }
    },

    deletionCheck,

    /** Permanent delete, refused (409 with reasons) while movements, lines, links or notes reference the item. */
    async safeDelete(id: number): Promise<void> {
      const check = await deletionCheck(id);
      if (!check.canDelete) throw Conflict(`Cannot delete item '${check.name}'`, { reasons: check.reasons });
      try {
        await db('items').where({ id }).delete();
      } catch (err) {
        if (isForeignKeyViolation(err))
          throw Conflict(`Cannot delete item '${check.name}': other records reference it`);
        throw err;
      }
    },
  };
}

export type ItemsService = ReturnType<typeof itemsService>;

/** The lowStock rule (items.queries.ts) for an item already read, so a list need not select it again. */
export const isLowStock = (item: { is_active: boolean; current_stock: string; minimum_stock: string }): boolean =>
  item.is_active && new D(item.current_stock).lte(item.minimum_stock);
