import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';
import { sql } from '../../db/sql';
import { PICTOGRAM_NAMES, withTexts } from '../hazards/hazards.service';
import type { PictogramCode, SignalWord } from '../hazards/hazards.schemas';
import { hazardRegisterItemRefs } from '../items/items.queries';
import { lotsHoldingStockRefs } from '../lots/lots.queries';
import { currentSdsRefs } from '../safety-data-sheets/safety-data-sheets.queries';
import { sdsReviewYears } from '../safety-data-sheets/safety-data-sheets.service';
import {
  HAZARD_REGISTER_CSV_COLUMNS,
  type HazardRegister,
  type HazardRegisterItem,
  type SdsFilter,
  type SdsState,
} from './hazard-register.schemas';

/*
 * The hazard register (issue 43): every hazardous item (any pictogram or H statement) holding stock,
 * with its hazards, its lots and their expiry, and its current safety data sheet: what a fire officer
 * or a COSHH audit asks for. It owns no table: it reads the owners' read models (items, lots, safety
 * data sheets) in one statement.
 */

type RegisterRow = {
  item_id: number;
  item_sku: string;
  item_name: string;
  item_is_active: boolean;
  item_current_stock: string;
  item_signal_word: SignalWord | null;
  item_pictograms: string[];
  item_h_statements: string[];
  item_cas_number: string | null;
  item_un_number: string | null;
  item_storage: string | null;
  sds_revision_date: string | null;
  sds_language: string | null;
  sds_state: SdsState;
  lots: { lotNumber: string; quantity: string; expiresOn: string | null; quarantined: boolean }[];
};

export type RegisterOptions = {
  /** only the items whose sheet is in this state (due: old or missing) */
  sds?: SdsFilter;
  /** the active hazardous items holding no stock too (what the SDS alert counts); default: only those holding stock */
  includeWithoutStock?: boolean;
  /** only these items */
  itemIds?: number[];
};

const toItem = (row: RegisterRow): HazardRegisterItem => ({
  id: row.item_id,
  sku: row.item_sku,
  name: row.item_name,
  isActive: row.item_is_active,
  signalWord: row.item_signal_word,
  pictograms: row.item_pictograms.map((code) => ({
    code: code as PictogramCode,
    name: PICTOGRAM_NAMES[code as PictogramCode] ?? code,
  })),
  hStatements: withTexts(row.item_h_statements),
  casNumber: row.item_cas_number,
  unNumber: row.item_un_number,
  storage: row.item_storage,
  stock: row.item_current_stock,
  lots: row.lots,
  sds: { state: row.sds_state, revisionDate: row.sds_revision_date, language: row.sds_language },
});

export function hazardRegisterService(db: Db) {
  async function register(options: RegisterOptions = {}): Promise<HazardRegister> {
    const years = await sdsReviewYears(db);
    const sdsFilter = options.sds ?? null;
    const ids = options.itemIds ?? null;
    const { rows } = await preparedRaw<{ rows: RegisterRow[] }>(
      db,
      sql`WITH register AS (
            SELECT h.item_id, h.item_sku, h.item_name, h.item_is_active, h.item_current_stock, h.item_signal_word, h.item_pictograms,
                   h.item_h_statements, h.item_cas_number, h.item_un_number, h.item_storage, s.sds_revision_date, s.sds_language,
                   CASE WHEN s.sds_revision_date IS NULL THEN 'missing'
                        WHEN s.sds_revision_date::date < ((now() AT TIME ZONE 'Europe/London')::date - make_interval(years => ${years}::int))::date
                        THEN 'old' ELSE 'current' END AS sds_state
              FROM ${hazardRegisterItemRefs('h')}
              LEFT JOIN ${currentSdsRefs('s')} ON s.sds_item_id = h.item_id
             WHERE (h.item_holds_stock OR (${options.includeWithoutStock ?? false}::boolean AND h.item_is_active))
               AND (${ids}::int[] IS NULL OR h.item_id = ANY(${ids}::int[])))
          SELECT r.*,
                 (SELECT coalesce(json_agg(json_build_object('lotNumber', l.lot_number, 'quantity', l.lot_quantity,
                                                             'expiresOn', l.lot_expires_on, 'quarantined', l.lot_quarantined)
                                           ORDER BY l.lot_expires_on NULLS LAST, l.lot_received_at, l.lot_id), '[]')
                    FROM ${lotsHoldingStockRefs('l')} WHERE l.lot_item_id = r.item_id) AS lots
            FROM register r
           WHERE ${sdsFilter}::text IS NULL OR r.sds_state = ${sdsFilter}::text
              OR (${sdsFilter}::text = 'due' AND r.sds_state <> 'current')
           ORDER BY r.item_sku, r.item_id`,
    );
    return { generatedAt: new Date().toISOString(), sdsReviewYears: years, items: rows.map(toItem) };
  }

  return {
    register,

    /** One item's register entry (its hazards, lots and current sheet), whether it holds stock or not; undefined when it is not hazardous. */
    async entry(itemId: number): Promise<HazardRegisterItem | undefined> {
      const { items } = await register({ itemIds: [itemId], includeWithoutStock: true });
      return items[0];
    },
  };
}

/** A register row as the CSV's cells (HAZARD_REGISTER_CSV_COLUMNS). */
export function hazardRegisterCsvRecord(item: HazardRegisterItem): string[] {
  return [
    item.sku,
    item.name,
    item.signalWord ?? '',
    item.pictograms.map((p) => `${p.code} ${p.name}`).join(' | '),
    item.hStatements.map((s) => `${s.code}: ${s.text}`).join(' | '),
    item.casNumber ?? '',
    item.unNumber ?? '',
    item.stock,
    item.lots
      .map(
        (lot) =>
          `${lot.lotNumber} (${lot.quantity}${lot.expiresOn ? `, expires ${lot.expiresOn}` : ''}${lot.quarantined ? ', quarantined' : ''})`,
      )
      .join(' | '),
    item.sds.revisionDate ?? '',
    item.sds.state,
    item.storage ?? '',
  ];
}

export { HAZARD_REGISTER_CSV_COLUMNS };
