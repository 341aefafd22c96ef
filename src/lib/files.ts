import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** The entries of a folder the service creates on first use: none while it does not exist yet. */
export function readFolder(dir: string): Promise<Dirent[]> {
  return fs.readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
}

/**
 * Deletes the files in dir whose names match pattern and that were last written more than
 * olderThanMs ago: what a process killed mid-write leaves behind (an unfinished dump, a partial
 * archive). The age keeps a write still running on another instance sharing the folder safe.
 * Answers the names deleted.
 */
export async function removeLeftoverFiles(
  dir: string,
  pattern: RegExp,
  olderThanMs: number,
  now = Date.now(),
): Promise<string[]> {
  const entries = await readFolder(dir);
  const removed: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile() || !pattern.test(entry.name)) continue;
    const file = path.join(dir, entry.name);
    const { mtimeMs } = await fs.stat(file);
    if (now - mtimeMs <= olderThanMs) continue;
    await fs.rm(file, { force: true });
    removed.push(entry.name);
  }
  return removed;
}
