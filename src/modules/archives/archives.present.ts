import path from 'node:path';
import {
  RECORD_TYPES,
  type Archive,
  type ArchiveList,
  type ArchivePreview,
  type PurgeResult,
  type RecordType,
} from './archives.schemas';
import {
  archivesDirectory,
  countsOf,
  type ArchiveRow,
  type PreviewRecord,
  type PurgeOutcome,
} from './archives.service';

/** Bytes in binary units (1 KB = 1024 bytes), one decimal: "512 B", "1.5 KB". */
export function humanSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

export function presentArchive(row: ArchiveRow, dataDir: string): Archive {
  return {
    id: row.id,
    archiveName: row.archive_name,
    archivePath: path.join(archivesDirectory(dataDir), row.archive_name),
    ageThresholdDays: row.age_threshold_days,
    recordTypes: row.record_types,
    cutoff: row.cutoff.toISOString(),
    recordsArchived: countsOf(row),
    archiveSizeBytes: row.size_bytes,
    sha256: row.sha256,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    purgedAt: row.purged_at?.toISOString() ?? null,
  };
}

const NOUNS: Record<RecordType, [string, string]> = {
  sales: ['sale', 'sales'],
  orders: ['order', 'orders'],
  stock_movements: ['stock movement', 'stock movements'],
};
const countOf = (type: RecordType, n: number) => `${n} ${NOUNS[type][n === 1 ? 0 : 1]}`;
const sum = (values: Record<string, number>) => Object.values(values).reduce((a, b) => a + b, 0);

export function presentPurge(outcome: PurgeOutcome, dataDir: string): PurgeResult {
  const keptOf = (type: RecordType) => ({ count: sum(outcome.kept[type]), reasons: outcome.kept[type] });
  const kept = { sales: keptOf('sales'), orders: keptOf('orders'), stock_movements: keptOf('stock_movements') };
  const list = (counts: (type: RecordType) => number) =>
    RECORD_TYPES.map((type) => countOf(type, counts(type))).join(', ');
  return {
    message:
      `Archive ${outcome.archive.id} purged: deleted ${list((type) => outcome.purged[type])}; ` +
      `kept ${list((type) => kept[type].count)} (see kept for why)`,
    archive: presentArchive(outcome.archive, dataDir),
    purged: outcome.purged,
    kept,
    alreadyDeleted: outcome.alreadyDeleted,
  };
}

export const presentArchiveList = (rows: ArchiveRow[], dataDir: string): ArchiveList => ({
  archives: rows.map((row) => presentArchive(row, dataDir)),
});

export const presentPreview = (preview: PreviewRecord): ArchivePreview => ({
  recordsToArchive: preview.recordsToArchive,
  estimatedSize: humanSize(preview.estimatedBytes),
});
