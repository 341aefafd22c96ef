import { z } from 'zod';
import '../../http/openapi';

export const Backup = z
  .object({
    filename: z.string(),
    size: z.number().int().openapi({ description: 'bytes' }),
    createdAt: z.string().datetime(),
    type: z.enum(['manual', 'scheduled']),
  })
  .openapi('Backup');
export type Backup = z.infer<typeof Backup>;

export const BackupList = z.object({ backups: z.array(Backup) }).openapi('BackupList');
export type BackupList = z.infer<typeof BackupList>;

/** A download's body: the dump file's bytes. */
export const BackupFileBody = z.string().openapi({ type: 'string', format: 'binary' });

export const BackupStats = z
  .object({
    totalBackups: z.number().int(),
    totalSize: z.number().int().openapi({ description: 'bytes' }),
    oldestBackup: z.string().datetime().nullable(),
    newestBackup: z.string().datetime().nullable(),
  })
  .openapi('BackupStats');
export type BackupStats = z.infer<typeof BackupStats>;

export const CreatedBackup = z
  .object({ message: z.string(), filename: z.string(), size: z.number().int() })
  .openapi('CreatedBackup');
export type CreatedBackup = z.infer<typeof CreatedBackup>;

export const RestoredBackup = z
  .object({
    message: z.string(),
    filename: z.string(),
    migrationsApplied: z
      .array(z.string())
      .openapi({ description: 'migrations newer than the backup, applied after restoring it' }),
  })
  .openapi('RestoredBackup');
export type RestoredBackup = z.infer<typeof RestoredBackup>;

export const BackupFilenameParams = z.object({
  filename: z.string().openapi({ description: 'stores-<YYYYMMDD-HHMMSS>-<manual|scheduled>[-<n>].dump, as listed' }),
});

const FREQUENCIES = ['hourly', 'daily', 'weekly'] as const;
const TIME_MESSAGE = 'must be a time HH:MM (24-hour)';
const RETENTION_MESSAGE = 'must be a whole number from 1 to 1000';
/** A missing field says so; a wrong one says what it must be. */
const requiredAnd = (message: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : message),
});

export const BackupSchedule = z
  .object({
    enabled: z.boolean(requiredAnd('must be true or false')),
    frequency: z.enum(FREQUENCIES, requiredAnd('must be hourly, daily or weekly')),
    time: z
      .string(requiredAnd(TIME_MESSAGE))
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: TIME_MESSAGE })
      .openapi({
        example: '02:00',
        description: "local time of the server's time zone; for hourly backups only the minute counts",
      }),
    retention: z
      .number(requiredAnd(RETENTION_MESSAGE))
      .int({ error: RETENTION_MESSAGE })
      .min(1, { error: RETENTION_MESSAGE })
      .max(1000, { error: RETENTION_MESSAGE })
      .openapi({ description: 'how many scheduled backups to keep (manual backups are never deleted)' }),
  })
  .openapi('BackupSchedule');
export type BackupSchedule = z.infer<typeof BackupSchedule>;

export const BackupScheduleStatus = BackupSchedule.extend({
  nextRunAt: z.string().datetime().nullable().openapi({ description: 'null while the schedule is disabled' }),
  lastRun: z
    .object({
      at: z.string().datetime(),
      filename: z.string().nullable(),
      ok: z.boolean(),
      error: z.string().nullable(),
    })
    .nullable()
    .openapi({ description: 'the last scheduled backup that finished, or null' }),
}).openapi('BackupScheduleStatus');
export type BackupScheduleStatus = z.infer<typeof BackupScheduleStatus>;
