import { z } from 'zod';
import '../../http/openapi';

/** What an archive can hold, in the order the file lists them. */
export const RECORD_TYPES = ['sales', 'orders', 'stock_movements'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** A century: beyond it the cutoff falls before any record this service can hold. */
const MAX_AGE_DAYS = 36_500;
const AGE_MESSAGE = `must be a whole number of days between 0 and ${MAX_AGE_DAYS}`;

const AgeThresholdDays = z
  .number({ error: AGE_MESSAGE })
  .int({ error: AGE_MESSAGE })
  .min(0, { error: AGE_MESSAGE })
  .max(MAX_AGE_DAYS, { error: AGE_MESSAGE })
  .openapi({ description: 'records created more than this many days ago' });

export const PreviewQuery = z.object({
  // digits only: z.coerce would turn '' into 0 and '1e2' into 100
  ageThresholdDays: z
    .string({ error: AGE_MESSAGE })
    .regex(/^\d{1,6}$/, { error: AGE_MESSAGE })
    .transform(Number)
    .pipe(AgeThresholdDays)
    .openapi({ type: 'integer', description: 'records created more than this many days ago' }),
});
export type PreviewQuery = z.infer<typeof PreviewQuery>;

export const CreateArchive = z
  .object({
    ageThresholdDays: AgeThresholdDays,
    includeRecordTypes: z
      .array(z.enum(RECORD_TYPES, { error: `must be one of ${RECORD_TYPES.join(', ')}` }), {
        error: 'must be an array of record types',
      })
      .min(1, { error: 'must name at least one record type' })
      .refine((types) => new Set(types).size === types.length, { error: 'must not name a record type twice' }),
  })
  .openapi('CreateArchive');
export type CreateArchive = z.infer<typeof CreateArchive>;

const Counts = z.object({ sales: z.number().int(), orders: z.number().int(), stock_movements: z.number().int() });
export type Counts = z.infer<typeof Counts>;

export const ArchivePreview = z
  .object({
    recordsToArchive: Counts,
    estimatedSize: z.string().openapi({ example: '1.2 MB' }),
  })
  .openapi('ArchivePreview');
export type ArchivePreview = z.infer<typeof ArchivePreview>;

export const Archive = z
  .object({
    id: z.number().int(),
    archiveName: z.string(),
    archivePath: z.string().openapi({ description: 'where the file lives on the server (under DATA_DIR/archives)' }),
    ageThresholdDays: z.number().int(),
    recordTypes: z.array(z.enum(RECORD_TYPES)),
    cutoff: z.string().datetime().openapi({ description: 'records created before this instant were archived' }),
    recordsArchived: Counts,
    archiveSizeBytes: z.number().int(),
    sha256: z.string().openapi({ description: 'of the file; a purge refuses a file that no longer matches it' }),
    status: z.enum(['completed', 'purged']),
    createdAt: z.string().datetime(),
    purgedAt: z.string().datetime().nullable(),
  })
  .openapi('Archive');
export type Archive = z.infer<typeof Archive>;
export const ArchiveList = z.object({ archives: z.array(Archive) });
export type ArchiveList = z.infer<typeof ArchiveList>;

/** A download's body: the archive file's bytes. */
export const ArchiveFileBody = z.string().openapi({ type: 'string', format: 'binary' });

const Kept = (reasons: Record<string, string>) =>
  z.object({
    count: z.number().int(),
    reasons: z.object(
      Object.fromEntries(
        Object.entries(reasons).map(([key, description]) => [key, z.number().int().openapi({ description })]),
      ),
    ),
  });

export const KEEP_REASONS = {
  sales: {
    partiallyRefunded: 'partially refunded: may still be refunded further',
    unpaid: 'not paid yet (and not fully refunded): still open for finance',
    referencedByStockMovement: 'a stock movement that stays in the database names the sale',
    changedSinceArchived: 'changed (or given a note) after the archive was written, so the file holds an older copy',
  },
  orders: {
    notFullyReceived: 'pending or partially received: deliveries still expected',
    referencedByStockMovement: 'a stock movement that stays in the database names the order',
    changedSinceArchived:
      'changed (or given a note or invoice) after the archive was written, so the file holds an older copy',
  },
  stock_movements: {
    latestOfItem: "its item's latest movement: the ledger reconciliation compares the item's stock with it",
    changedSinceArchived:
      'changed after the archive was written (e.g. its item or user was deleted), so the file holds an older copy',
  },
} as const satisfies Record<RecordType, Record<string, string>>;

export const PurgeResult = z
  .object({
    message: z.string(),
    archive: Archive,
    purged: Counts.extend({ notes: z.number().int().openapi({ description: 'notes of the purged sales and orders' }) }),
    kept: z.object({
      sales: Kept(KEEP_REASONS.sales),
      orders: Kept(KEEP_REASONS.orders),
      stock_movements: Kept(KEEP_REASONS.stock_movements),
    }),
    alreadyDeleted: Counts.openapi({
      description: 'records the archive holds that were no longer in the database (purged through another archive)',
    }),
  })
  .openapi('ArchivePurgeResult');
export type PurgeResult = z.infer<typeof PurgeResult>;
