import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MIGRATIONS_TURN } from '../src/db/migrate';
import { createDb } from '../src/db/knex';
import { backupFolder } from '../src/modules/backups/backups.files';
import { connectionOptions } from '../src/modules/backups/backups.pg-tools';
import { testApp, type TestApp } from './helpers/app';
import { buildCategory, buildUser, TEST_PASSWORD } from './helpers/factories';
import { agentsByRole, type Agents } from './helpers/inventory-factories';
import { untilSomeoneWaitsOnALock } from './helpers/sales-factories';
import {
  appWithAdmin,
  backupPredatingMigration,
  CLIENT_VERSION,
  fakePgBinDir,
  NO_FITTING_CLIENT,
  placeBackupFile,
  PREDATED_MIGRATION,
  SERVER_MAJOR,
  SERVER_VERSION,
} from './backup-helpers';
import { binaryBody } from './helpers/binary-body';

const run = promisify(execFile);

let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
});
afterAll(() => t.close());
if (NO_FITTING_CLIENT) console.warn(`[backups] the tests that make real dumps are skipped: ${NO_FITTING_CLIENT}`);

const MANUAL_NAME = /^stores-\d{8}-\d{6}-manual(-\d+)?\.dump$/;
const backupsDir = (app: TestApp) => path.join(app.dataDir, 'backups');
const listing = async (file: string) => (await run('pg_restore', ['--list', file])).stdout;

/** Tables of public with their row counts, and the migrations: what "the database as it was" means here. */
async function contents(db: Knex) {
  const { rows } = await db.raw<{ rows: { table_name: string }[] }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name NOT IN ('sessions', 'rate_limits', 'audit_log') ORDER BY 1`,
  );
  const counts: Record<string, number> = {};
  for (const { table_name } of rows) counts[table_name] = Number((await db(table_name).count({ n: '*' }))[0].n);
  const migrations = (await db('knex_migrations').orderBy('id').select('name')).map((r) => r.name as string);
  const sequence = (await db.raw(`SELECT last_value FROM categories_id_seq`)).rows[0].last_value;
  return { counts, migrations, sequence };
}

describe('POST /api/backups', () => {
  it.skipIf(NO_FITTING_CLIENT)(
    '201 writes a custom-format dump that pg_restore lists, holding no session or rate-limit rows',
    async () => {
      await t
        .db('rate_limits')
        .insert({ key: `backup-test-${randomBytes(4).toString('hex')}`, points: 1, expire: Date.now() + 60_000 });
      expect(Number((await t.db('sessions').count({ n: '*' }))[0].n)).toBeGreaterThan(0);

      const res = await as.admin.post('/api/backups').expect(201);
      expect(res.body).toEqual({
        message: 'Backup created',
        filename: expect.stringMatching(MANUAL_NAME),
        size: expect.any(Number),
      });
      const file = path.join(backupsDir(t), res.body.filename);
      expect((await fs.stat(file)).size).toBe(res.body.size);
      const toc = await listing(file);
      expect(toc).toMatch(/TABLE public knex_migrations /);
      expect(toc).toMatch(/TABLE DATA public items /);
      expect(toc).toMatch(/TABLE public sessions /);
      expect(toc).not.toMatch(/TABLE DATA public sessions /);
      expect(toc).not.toMatch(/TABLE DATA public rate_limits /);
      expect((await fs.readdir(backupsDir(t))).filter((f) => !MANUAL_NAME.test(f))).toEqual([]);
    },
  );

  it.skipIf(NO_FITTING_CLIENT)("500 with pg_dump's error when the dump fails, and no file is left behind", async () => {
    const failing = await fakePgBinDir({
      pg_dump:
        'if [ "$1" = "--version" ]; then echo "pg_dump (PostgreSQL) 15.4"; exit 0; fi\necho "pg_dump: error: disk on fire" >&2\nexit 1',
    });
    const { app, admin } = await appWithAdmin({ PG_BIN_DIR: failing });
    const res = await admin.post('/api/backups').expect(500);
    expect(res.body).toEqual({ message: 'Backup failed: pg_dump: error: disk on fire' });
    expect(await fs.readdir(backupsDir(app))).toEqual([]);
  });

  it('503 naming what to install when pg_dump is missing', async () => {
    const { admin } = await appWithAdmin({ PG_BIN_DIR: path.join(t.dataDir, 'no-such-dir') });
    const res = await admin.post('/api/backups').expect(503);
    expect(res.body.message).toContain('pg_dump was not found in PG_BIN_DIR');
    expect(res.body.message).toContain(
      `pg_dump ${SERVER_MAJOR} or later is needed to back up PostgreSQL ${SERVER_MAJOR}: install postgresql-client-${SERVER_MAJOR} or later (README: which client for which server) or set PG_BIN_DIR`,
    );
  });

  it('503 when pg_dump is older than the server', async () => {
    const old = await fakePgBinDir({ pg_dump: 'echo "pg_dump (PostgreSQL) 13.16"' });
    const { admin } = await appWithAdmin({ PG_BIN_DIR: old });
    const res = await admin.post('/api/backups').expect(503);
    expect(res.body.message).toContain(
      `pg_dump 13.16 (${old}/pg_dump) is older than the PostgreSQL server ${SERVER_VERSION}; pg_dump ${SERVER_MAJOR} or later is needed to back up PostgreSQL ${SERVER_MAJOR}: install postgresql-client-${SERVER_MAJOR} or later (README: which client for which server) or set PG_BIN_DIR`,
    );
  });

  // a real mismatch, not a script's: only on a server newer than the client (.ci/pg17)
  it.runIf(NO_FITTING_CLIENT)(
    "503 naming both versions when the server is newer than Debian's pg_dump; a restore too, and nothing is written",
    async () => {
      const { app, admin } = await appWithAdmin();
      const res = await admin.post('/api/backups').expect(503);
      expect(res.body.message).toContain(
        `pg_dump ${CLIENT_VERSION} (on PATH) is older than the PostgreSQL server ${SERVER_VERSION}; pg_dump ${SERVER_MAJOR} or later is needed to back up PostgreSQL ${SERVER_MAJOR}: install postgresql-client-${SERVER_MAJOR} or later`,
      );
      expect(await fs.readdir(backupsDir(app)).catch(() => [])).toEqual([]);
      await placeBackupFile(app, 'stores-20260101-000000-manual.dump');
      const restore = await admin.post('/api/backups/stores-20260101-000000-manual.dump/restore').expect(503);
      expect(restore.body.message).toContain(
        `pg_restore ${CLIENT_VERSION} (on PATH) is older than the PostgreSQL server ${SERVER_VERSION}; pg_restore ${SERVER_MAJOR} or later is needed to restore PostgreSQL ${SERVER_MAJOR}`,
      );
    },
  );
});

describe('the /backups page', () => {
  it("shows the server's version and each client tool's; a problem, naming both, only when the client is older", async () => {
    const res = await as.admin.get('/backups').expect(200);
    expect(res.text).toContain(`<dd>PostgreSQL ${SERVER_VERSION}</dd>`);
    for (const tool of ['pg_dump', 'pg_restore', 'psql'])
      expect(res.text).toMatch(new RegExp(`<dt>${tool}</dt>\\s*<dd>${CLIENT_VERSION.replace('.', '\\.')}</dd>`));
    if (NO_FITTING_CLIENT)
      expect(res.text).toContain(
        `pg_dump ${CLIENT_VERSION} (on PATH) is older than the PostgreSQL server ${SERVER_VERSION}; pg_dump ${SERVER_MAJOR} or later is needed`,
      );
    else expect(res.text).not.toContain('is older than the PostgreSQL server');
  });

  it('says which tool is older than the server, naming both versions', async () => {
    const old = await fakePgBinDir({ pg_dump: 'echo "pg_dump (PostgreSQL) 13.16"' });
    const { admin } = await appWithAdmin({ PG_BIN_DIR: old });
    const res = await admin.get('/backups').expect(200);
    expect(res.text).toMatch(/<dt>pg_dump<\/dt>\s*<dd>13\.16<\/dd>/);
    expect(res.text).toContain(
      `<p class="error-text" role="alert">pg_dump 13.16 (${old}/pg_dump) is older than the PostgreSQL server ${SERVER_VERSION}; pg_dump ${SERVER_MAJOR} or later is needed to back up PostgreSQL ${SERVER_MAJOR}`,
    );
  });
});

describe('backup file names', () => {
  afterEach(() => vi.useRealTimers());

  it('two backups in the same second get -2 and neither overwrites the other', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-23T10:11:12.500Z'));
    const folder = backupFolder(t.dataDir);
    const write = (text: string) => async (fd: number) => void writeSync(fd, text);
    const [first, second] = await Promise.all([
      folder.create('manual', write('first')),
      folder.create('manual', write('second')),
    ]);
    expect([first.filename, second.filename].sort()).toEqual([
      'stores-20261123-101112-manual-2.dump',
      'stores-20261123-101112-manual.dump',
    ]);
    const texts = await Promise.all(
      [first, second].map((b) => fs.readFile(path.join(backupsDir(t), b.filename), 'utf8')),
    );
    expect(texts.sort()).toEqual(['first', 'second']);
  });
});

describe('GET /api/backups', () => {
  it('200 lists the backups newest first; other files, unfinished dumps and links are not backups', async () => {
    const { app, admin } = await appWithAdmin();
    await placeBackupFile(app, 'stores-20260101-020000-scheduled.dump', 'abc');
    await placeBackupFile(app, 'stores-20260301-101500-manual.dump', 'abcdef');
    await placeBackupFile(app, 'stores-20260301-101500-manual-2.dump', 'abcd');
    await placeBackupFile(app, 'stores-20261340-000000-manual.dump');
    await placeBackupFile(app, '.unfinished-0123456789abcdef.dump');
    await placeBackupFile(app, 'notes.txt');
    await fs.symlink(
      path.join(backupsDir(app), 'notes.txt'),
      path.join(backupsDir(app), 'stores-20260401-000000-manual.dump'),
    );

    const res = await admin.get('/api/backups').expect(200);
    expect(res.body).toEqual({
      backups: [
        {
          filename: 'stores-20260301-101500-manual-2.dump',
          size: 4,
          createdAt: '2026-03-01T10:15:00.000Z',
          type: 'manual',
        },
        {
          filename: 'stores-20260301-101500-manual.dump',
          size: 6,
          createdAt: '2026-03-01T10:15:00.000Z',
          type: 'manual',
        },
        {
          filename: 'stores-20260101-020000-scheduled.dump',
          size: 3,
          createdAt: '2026-01-01T02:00:00.000Z',
          type: 'scheduled',
        },
      ],
    });
  });

  it('200 with an empty list before any backup', async () => {
    const { admin } = await appWithAdmin();
    expect((await admin.get('/api/backups').expect(200)).body).toEqual({ backups: [] });
  });
});

describe('GET /api/backups/stats', () => {
  it('200 counts and sizes the backups', async () => {
    const { app, admin } = await appWithAdmin();
    await placeBackupFile(app, 'stores-20260101-020000-scheduled.dump', 'abc');
    await placeBackupFile(app, 'stores-20260301-101500-manual.dump', 'abcdef');
    expect((await admin.get('/api/backups/stats').expect(200)).body).toEqual({
      totalBackups: 2,
      totalSize: 9,
      oldestBackup: '2026-01-01T02:00:00.000Z',
      newestBackup: '2026-03-01T10:15:00.000Z',
    });
  });

  it('200 with nulls when there is no backup', async () => {
    const { admin } = await appWithAdmin();
    expect((await admin.get('/api/backups/stats').expect(200)).body).toEqual({
      totalBackups: 0,
      totalSize: 0,
      oldestBackup: null,
      newestBackup: null,
    });
  });
});

describe('GET /api/backups/{filename}/download', () => {
  it.skipIf(NO_FITTING_CLIENT)('200 streams the file as an attachment', async () => {
    const { filename } = (await as.admin.post('/api/backups').expect(201)).body;
    const res = await as.admin
      .get(`/api/backups/${filename}/download`)
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toBe(`attachment; filename=${filename}`);
    expect((res.body as Buffer).equals(await fs.readFile(path.join(backupsDir(t), filename)))).toBe(true);
  });

  it('404 for a well-formed name that is no backup', async () => {
    const res = await as.admin.get('/api/backups/stores-19990101-000000-manual.dump/download').expect(404);
    expect(res.body).toEqual({ message: 'Backup not found' });
  });
});

describe('DELETE /api/backups/{filename}', () => {
  it('204 deletes the file', async () => {
    const file = await placeBackupFile(t, 'stores-20250505-050505-manual.dump');
    await as.admin.delete('/api/backups/stores-20250505-050505-manual.dump').expect(204);
    await expect(fs.stat(file)).rejects.toThrow(/ENOENT/);
  });

  it('404 when it is already gone', async () => {
    const res = await as.admin.delete('/api/backups/stores-19990101-000000-manual.dump').expect(404);
    expect(res.body).toEqual({ message: 'Backup not found' });
  });
});

describe('file names that reach outside DATA_DIR/backups', () => {
  it('404 (400 for a NUL) on download, delete and restore for traversal names, links and files outside; nothing outside is read or deleted', async () => {
    const { app, admin } = await appWithAdmin();
    const inDataDir = path.join(app.dataDir, 'stores-20260101-000000-manual.dump');
    await fs.writeFile(inDataDir, 'a file in DATA_DIR itself');
    const outside = path.join(app.dataDir, 'secret.txt');
    await fs.writeFile(outside, 'secret');
    await placeBackupFile(app, 'stores-20260102-000000-manual.dump');
    await fs.unlink(path.join(backupsDir(app), 'stores-20260102-000000-manual.dump'));
    await fs.symlink(outside, path.join(backupsDir(app), 'stores-20260102-000000-manual.dump'));

    const names = [
      '..%2F..%2Fetc%2Fpasswd',
      '..%2Fstores-20260101-000000-manual.dump',
      '%2e%2e%2fstores-20260101-000000-manual.dump',
      '%2e%2e',
      '..',
      'stores-20260102-000000-manual.dump',
      'stores-20260101-000000-manual.dump%00',
      '%2Fetc%2Fpasswd',
      'stores-20260101-000000-manual.dump%2F..%2F..%2Fsecret.txt',
    ];
    for (const name of names) {
      for (const [method, url] of [
        ['get', `/api/backups/${name}/download`],
        ['delete', `/api/backups/${name}`],
        ['post', `/api/backups/${name}/restore`],
      ] as const) {
        const res = await admin[method](url);
        if (name.includes('%00')) expect(res.status, `${method} ${url}`).toBe(400);
        else expect([res.status, res.body], `${method} ${url}`).toEqual([404, { message: 'Backup not found' }]);
      }
    }
    expect(await fs.readFile(inDataDir, 'utf8')).toBe('a file in DATA_DIR itself');
    expect(await fs.readFile(outside, 'utf8')).toBe('secret');
    expect((await fs.lstat(path.join(backupsDir(app), 'stores-20260102-000000-manual.dump'))).isSymbolicLink()).toBe(
      true,
    );
    expect((await admin.get('/api/backups').expect(200)).body.backups).toEqual([]);
  });
});

describe('access', () => {
  const routes = [
    ['get', '/api/backups'],
    ['post', '/api/backups'],
    ['get', '/api/backups/stats'],
    ['get', '/api/backups/stores-20260101-000000-manual.dump/download'],
    ['post', '/api/backups/stores-20260101-000000-manual.dump/restore'],
    ['delete', '/api/backups/stores-20260101-000000-manual.dump'],
  ] as const;

  it('401 without a session', async () => {
    for (const [method, url] of routes) await t.request[method](url).expect(401);
  });

  it('403 for a manager', async () => {
    for (const [method, url] of routes) await as.manager[method](url).expect(403);
  });
});

describe('POST /api/backups/{filename}/restore', () => {
  it.skipIf(NO_FITTING_CLIENT)(
    '200 puts the database back as it was at the backup; everyone signs in again and the service keeps serving',
    async () => {
      const { app, admin, adminEmail } = await appWithAdmin();
      const manager = await app.loginAs(await buildUser(app.db, { role: 'manager' }));
      await buildCategory(app.db, { name: 'Kept' });
      const before = await contents(app.db);
      const { filename } = (await admin.post('/api/backups').expect(201)).body;

      await buildCategory(app.db, { name: 'Added after the backup' });
      await app.db('categories').where({ name: 'Kept' }).update({ name: 'Renamed after the backup' });
      await app.db.raw('CREATE TABLE created_after_backup (id int)');

      const res = await admin.post(`/api/backups/${filename}/restore`).expect(200);
      expect(res.body).toEqual({
        message: 'Database restored; everyone must sign in again',
        filename,
        migrationsApplied: [],
      });

      // the records are the backup's; the ids the categories' sequence gave out after it are not given again
      const after = await contents(app.db);
      expect(after).toEqual({ ...before, sequence: after.sequence });
      expect(Number(after.sequence)).toBe(Number(before.sequence) + 1);
      expect((await app.db('categories').select('name')).map((r) => r.name)).toEqual(['Kept']);
      expect(await app.db.schema.hasTable('created_after_backup')).toBe(false);
      expect(Number((await app.db('sessions').count({ n: '*' }))[0].n)).toBe(0);
      // the trail keeps what came after the backup (its own creation), then the restore
      expect(
        await app
          .db('audit_log')
          .whereNot({ action: 'sign_in' })
          .orderBy('id')
          .select('entity_type', 'entity_id', 'action', 'actor_email'),
      ).toEqual([
        { entity_type: 'backup', entity_id: filename, action: 'create', actor_email: adminEmail },
        { entity_type: 'backup', entity_id: filename, action: 'restore', actor_email: adminEmail },
      ]);

      await admin.get('/api/auth/user').expect(401);
      await manager.get('/api/auth/user').expect(401);
      const health = await app.request.get('/api/health').expect(200);
      expect(health.body).toMatchObject({ status: 'healthy', database: 'connected' });
      await admin.post('/api/auth/login').send({ email: adminEmail, password: TEST_PASSWORD }).expect(200);
      await admin
        .post('/api/categories')
        .send({ name: 'After the restore', description: 'd', icon: 'fa-box', color: 'blue' })
        .expect(201);
      expect((await admin.get('/api/backups').expect(200)).body.backups).toHaveLength(1);
    },
  );

  it.skipIf(NO_FITTING_CLIENT)('200 applies the migrations the backup predates', async () => {
    const { app, admin } = await appWithAdmin();
    const filename = await backupPredatingMigration(app, admin);

    const res = await admin.post(`/api/backups/${filename}/restore`).expect(200);
    expect(res.body.migrationsApplied).toEqual([PREDATED_MIGRATION]);
    expect(await app.db.schema.hasTable('backup_runs')).toBe(true);
    expect(await app.db('knex_migrations').where({ name: PREDATED_MIGRATION }).first()).toBeDefined();
  });

  it.skipIf(NO_FITTING_CLIENT)(
    "200 applies them after another instance's migrations, when one is starting on the database",
    async () => {
      const { app, admin } = await appWithAdmin();
      const filename = await backupPredatingMigration(app, admin);

      // another instance starting: it holds the turn while its own migrations run
      const starting = createDb(app.databaseUrl, 1);
      const turn = await starting.transaction();
      try {
        await turn.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [MIGRATIONS_TURN]);
        const restoring = admin.post(`/api/backups/${filename}/restore`).then((r) => r);
        await vi.waitFor(
          async () => {
            const { rows } = await app.db.raw(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`);
            expect(rows).toHaveLength(1);
          },
          { timeout: 60_000, interval: 20 },
        );
        expect(await app.db.schema.hasTable('backup_runs')).toBe(false);
        await turn.commit();
        const res = await restoring;
        expect([res.status, res.body.migrationsApplied]).toEqual([200, [PREDATED_MIGRATION]]);
        expect(await app.db.schema.hasTable('backup_runs')).toBe(true);
      } finally {
        if (!turn.isCompleted()) await turn.rollback();
        await starting.destroy();
      }
    },
  );

  it.skipIf(NO_FITTING_CLIENT)('503 to other requests while it runs, then 200', async () => {
    const { app, admin } = await appWithAdmin();
    const { filename } = (await admin.post('/api/backups').expect(201)).body;
    // A reader in an open transaction holds the restore at its DROP SCHEMA for as long as the test needs.
    const holder = createDb(app.databaseUrl, 1);
    const reader = await holder.transaction();
    try {
      await reader('categories').select('id').limit(1);
      const restoring = admin.post(`/api/backups/${filename}/restore`).then((r) => r);
      await untilSomeoneWaitsOnALock(app.db);
      const waiting = await app.db.raw(
        `SELECT 1 FROM pg_stat_activity WHERE application_name = 'stores-restore' AND wait_event_type = 'Lock'`,
      );
      expect(waiting.rows).toHaveLength(1);

      const during = await admin.get('/api/backups').expect(503);
      expect(during.body).toEqual({ message: 'A database restore is in progress; try again in a minute' });
      expect(during.headers['retry-after']).toBe('30');
      await admin.post(`/api/backups/${filename}/restore`).expect(503);

      await reader.commit();
      expect((await restoring).status).toBe(200);
    } finally {
      if (!reader.isCompleted()) await reader.rollback();
      await holder.destroy();
    }
  });

  it.skipIf(NO_FITTING_CLIENT)('500 when the restore fails part-way; the database is unchanged', async () => {
    // psql that runs the real restore but turns its final COMMIT into an error
    const failing = await fakePgBinDir({
      psql: 'if [ "$1" = "--version" ]; then exec /usr/bin/psql --version; fi\nsed "s/^COMMIT;$/SELECT 1 \\/ 0;/" | /usr/bin/psql "$@"',
    });
    const { app, admin } = await appWithAdmin({ PG_BIN_DIR: failing });
    const { filename } = (await admin.post('/api/backups').expect(201)).body;
    await buildCategory(app.db, { name: 'Added after the backup' });
    await app.db.raw('CREATE TABLE created_after_backup (id int)');
    const before = await contents(app.db);

    const res = await admin.post(`/api/backups/${filename}/restore`).expect(500);
    expect(res.body).toEqual({ message: expect.stringMatching(/^Restore failed: .*division by zero/) });
    expect(await contents(app.db)).toEqual(before);
    await admin.get('/api/auth/user').expect(200);
  });

  it.skipIf(NO_FITTING_CLIENT)('400 for a file of random bytes named like a backup; nothing changes', async () => {
    const { app, admin } = await appWithAdmin();
    await placeBackupFile(app, 'stores-20260101-000000-manual.dump', randomBytes(4096));
    const before = await contents(app.db);
    const res = await admin.post('/api/backups/stores-20260101-000000-manual.dump/restore').expect(400);
    expect(res.body.message).toMatch(
      /^stores-20260101-000000-manual\.dump is not a backup of this service \(pg_restore cannot read it\)/,
    );
    expect(await contents(app.db)).toEqual(before);
    await admin.get('/api/auth/user').expect(200);
  });

  it.skipIf(NO_FITTING_CLIENT)('400 for a backup cut short; nothing changes', async () => {
    const { app, admin } = await appWithAdmin();
    const { filename, size } = (await admin.post('/api/backups').expect(201)).body;
    await fs.truncate(path.join(backupsDir(app), filename), size - 200);
    await listing(path.join(backupsDir(app), filename));
    await buildCategory(app.db, { name: 'Added after the backup' });
    const before = await contents(app.db);
    const res = await admin.post(`/api/backups/${filename}/restore`).expect(400);
    expect(res.body.message).toMatch(
      new RegExp(
        `^${filename.replace(/\./g, '\\.')} is corrupt or truncated: pg_restore: error: could not read from input file`,
      ),
    );
    expect(await contents(app.db)).toEqual(before);
  });

  it.skipIf(NO_FITTING_CLIENT)('400 for a valid dump of another database (no knex_migrations table)', async () => {
    const { app, admin } = await appWithAdmin();
    const file = await placeBackupFile(app, 'stores-20260101-000000-manual.dump', '');
    const connection = connectionOptions(app.databaseUrl);
    await run('pg_dump', ['--format=custom', '--table=categories', `--file=${file}`, ...connection.args], {
      env: connection.env,
    });
    const res = await admin.post('/api/backups/stores-20260101-000000-manual.dump/restore').expect(400);
    expect(res.body).toEqual({
      message: 'stores-20260101-000000-manual.dump is not a backup of this service (it holds no knex_migrations table)',
    });
  });

  it('404 for a well-formed name that is no backup', async () => {
    const res = await as.admin.post('/api/backups/stores-19990101-000000-manual.dump/restore').expect(404);
    expect(res.body).toEqual({ message: 'Backup not found' });
  });
});
