import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { NotFound } from '../../http/errors';
import { readFolder } from '../../lib/files';

export type BackupType = 'manual' | 'scheduled';

export type BackupFile = { filename: string; size: number; createdAt: Date; type: BackupType };

/**
 * stores-<YYYYMMDD-HHMMSS UTC>-<type>[-<n>].dump: -n (from 2) tells apart backups taken in the
 * same second. Nothing else in the folder is a backup, whatever a request asks for.
 */
const BACKUP_NAME =
  /^stores-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-(manual|scheduled)(?:-([2-9]|[1-9]\d{1,3}))?\.dump$/;
const MAX_SAME_SECOND = 9999;

type ParsedName = { createdAt: Date; type: BackupType; sequence: number };

function parseName(filename: string): ParsedName | undefined {
  const m = BACKUP_NAME.exec(filename);
  if (!m) return undefined;
  const [year, month, day, hours, minutes, seconds] = m.slice(1, 7).map(Number);
  const createdAt = new Date(Date.UTC(year, month - 1, day, hours, minutes, seconds));
  const parsed = { createdAt, type: m[7] as BackupType, sequence: m[8] ? Number(m[8]) : 1 };
  // 20261340-... matches the pattern but is no moment: its name does not come back from the date.
  return backupName(parsed.createdAt, parsed.type, parsed.sequence) === filename ? parsed : undefined;
}

function backupName(at: Date, type: BackupType, sequence: number): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `stores-${stamp}-${type}${sequence > 1 ? `-${sequence}` : ''}.dump`;
}

const newestFirst = (a: BackupFile & ParsedName, b: BackupFile & ParsedName) =>
  b.createdAt.getTime() - a.createdAt.getTime() || b.sequence - a.sequence;

/** The name of a dump still being written (or left by a process killed while writing it). */
export const UNFINISHED_BACKUP = /^\.unfinished-[0-9a-f]{16}\.dump$/;

/** The backups folder, DATA_DIR/backups: the only place backups are read from, written to or deleted in. */
export function backupFolder(dataDir: string) {
  const folder = path.join(dataDir, 'backups');

  /** The path of a backup's name, or 404: the name is checked before any path is built from it. */
  function pathOf(filename: string): string {
    if (!parseName(filename)) throw NotFound('Backup not found');
    return path.join(folder, filename);
  }

  return {
    path: folder,

    /** Regular files with a backup's name, newest first; symbolic links and unfinished dumps are not backups. */
    async list(): Promise<BackupFile[]> {
      const entries = await readFolder(folder);
      const backups: (BackupFile & ParsedName)[] = [];
      for (const entry of entries) {
        const parsed = entry.isFile() ? parseName(entry.name) : undefined;
        if (!parsed) continue;
        const stat = await fs.lstat(path.join(folder, entry.name)).catch(() => undefined);
        if (stat?.isFile()) backups.push({ filename: entry.name, size: stat.size, ...parsed });
      }
      return backups
        .sort(newestFirst)
        .map(({ filename, size, createdAt, type }) => ({ filename, size, createdAt, type }));
    },

    /**
     * Opens a backup for reading. O_NOFOLLOW and the check on the open file (not on the name)
     * mean a symbolic link or anything but a regular file is never read, even if swapped in.
     */
    async open(filename: string): Promise<{ handle: FileHandle; size: number }> {
      const handle = await fs
        .open(pathOf(filename), constants.O_RDONLY | constants.O_NOFOLLOW)
        .catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT' || err.code === 'ELOOP') throw NotFound('Backup not found');
          throw err;
        });
      const stat = await handle.stat();
      if (!stat.isFile()) {
        await handle.close();
        throw NotFound('Backup not found');
      }
      return { handle, size: stat.size };
    },

    async delete(filename: string): Promise<void> {
      const file = pathOf(filename);
      const stat = await fs.lstat(file).catch(() => undefined);
      if (!stat?.isFile()) throw NotFound('Backup not found');
      await fs.unlink(file);
    },

    /**
     * Writes a new backup: write() fills a private temporary file through its descriptor; only
     * when it succeeds is the file linked under its final name, which never replaces another
     * backup (link fails on an existing name; the next -n is tried). A failure leaves nothing.
     */
    async create(type: BackupType, write: (fd: number) => Promise<void>): Promise<{ filename: string; size: number }> {
      await fs.mkdir(folder, { recursive: true, mode: 0o700 });
      const temporary = path.join(folder, `.unfinished-${randomBytes(8).toString('hex')}.dump`);
      const handle = await fs.open(temporary, 'wx', 0o600);
      try {
        try {
          await write(handle.fd);
        } finally {
          await handle.close();
        }
        const { size } = await fs.stat(temporary);
        const at = new Date();
        for (let sequence = 1; sequence <= MAX_SAME_SECOND; sequence += 1) {
          const filename = backupName(at, type, sequence);
          try {
            await fs.link(temporary, path.join(folder, filename));
            return { filename, size };
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
          }
        }
        throw new Error(`more than ${MAX_SAME_SECOND} backups named for ${at.toISOString()}`);
      } finally {
        await fs.unlink(temporary).catch(() => undefined);
      }
    },
  };
}
