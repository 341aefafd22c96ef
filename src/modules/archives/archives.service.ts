import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Knex } from 'knex';
import { BadRequest, InternalError, NotFound } from '../../http/errors';
import type { Actor } from '../audit/audit.actor';
import { auditTrail } from '../audit/audit.service';
import { APP_VERSION } from '../../lib/version';
import { movementsReferencing } from '../stock-movements/stock-movements.queries';
import { cutoff, lineHash, olderThan, RECORD_LINES, recordsOf } from './archives.records';
import { sql, toRaw, type Sql } from '../../db/sql';
import { transaction } from '../../db/transaction';
import { removeNotesOn } from '../notes/notes.queries';
import { KEEP_REASONS, RECORD_TYPES, type Counts, type CreateArchive, type RecordType } from './archives.schemas';
import type { ReferenceCounters } from '../../db/references';

export type ArchiveRow = {
  id: number;
  archive_name: string;
  age_threshold_days: number;
  record_types: RecordType[];
  cutoff: Date;
  sales_count: number;
  orders_count: number;
  stock_movements_count: number;
  size_bytes: number;
  sha256: string;
  status: 'completed' | 'purged';
  created_by: string | null;
  created_at: Date;
  purged_by: string | null;
  purged_at: Date | null;
};

type KeepReason<T extends RecordType> = keyof (typeof KEEP_REASONS)[T];

/** What an archive with a threshold would hold now, and the estimated size of its file in bytes. */
export type PreviewRecord = { recordsToArchive: Counts; estimatedBytes: number };

export type PurgeOutcome = {
  archive: ArchiveRow;
  purged: Counts & { notes: number };
  /** per type, how many records each reason kept */
  kept: Record<RecordType, Record<string, number>>;
  alreadyDeleted: Counts;
};

/**
 * Compressed size of an archive over the size of its JSON lines, measured with this code: 0.091
 * on 20,000 sales of 1-4 of 50,000 items by 20 clerks, with their movements and some notes; 0.052
 * on the bench's 100,000 generated sales (repetitive, so it compresses better than real data).
 * Rounded up to 0.10 so that the preview errs on the large side.
 */
export const GZIP_RATIO = 0.1;

/** About how many records per type the preview measures (every one when there are fewer). */
const PREVIEW_SAMPLE = 2000;

/** Rows fetched (and written to the gzip stream) per query while an archive is written. */
const PAGE_SIZE = 1000;

const ARCHIVE_NAME = /^archive-\d+-\d{8}-\d{6}\.jsonl\.gz$/;
/** An archive file still being written (or left by a process killed while writing it). */
export const UNFINISHED_ARCHIVE = /^archive-\d+-\d{8}-\d{6}\.jsonl\.gz\.partial$/;

/** DATA_DIR/archives: where the archive files are written. */
export const archivesDirectory = (dataDir: string) => path.join(dataDir, 'archives');

/** archive-<id>-<YYYYMMDD-HHMMSS UTC>.jsonl.gz: built from the archive's own id and time, never from a request. */
const archiveName = (id: number, createdAt: Date) =>
  `archive-${id}-${createdAt.toISOString().slice(0, 19).replace(/-|:/g, '').replace('T', '-')}.jsonl.gz`;

/** The counts of records an archive holds, by type. */
export const countsOf = (row: ArchiveRow): Counts => ({
  sales: row.sales_count,
  orders: row.orders_count,
  stock_movements: row.stock_movements_count,
});

/** Size and sha256 of a file, read as a stream. */
async function fileDigest(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest('hex') };
}

const isMissingFile = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** How many records of a type are older than the threshold, as of the transaction's start. */
async function countOlder(db: Knex | Knex.Transaction, type: RecordType, days: number): Promise<number> {
  const { rows } = await toRaw<{ rows: { n: number }[] }>(
    db,
    sql`SELECT count(*)::int AS n FROM ${recordsOf(type, 'r')} WHERE ${olderThan(days)}`,
  );
  return rows[0].n;
}

/**
 * Archives of old sales, orders and stock movements: a gzip file of JSON lines under
 * DATA_DIR/archives, the ids it holds recorded beside it, and a purge that deletes exactly those
 * records from the database, keeping what the service still needs.
 */
/** Whether an archive's records may still be purged: once, so not when it is purged already. The service's refusal and the page's Purge button. */
export const isPurgeable = (archive: { status: 'completed' | 'purged' }): boolean => archive.status !== 'purged';

export function archivesService(db: Knex, dataDir: string) {
  const directory = archivesDirectory(dataDir);

  function filePath(row: ArchiveRow): string {
    // The name was built by create(); checking it again keeps a tampered row from naming another file.
    if (!ARCHIVE_NAME.test(row.archive_name)) throw InternalError(`Archive ${row.id} has an invalid file name`);
    return path.join(directory, row.archive_name);
  }

  async function get(id: number): Promise<ArchiveRow> {
    const row = await db<ArchiveRow>('archives').where({ id }).first();
    if (!row) throw NotFound('Archive not found');
    return row;
  }

  /** The file's JSON lines, manifest first, each page of records recorded in archive_records as it is read. */
  async function* archiveLines(
    trx: Knex.Transaction,
    archiveId: number,
    { types, days, manifest }: { types: RecordType[]; days: number; manifest: object },
  ) {
    yield `${JSON.stringify(manifest)}\n`;
    for (const type of types) {
      const { line } = RECORD_LINES[type];
      let after = 0;
      for (;;) {
        const { rows } = await toRaw<{ rows: { id: number; line: string }[] }>(
          trx,
          sql`WITH page AS (
             SELECT r.id, ${line} AS line FROM ${recordsOf(type, 'r')} WHERE ${olderThan(days)} AND r.id > ${after} ORDER BY r.id LIMIT ${PAGE_SIZE}
           ), recorded AS (
             INSERT INTO archive_records (archive_id, record_type, record_id, content_hash)
             SELECT ${archiveId}, ${type}, id, ${lineHash(sql.raw('line'))} FROM page
           )
           SELECT id, line FROM page ORDER BY id`,
        );
        if (rows.length === 0) break;
        yield `${rows.map((r) => r.line).join('\n')}\n`;
        if (rows.length < PAGE_SIZE) break;
        after = rows[rows.length - 1].id;
      }
    }
  }

  /**
   * Locks the archive's sales or orders still in the database, in id order, before the plan reads
   * them: a refund, payment or receipt in flight (they lock the same rows) commits first and is
   * seen by the plan; one that comes later waits and then finds the record gone.
   */
  const lockHeld = (trx: Knex.Transaction, archiveId: number, type: 'sales' | 'orders') =>
    RECORD_LINES[type].source.lock(
      trx,
      sql`SELECT record_id FROM archive_records WHERE archive_id = ${archiveId} AND record_type = ${type}`,
    );

  /**
   * Fills purge_plan with the archive's records of one type still in the database, each with the
   * first reason (a CASE over `reasons`, in order) to keep it, or none. A record whose line no
   * longer hashes to what the file holds changed since it was archived: deleting it would lose that change.
   */
  const planType = <T extends RecordType>(
    trx: Knex.Transaction,
    archiveId: number,
    type: T,
    reasons: [Exclude<KeepReason<T>, 'changedSinceArchived'>, Sql][],
  ) =>
    toRaw(
      trx,
      sql`INSERT INTO purge_plan (record_type, record_id, keep_reason)
       SELECT ${type}, r.id, CASE ${sql.join(
         reasons.map(([reason, condition]) => sql`WHEN ${condition} THEN ${String(reason)}`),
         sql.raw(' '),
       )}
                            WHEN ${lineHash(RECORD_LINES[type].line)} <> a.content_hash THEN 'changedSinceArchived' END
         FROM archive_records a JOIN ${recordsOf(type, 'r')} ON r.id = a.record_id
        WHERE a.archive_id = ${archiveId} AND a.record_type = ${type}`,
    );

  /** A movement that stays in the database (not purged by this plan) names the record. */
  const namedByStayingMovement = (referenceType: string) =>
    sql`EXISTS (SELECT 1 FROM (${movementsReferencing(referenceType, sql.raw('r.reference'))}) m
              WHERE NOT EXISTS (SELECT 1 FROM purge_plan p
                                 WHERE p.record_type = 'stock_movements' AND p.record_id = m.id AND p.keep_reason IS NULL))`;

  /** Each owner deletes its records the plan does not keep, in the purge's transaction. */
  const deletePlanned = (trx: Knex.Transaction, type: RecordType) =>
    RECORD_LINES[type].source.purge(
      trx,
      sql`SELECT record_id FROM purge_plan WHERE record_type = ${type} AND keep_reason IS NULL`,
    );

  // The notes of the purged records go in the same transaction, by the plan rather than by a
  // list of ids (a purge may cover more ids than one statement can bind). A note written after the
  // archive (which the plan missed because it committed after the plan was made) stays rather than
  // being deleted without a copy.
  const deletePlannedNotes = (
    trx: Knex.Transaction,
    archiveId: number,
    type: 'sales' | 'orders',
    referenceType: string,
  ) =>
    removeNotesOn(
      trx,
      referenceType,
      sql`SELECT record_id FROM purge_plan WHERE record_type = ${type} AND keep_reason IS NULL`,
      sql`(SELECT created_at FROM archives WHERE id = ${archiveId})`,
    );

  return {
    /**
     * Counts of what an archive with this threshold would hold now, and its file's estimated size:
     * the JSON lines of a random sample of about PREVIEW_SAMPLE records per type (all of them when
     * fewer), built by the same SQL that writes the file, scaled to the count, times GZIP_RATIO.
     */
    async preview(days: number): Promise<PreviewRecord> {
      const figures = await Promise.all(
        RECORD_TYPES.map(async (type) => {
          const { line } = RECORD_LINES[type];
          const count = await countOlder(db, type, days);
          if (count === 0) return { count, bytes: 0 };
          const { rows: sampled } = await toRaw<{ rows: { n: number; bytes: number }[] }>(
            db,
            sql`SELECT count(*)::int AS n, coalesce(sum(octet_length(line) + 1), 0)::bigint AS bytes
               FROM (SELECT ${line} AS line FROM ${recordsOf(type, 'r')} WHERE ${olderThan(days)} AND random() < ${Math.min(1, PREVIEW_SAMPLE / count)}) lines`,
          );
          const { n, bytes } = sampled[0];
          return { count, bytes: n === 0 ? 0 : (bytes / n) * count };
        }),
      );
      const recordsToArchive = Object.fromEntries(RECORD_TYPES.map((type, i) => [type, figures[i].count])) as Counts;
      const jsonBytes = figures.reduce((total, f) => total + f.bytes, 0);
      return { recordsToArchive, estimatedBytes: Math.ceil(jsonBytes * GZIP_RATIO) };
    },

    /** newest first */
    list(): Promise<ArchiveRow[]> {
      return db<ArchiveRow>('archives').orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ]);
    },

    /**
     * Writes the archive file and records its ids in one REPEATABLE READ transaction, so the
     * manifest's counts, the lines and the id list all come from one snapshot. The file is written
     * under a .partial name and renamed when complete; on any failure the file is removed and the
     * transaction (archive row and id list) rolled back. Nothing is deleted.
     */
    async create(input: CreateArchive, actor: Actor): Promise<ArchiveRow> {
      const types = RECORD_TYPES.filter((type) => input.includeRecordTypes.includes(type));
      const days = input.ageThresholdDays;
      await fs.mkdir(directory, { recursive: true });
      let leftBehind: string | undefined;
      try {
        return await transaction(db, { isolationLevel: 'repeatable read' }, async (trx) => {
          // Timestamps in the file, and so the hashes a purge compares, are UTC whatever the server's zone.
          await trx.raw(`SET LOCAL TimeZone = 'UTC'`);
          const { rows } = await toRaw<{ rows: { id: number; created_at: Date; cutoff: Date }[] }>(
            trx,
            sql`SELECT nextval(pg_get_serial_sequence('archives', 'id'))::int AS id, now() AS created_at, ${cutoff(days)} AS cutoff`,
          );
          const { id, created_at: createdAt, cutoff: cutoffAt } = rows[0];
          const counts: Counts = { sales: 0, orders: 0, stock_movements: 0 };
          for (const type of types) counts[type] = await countOlder(trx, type, days);

          const name = archiveName(id, createdAt);
          const final = path.join(directory, name);
          const partial = `${final}.partial`;
          leftBehind = partial;
          const manifest = {
            type: 'manifest',
            formatVersion: 1,
            recordTypes: types,
            counts,
            ageThresholdDays: days,
            cutoff: cutoffAt.toISOString(),
            createdAt: createdAt.toISOString(),
            serviceVersion: APP_VERSION,
          };
          // highWaterMark 1: one page waits for the gzip stream at a time (the disk sets the pace)
          await pipeline(
            Readable.from(archiveLines(trx, id, { types, days, manifest }), { highWaterMark: 1 }),
            createGzip(),
            createWriteStream(partial, { flags: 'wx' }),
          );
          const { size, sha256 } = await fileDigest(partial);
          const [row] = await trx('archives')
            .insert({
              id,
              archive_name: name,
              age_threshold_days: days,
              record_types: types,
              // the transaction's own now(), to the microsecond (the JS dates stop at milliseconds)
              cutoff: toRaw(trx, cutoff(days)),
              sales_count: counts.sales,
              orders_count: counts.orders,
              stock_movements_count: counts.stock_movements,
              size_bytes: size,
              sha256,
              status: 'completed',
              created_by: actor.userId,
              created_at: trx.fn.now(),
            })
            .returning<ArchiveRow[]>('*');
          await auditTrail(trx).record(actor, {
            entityType: 'archive',
            entityId: row.id,
            action: 'create',
            after: row,
          });
          await fs.rename(partial, final);
          leftBehind = final;
          return row;
        });
      } catch (err) {
        if (leftBehind) await fs.rm(leftBehind, { force: true });
        throw err;
      }
    },

    /** The archive's file, opened; 404 when the archive is unknown or its file is gone. */
    async openFile(id: number) {
      const row = await get(id);
      const handle = await fs.open(filePath(row)).catch((err: unknown) => {
        if (isMissingFile(err)) throw NotFound(`The file of archive ${id} is missing`);
        throw err;
      });
      return { name: row.archive_name, handle, size: (await handle.stat()).size };
    },

    /**
     * Deletes, in one transaction, the records the archive holds (by id) that the service no
     * longer needs, with the lines and notes inside them, and marks the archive purged. Kept: each
     * item's latest movement (the ledger reconciliation reads it); sales partially refunded or not
     * paid; orders still awaiting deliveries; sales and orders a staying movement names; anything
     * changed since it was archived. Refused (400) when already purged, or when the file is missing
     * or no longer the one written: the file must hold every record deleted.
     */
    async purge(id: number, actor: Actor): Promise<PurgeOutcome> {
      const archive = await get(id);
      const alreadyPurged = () => BadRequest(`Archive ${id} has already been purged`);
      if (!isPurgeable(archive)) throw alreadyPurged();
      const digest = await fileDigest(filePath(archive)).catch((err: unknown) => {
        if (isMissingFile(err)) return undefined;
        throw err;
      });
      if (!digest)
        throw BadRequest(
          `The file of archive ${id} (${archive.archive_name}) is missing: nothing is purged while the archive is the records' only copy`,
        );
      if (digest.sha256 !== archive.sha256) {
        throw BadRequest(
          `The file of archive ${id} (${archive.archive_name}) is not the one written (its checksum differs): nothing is purged`,
        );
      }

      return transaction(db, async (trx) => {
        await trx.raw(`SET LOCAL TimeZone = 'UTC'`);
        // One purge at a time: two purges of overlapping archives would delete the same movements
        // in different orders (a deadlock), and a second purge of this archive must see it purged.
        await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['archives.purge']);
        const current = await trx<ArchiveRow>('archives').where({ id }).first('status');
        if (current!.status === 'purged') throw alreadyPurged();
        await lockHeld(trx, id, 'sales');
        await lockHeld(trx, id, 'orders');
        await trx.raw(
          `CREATE TEMP TABLE purge_plan (record_type text NOT NULL, record_id int NOT NULL, keep_reason text,
             PRIMARY KEY (record_type, record_id)) ON COMMIT DROP`,
        );
        // Movements first: which sales and orders a staying movement names depends on them.
        await planType(trx, id, 'stock_movements', [['latestOfItem', sql.raw('r.latest_of_item')]]);
        await planType(trx, id, 'sales', [
          ['partiallyRefunded', sql.raw('r.partially_refunded')],
          ['unpaid', sql.raw('r.unpaid')],
          ['referencedByStockMovement', namedByStayingMovement('sale')],
        ]);
        await planType(trx, id, 'orders', [
          ['notFullyReceived', sql.raw('r.not_fully_received')],
          ['referencedByStockMovement', namedByStayingMovement('order')],
        ]);

        const notes =
          (await deletePlannedNotes(trx, id, 'sales', 'sale')) + (await deletePlannedNotes(trx, id, 'orders', 'order'));
        const purged = { sales: 0, orders: 0, stock_movements: 0, notes };
        for (const type of RECORD_TYPES) purged[type] = await deletePlanned(trx, type);

        const { rows: planned } = await trx.raw<{
          rows: { record_type: RecordType; keep_reason: string | null; n: number }[];
        }>('SELECT record_type, keep_reason, count(*)::int AS n FROM purge_plan GROUP BY record_type, keep_reason');
        const kept = Object.fromEntries(
          RECORD_TYPES.map((type) => [
            type,
            Object.fromEntries(Object.keys(KEEP_REASONS[type]).map((reason) => [reason, 0])),
          ]),
        ) as PurgeOutcome['kept'];
        const alreadyDeleted = countsOf(archive);
        for (const { record_type: type, keep_reason: reason, n } of planned) {
          alreadyDeleted[type] -= n;
          if (reason) kept[type][reason] = n;
        }

        const [row] = await trx('archives')
          .where({ id })
          .update({ status: 'purged', purged_at: trx.fn.now(), purged_by: actor.userId })
          .returning<ArchiveRow[]>('*');
        await auditTrail(trx).record(actor, {
          entityType: 'archive',
          entityId: id,
          action: 'purge',
          before: { status: archive.status },
          after: { status: row.status, purged, kept },
        });
        return { archive: row, purged, kept, alreadyDeleted };
      });
    },
  };
}

/** The rows of archives that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const archivesReferences: ReferenceCounters = {
  users: [
    {
      table: 'archives',
      column: 'created_by',
      count: (id) => sql`SELECT count(*) FROM archives WHERE created_by = ${id}`,
    },
    {
      table: 'archives',
      column: 'purged_by',
      count: (id) => sql`SELECT count(*) FROM archives WHERE purged_by = ${id}`,
    },
  ],
};
