import type { SdsRow } from './safety-data-sheets.service';

/** A stored version, as POST /api/items/{id}/sds answers it (never its bytes). */
export function presentSafetyDataSheet(row: SdsRow) {
  return {
    id: row.id,
    itemId: row.item_id,
    revisionDate: row.revision_date,
    language: row.language,
    supplierId: row.supplier_id,
    sizeBytes: row.size_bytes,
    uploadedBy: row.uploaded_by,
    uploadedAt: row.uploaded_at.toISOString(),
  };
}

/** The versions newest first; the first is the one current (today, or on the date asked). */
export const presentSafetyDataSheetList = (rows: SdsRow[]) =>
  rows.map((row, i) => ({ ...presentSafetyDataSheet(row), current: i === 0 }));
