import type { Deps } from '../../deps';
import { actorOf } from '../audit/audit.actor';
import { destroySession } from '../../auth/session';
import { ApiRouter } from '../../http/api-router';
import { ErrorBody, MessageBody, ValidationErrorBody } from '../../http/openapi';
import { sendFileDownload } from '../../http/send-file';
import { backupScheduleService } from './backups.schedule';
import {
  presentBackupList,
  presentBackupStats,
  presentCreatedBackup,
  presentRestored,
  presentScheduleStatus,
} from './backups.present';
import {
  BackupFileBody,
  BackupFilenameParams,
  BackupList,
  BackupSchedule,
  BackupScheduleStatus,
  BackupStats,
  CreatedBackup,
  RestoredBackup,
} from './backups.schemas';
import { backupsService } from './backups.service';
import { BACKUP_ADMINS } from './backups.policy';

export function backupsRoutes(deps: Deps) {
  const api = new ApiRouter(deps, '/api', 'Backups');
  const backups = backupsService(deps);
  const schedules = backupScheduleService(deps.db);
  const notFound = { description: 'Not a backup in DATA_DIR/backups', schema: MessageBody };
  const toolsMissing = {
    description: 'pg_dump/pg_restore/psql missing or older than the server; the message names what to install',
    schema: MessageBody,
  };

  api.get(
    '/backups',
    {
      operationId: 'listBackups',
      summary: 'All backups',
      description: 'Newest first. createdAt is the UTC time in the file name.',
      access: BACKUP_ADMINS,
      responses: { 200: { description: 'Backups', schema: BackupList } },
    },
    async (_req, res) => {
      res.json(presentBackupList(await backups.list()));
    },
  );

  api.post(
    '/backups',
    {
      operationId: 'createBackup',
      summary: 'Back up the database now',
      description:
        'pg_dump (custom format) of the whole database, without the rows of sessions and rate_limits, written to ' +
        'DATA_DIR/backups/stores-<YYYYMMDD-HHMMSS>-manual.dump (UTC; -2, -3... when a name is taken). A failed dump leaves no file.',
      access: BACKUP_ADMINS,
      responses: {
        201: { description: 'Written', schema: CreatedBackup },
        500: { description: 'pg_dump failed; its error is in the message', schema: ErrorBody },
        503: toolsMissing,
      },
    },
    async (req, res) => {
      res.status(201).json(presentCreatedBackup(await backups.create('manual', actorOf(req))));
    },
  );

  api.get(
    '/backups/stats',
    {
      operationId: 'getBackupStats',
      summary: 'Backup statistics',
      description:
        'Count and total size in bytes of the backups; oldestBackup and newestBackup are null when there are none.',
      access: BACKUP_ADMINS,
      responses: { 200: { description: 'Statistics', schema: BackupStats } },
    },
    async (_req, res) => {
      res.json(presentBackupStats(await backups.stats()));
    },
  );

  api.get(
    '/backups/schedule/status',
    {
      operationId: 'getBackupScheduleStatus',
      summary: 'The backup schedule',
      description:
        "Times are in the server's local time zone. hourly: at the time's minute every hour; daily: at the time; weekly: on " +
        'Sundays at the time. nextRunAt is when the next scheduled backup is due (null while disabled); lastRun is the last ' +
        'scheduled backup that finished. Before a schedule is first saved: disabled, daily, 02:00, retention 30.',
      access: BACKUP_ADMINS,
      responses: { 200: { description: 'Schedule', schema: BackupScheduleStatus } },
    },
    async (_req, res) => {
      res.json(presentScheduleStatus(await schedules.status(new Date())));
    },
  );

  api.post(
    '/backups/schedule',
    {
      operationId: 'setBackupSchedule',
      summary: 'Set the backup schedule',
      description:
        'All four fields are required. Every instance applies the change at its next minute, without a restart; a slot already ' +
        'past when the schedule is saved is not run. After each successful scheduled backup, scheduled backups beyond the newest ' +
        '`retention` are deleted; manual backups never are. Answers the schedule as GET /api/backups/schedule/status does.',
      access: BACKUP_ADMINS,
      body: BackupSchedule,
      responses: {
        200: { description: 'Saved', schema: BackupScheduleStatus },
        400: { description: 'Validation failed', schema: ValidationErrorBody },
      },
    },
    async (req, res) => {
      await schedules.set(req.input.body);
      res.json(presentScheduleStatus(await schedules.status(new Date())));
    },
  );

  api.get(
    '/backups/:filename/download',
    {
      operationId: 'downloadBackup',
      summary: 'Download a backup',
      description:
        'The dump file as application/octet-stream, as an attachment. Restore it with pg_restore or POST .../restore.',
      access: BACKUP_ADMINS,
      params: BackupFilenameParams,
      responses: {
        200: { description: 'The file', schema: BackupFileBody, contentType: 'application/octet-stream' },
        404: notFound,
      },
    },
    async (req, res) => {
      const { filename } = req.input.params;
      const file = await backups.open(filename);
      await sendFileDownload(res, { ...file, name: filename, contentType: 'application/octet-stream' });
    },
  );

  api.post(
    '/backups/:filename/restore',
    {
      operationId: 'restoreBackup',
      summary: 'Restore the database from a backup',
      description:
        'Destructive. The file is first read in full by pg_restore: a file that is not a complete backup of this service is a 400 ' +
        'and nothing changes. Then the whole database is replaced in one transaction (tables added since the backup are dropped ' +
        'too) while every other API request answers 503; on any error it is rolled back (500, database unchanged). Afterwards ' +
        'the migrations newer than the backup are applied. History stays true: the audit rows written since the backup are kept ' +
        '(with their ids and times), then the restore is recorded (who, which file, when); every sequence continues from the ' +
        'highest value it ever gave out, so no sale, quote or order number (nor record id) issued before the restore is issued ' +
        'again. The backup holds no sessions: everyone, the caller included, signs in again.',
      access: BACKUP_ADMINS,
      params: BackupFilenameParams,
      responses: {
        200: { description: 'Restored', schema: RestoredBackup },
        400: { description: 'Corrupt, truncated or not a backup of this service', schema: MessageBody },
        404: notFound,
        409: { description: 'A restore is already running', schema: MessageBody },
        500: { description: 'Restore failed; the database is unchanged', schema: ErrorBody },
        503: toolsMissing,
      },
    },
    async (req, res) => {
      const { filename } = req.input.params;
      const restored = await backups.restore(filename, actorOf(req));
      // The restored sessions table is empty; saving the caller's session would put it back.
      if (req.authMethod === 'session') await destroySession(req);
      res.json(presentRestored(filename, restored));
    },
  );

  api.delete(
    '/backups/:filename',
    {
      operationId: 'deleteBackup',
      summary: 'Delete a backup',
      access: BACKUP_ADMINS,
      params: BackupFilenameParams,
      responses: { 204: 'Deleted', 404: notFound },
    },
    async (req, res) => {
      const { filename } = req.input.params;
      await backups.delete(filename, actorOf(req));
      res.status(204).end();
    },
  );

  return api.router;
}
