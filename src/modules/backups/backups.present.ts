import type { BackupFile } from './backups.files';
import type { ScheduleStatusRecord } from './backups.schedule';
import type {
  Backup,
  BackupList,
  BackupScheduleStatus,
  BackupStats,
  CreatedBackup,
  RestoredBackup,
} from './backups.schemas';

export const presentBackup = (b: BackupFile): Backup => ({
  filename: b.filename,
  size: b.size,
  createdAt: b.createdAt.toISOString(),
  type: b.type,
});

export const presentBackupList = (backups: BackupFile[]): BackupList => ({ backups: backups.map(presentBackup) });

export const presentCreatedBackup = (backup: { filename: string; size: number }): CreatedBackup => ({
  message: 'Backup created',
  filename: backup.filename,
  size: backup.size,
});

export function presentBackupStats(stats: {
  totalBackups: number;
  totalSize: number;
  oldestBackup: Date | null;
  newestBackup: Date | null;
}): BackupStats {
  return {
    ...stats,
    oldestBackup: stats.oldestBackup?.toISOString() ?? null,
    newestBackup: stats.newestBackup?.toISOString() ?? null,
  };
}

export function presentScheduleStatus(status: ScheduleStatusRecord): BackupScheduleStatus {
  const { enabled, frequency, time, retention, nextRunAt, lastRun } = status;
  return {
    enabled,
    frequency,
    time,
    retention,
    nextRunAt: nextRunAt?.toISOString() ?? null,
    lastRun: lastRun
      ? { at: lastRun.at.toISOString(), filename: lastRun.filename, ok: lastRun.ok, error: lastRun.error }
      : null,
  };
}

export const presentRestored = (filename: string, result: { migrationsApplied: string[] }): RestoredBackup => ({
  message: 'Database restored; everyone must sign in again',
  filename,
  migrationsApplied: result.migrationsApplied,
});
