import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeLeftoverFiles } from '../../src/lib/files';
import { UNFINISHED_ARCHIVE } from '../../src/modules/archives/archives.service';
import { UNFINISHED_BACKUP } from '../../src/modules/backups/backups.files';

const DAY = 24 * 3_600_000;
let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-leftovers-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

async function file(name: string, ageMs: number) {
  const full = path.join(dir, name);
  await fs.writeFile(full, 'x');
  const at = new Date(Date.now() - ageMs);
  await fs.utimes(full, at, at);
}

describe('unfinished backup and archive files (removed at start-up)', () => {
  it('removes only unfinished files older than the age given; backups, archives and recent writes stay', async () => {
    await file('.unfinished-0123456789abcdef.dump', 2 * DAY);
    await file('.unfinished-fedcba9876543210.dump', 60_000);
    await file('stores-20261101-020000-scheduled.dump', 30 * DAY);
    await file('archive-7-20261101-020000.jsonl.gz.partial', 2 * DAY);
    await file('archive-8-20261101-020000.jsonl.gz', 30 * DAY);
    await file('notes.txt', 30 * DAY);

    expect(await removeLeftoverFiles(dir, UNFINISHED_BACKUP, DAY)).toEqual(['.unfinished-0123456789abcdef.dump']);
    expect(await removeLeftoverFiles(dir, UNFINISHED_ARCHIVE, DAY)).toEqual([
      'archive-7-20261101-020000.jsonl.gz.partial',
    ]);
    expect((await fs.readdir(dir)).sort()).toEqual([
      '.unfinished-fedcba9876543210.dump',
      'archive-8-20261101-020000.jsonl.gz',
      'notes.txt',
      'stores-20261101-020000-scheduled.dump',
    ]);
  });

  it('answers nothing for a folder that does not exist yet', async () => {
    expect(await removeLeftoverFiles(path.join(dir, 'missing'), UNFINISHED_BACKUP, DAY)).toEqual([]);
  });
});
