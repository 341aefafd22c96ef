import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';
import { sql } from '../../db/sql';
import { BadRequest, NotFound } from '../../http/errors';
import { checkUploadedPdf, type UploadedFile } from '../invoices/invoices.pdf';
import { hazardousItemRefs } from '../items/items.queries';
import { itemsService } from '../items/items.service';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { suppliersService } from '../suppliers/suppliers.service';
import type { SdsListQuery, SdsUploadFields } from './safety-data-sheets.schemas';

export type SdsRow = {
  id: number;
  item_id: number;
  revision_date: string;
  language: string;
  supplier_id: string | null;
  filename: string;
  size_bytes: number;
  sha256: string;
  uploaded_by: string | null;
  uploaded_at: Date;
};

export type SdsFile = { sku: string; revisionDate: string; data: Buffer };

/** A hazardous item the alert counts: no safety data sheet, or its current one older than the review period. */
export type SdsDueRow = { item_id: number; item_sku: string; item_name: string; revision_date: string | null };

export const SDS_REVIEW_SETTING = 'safety.sdsReviewYears';
export const DEFAULT_SDS_REVIEW_YEARS = 5;

/** How many years a safety data sheet stays current (setting safety.sdsReviewYears {years}, unset 5). */
export async function sdsReviewYears(db: Db): Promise<number> {
  const value = KNOWN_SETTINGS[SDS_REVIEW_SETTING].safeParse(await settingsService(db).get(SDS_REVIEW_SETTING));
  return value.success ? value.data.years : DEFAULT_SDS_REVIEW_YEARS;
}

const META = ['id', 'item_id', 'revision_date', 'language', 'supplier_id', 'filename', 'size_bytes', 'sha256'];
const META_COLUMNS = [...META, 'uploaded_by', 'uploaded_at'];
/** Newest first: the latest revision date, then the latest upload. */
const NEWEST_FIRST = 'revision_date DESC, uploaded_at DESC, id DESC';

/**
 * Safety data sheets (issue 43): every version uploaded for an item is kept, its PDF in PostgreSQL
 * as invoice PDFs are (so backups carry it). The current one is the latest revision date, then the
 * latest upload; on a date, the latest revision date on or before it.
 */
export function safetyDataSheetsService(db: Db) {
  const items = itemsService(db);

  return {
    /** 404 before a byte of an upload is read for an item that does not exist. */
    async assertItem(itemId: number): Promise<void> {
      await items.get(itemId);
    },

    /**
     * Stores a new version: the fields checked first (400 naming the field), then the supplier
     * (400 naming supplierId), then the file (400 unless it is a readable PDF, as an invoice is checked).
     */
    async upload(
      itemId: number,
      fields: SdsUploadFields,
      file: UploadedFile | undefined,
      uploadedBy: string,
    ): Promise<SdsRow> {
      await items.get(itemId);
      if (fields.supplierId !== undefined && !(await suppliersService(db).exists(fields.supplierId))) {
        throw BadRequest('Validation failed', {
          errors: [{ field: 'supplierId', message: `supplier '${fields.supplierId}' does not exist` }],
        });
      }
      if (!file) throw BadRequest("No file uploaded: send the PDF in the multipart field 'file'");
      const pdf = await checkUploadedPdf(file, { readBy: uploadedBy, fallbackName: 'safety-data-sheet.pdf' });
      const [row] = await db('safety_data_sheets')
        .insert({
          item_id: itemId,
          revision_date: fields.revisionDate,
          language: fields.language,
          supplier_id: fields.supplierId ?? null,
          filename: pdf.filename,
          size_bytes: pdf.size,
          sha256: pdf.sha256,
          data: pdf.bytes,
          uploaded_by: uploadedBy,
        })
        .returning<SdsRow[]>(META_COLUMNS);
      return row;
    },

    /**
     * The item's versions newest first (404 for an unknown item); with `on`, only those revised on
     * or before it. The first is the one current (today, or on `on`).
     */
    async list(itemId: number, { on, language }: SdsListQuery = {}): Promise<SdsRow[]> {
      await items.get(itemId);
      const query = db<SdsRow>('safety_data_sheets').where({ item_id: itemId }).select(META_COLUMNS);
      if (on) query.where('revision_date', '<=', on);
      if (language) query.whereRaw('lower(language) = lower(?)', [language]);
      return query.orderByRaw(NEWEST_FIRST);
    },

    /** The current version's PDF; 404 {message: "No safety data sheet for <SKU>"} when the item has none. */
    async current(itemId: number, { language }: { language?: string } = {}): Promise<SdsFile> {
      const item = await items.get(itemId);
      const query = db('safety_data_sheets').where({ item_id: itemId });
      if (language) query.whereRaw('lower(language) = lower(?)', [language]);
      const row = await query
        .orderByRaw(NEWEST_FIRST)
        .first<{ revision_date: string; data: Buffer } | undefined>('revision_date', 'data');
      if (!row) throw NotFound(`No safety data sheet for ${item.sku}`);
      return { sku: item.sku, revisionDate: row.revision_date, data: row.data };
    },

    /** Issue 43, the pages on the floor: which of these items have a safety data sheet (any version), one read. */
    async itemsWithSheet(itemIds: number[]): Promise<Set<number>> {
      if (itemIds.length === 0) return new Set();
      const rows = await db('safety_data_sheets')
        .distinct('item_id')
        .whereIn('item_id', [...new Set(itemIds)]);
      return new Set(rows.map((row: { item_id: number }) => row.item_id));
    },

    /** One version's PDF (404 when the item has no such version). */
    async version(itemId: number, sdsId: number): Promise<SdsFile> {
      const item = await items.get(itemId);
      const row = await db('safety_data_sheets')
        .where({ item_id: itemId, id: sdsId })
        .first<{ revision_date: string; data: Buffer } | undefined>('revision_date', 'data');
      if (!row) throw NotFound('Safety data sheet not found');
      return { sku: item.sku, revisionDate: row.revision_date, data: row.data };
    },

    /**
     * The active hazardous items without a safety data sheet, or whose current one was revised more
     * than safety.sdsReviewYears years before today (UK), by SKU, with that revision date (null: none).
     */
    async due(): Promise<{ rows: SdsDueRow[]; years: number }> {
      const years = await sdsReviewYears(db);
      const { rows } = await preparedRaw<{ rows: SdsDueRow[] }>(
        db,
        sql`SELECT h.item_id, h.item_sku, h.item_name, s.revision_date
              FROM ${hazardousItemRefs('h')}
              LEFT JOIN LATERAL (SELECT revision_date FROM safety_data_sheets
                                  WHERE item_id = h.item_id
                                  ORDER BY revision_date DESC, uploaded_at DESC, id DESC LIMIT 1) s ON true
             WHERE s.revision_date IS NULL
                OR s.revision_date < ((now() AT TIME ZONE 'Europe/London')::date - make_interval(years => ${years}::int))::date
             ORDER BY h.item_sku, h.item_id`,
      );
      return { rows, years };
    },
  };
}

/** A file name that is safe in a header and on any disk: `<SKU>-SDS-<revisionDate>.pdf`, other characters as _. */
export const sdsFileName = (file: Pick<SdsFile, 'sku' | 'revisionDate'>): string =>
  `${file.sku.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100)}-SDS-${file.revisionDate}.pdf`;

/**
 * The headers a safety data sheet's PDF is sent with (the API and the page a label's QR code opens):
 * application/pdf, opened in the browser, named by sdsFileName whatever the upload was called.
 */
export const sdsPdfHeaders = (file: Pick<SdsFile, 'sku' | 'revisionDate'>): Record<string, string> => ({
  'Content-Type': 'application/pdf',
  'Content-Disposition': `inline; filename="${sdsFileName(file)}"`,
  'Cache-Control': 'private, no-store',
});
