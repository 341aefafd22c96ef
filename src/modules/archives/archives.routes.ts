import type { Deps } from '../../deps';
import { actorOf } from '../audit/audit.actor';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { sendFileDownload } from '../../http/send-file';
import { IdParams } from '../../http/validate';
import { presentArchive, presentArchiveList, presentPreview, presentPurge } from './archives.present';
import {
  Archive,
  ArchiveFileBody,
  ArchiveList,
  ArchivePreview,
  CreateArchive,
  KEEP_REASONS,
  PreviewQuery,
  PurgeResult,
} from './archives.schemas';
import { archivesService, GZIP_RATIO } from './archives.service';

const reasonsText = Object.entries(KEEP_REASONS)
  .map(
    ([type, reasons]) =>
      `${type}: ${Object.entries(reasons)
        .map(([key, why]) => `${key} (${why})`)
        .join('; ')}`,
  )
  .join('. ');

export function archivesRoutes({ db, config, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Archives');
  const archives = archivesService(db, config.dataDir);
  const invalid = { description: 'Validation failed', schema: ValidationErrorBody };
  const notFound = { description: 'Archive not found', schema: MessageBody };

  api.get(
    '/archives',
    {
      operationId: 'listArchives',
      summary: 'All archives, newest first',
      access: 'admin',
      responses: { 200: { description: 'Archives', schema: ArchiveList } },
    },
    async (_req, res) => {
      res.json(presentArchiveList(await archives.list(), config.dataDir));
    },
  );

  api.get(
    '/archives/preview',
    {
      operationId: 'previewArchive',
      summary: 'What an archive with this age threshold would hold',
      description:
        'Counts the sales, orders and stock movements created more than ageThresholdDays days ago (days of 24 hours). ' +
        'estimatedSize is the size of their JSON lines, measured in the database with the same SQL that writes the file ' +
        '(on a random sample of about 2,000 records per type when there are more, scaled to the count), times ' +
        `${GZIP_RATIO} (the gzip ratio measured on this service's data, rounded up), in binary units (1 KB = 1024 bytes).`,
      access: 'admin',
      query: PreviewQuery,
      responses: { 200: { description: 'Preview', schema: ArchivePreview }, 400: invalid },
    },
    async (req, res) => {
      const { ageThresholdDays } = req.input.query;
      res.json(presentPreview(await archives.preview(ageThresholdDays)));
    },
  );

  api.post(
    '/archives/create',
    {
      operationId: 'createArchive',
      summary: 'Write an archive file of old records (deletes nothing)',
      description:
        'Writes DATA_DIR/archives/archive-<id>-<YYYYMMDD-HHMMSS>.jsonl.gz: gzip of JSON lines, one record a line, streamed ' +
        'from one database snapshot. The first line is the manifest {type: "manifest", formatVersion, recordTypes, counts, ' +
        'ageThresholdDays, cutoff, createdAt, serviceVersion}; then {type: "sale"|"order"|"stock_movement", record} lines, ' +
        'in that order and by id, each record being the row as stored (snake_case columns). A sale carries its lines ' +
        '(items) and its notes (attached_notes); an order its lines, its notes and its invoice metadata (invoice: filename, ' +
        'size_bytes, sha256, uploaded_by, uploaded_at; the PDF bytes are not archived). The ids written are recorded with ' +
        'the archive: a purge deletes those and no others. An archive of zero records is allowed (the manifest alone).',
      access: 'admin',
      body: CreateArchive,
      responses: { 201: { description: 'Archive written', schema: Archive }, 400: invalid },
    },
    async (req, res) => {
      const body = req.input.body;
      const row = await archives.create(body, actorOf(req));
      res.status(201).json(presentArchive(row, config.dataDir));
    },
  );

  api.get(
    '/archives/:id/download',
    {
      operationId: 'downloadArchive',
      summary: "Download an archive's file",
      description:
        'Streamed as application/gzip, as an attachment named after the archive. Purged archives stay downloadable.',
      access: 'admin',
      params: IdParams,
      responses: {
        200: { description: 'The file', schema: ArchiveFileBody, contentType: 'application/gzip' },
        404: { description: 'Archive not found, or its file is gone', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const file = await archives.openFile(id);
      await sendFileDownload(res, { ...file, contentType: 'application/gzip' });
    },
  );

  api.delete(
    '/archives/:id/purge-data',
    {
      operationId: 'purgeArchivedData',
      summary: 'Delete the records an archive holds, except those the service still needs',
      description:
        'In one transaction, deletes the sales, orders and stock movements whose ids the archive recorded (never re-evaluating ' +
        'their age), with their lines and the notes attached to them, and marks the archive purged. kept counts, per type, ' +
        `the records held back and why: ${reasonsText}. alreadyDeleted counts records no longer in the database. ` +
        '400 when the archive is already purged, or when its file is missing or no longer matches its sha256 ' +
        '(nothing is deleted while the file is not a complete copy).',
      access: 'admin',
      params: IdParams,
      responses: {
        200: { description: 'Purged', schema: PurgeResult },
        400: { description: 'Already purged, or the file is missing or altered', schema: MessageBody },
        404: notFound,
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentPurge(await archives.purge(id, actorOf(req)), config.dataDir));
    },
  );

  return api.router;
}
