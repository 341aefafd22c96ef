import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, inject, onTestFinished } from 'vitest';
import { migrateLatest } from '../src/db/migrate';
import type supertest from 'supertest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';

const TOOLS = ['pg_dump', 'pg_restore', 'psql'] as const;

/** The run's PostgreSQL, e.g. '17.10', and its major. */
export const SERVER_VERSION = inject('testDatabase').serverVersion;
export const SERVER_MAJOR = Number(SERVER_VERSION.split('.')[0]);
/** pg_dump on PATH, e.g. '15.20' (Debian's postgresql-client-15, which .ci/run installs). */
export const CLIENT_VERSION = /\(PostgreSQL\)\s+(\S+)/.exec(execFileSync('pg_dump', ['--version']).toString())![1];

/**
 * Why the tests that make real dumps cannot run: on PostgreSQL 17 (TEST_PG_MAJOR=17), Debian 12's
 * newest client is 15, older than the server, so every backup and restore is refused with the
 * message that names both (tested instead). They run on the embedded 15.
 */
export const NO_FITTING_CLIENT =
  Number(CLIENT_VERSION.split('.')[0]) < SERVER_MAJOR
    ? `pg_dump ${CLIENT_VERSION} is older than the PostgreSQL server ${SERVER_VERSION}`
    : false;

/**
 * A backup or restore refused 503 because the server is newer than this machine's pg_dump
 * (.ci/pg17), naming both versions (test/backups.test.ts): what the route must answer there.
 */
export const refusedForOldClient = (res: { status: number; text?: string }) =>
  NO_FITTING_CLIENT !== false && res.status === 503 && (res.text ?? '').includes('is older than the PostgreSQL server');

const tempDirs: string[] = [];
afterAll(async () => {
  await Promise.all(tempDirs.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

/**
 * A PG_BIN_DIR whose tools are the real ones (/usr/bin) except those given as shell scripts,
 * e.g. a pg_dump that fails or reports an old version.
 */
export async function fakePgBinDir(scripts: Partial<Record<(typeof TOOLS)[number], string>>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-pg-bin-'));
  tempDirs.push(dir);
  for (const tool of TOOLS) {
    const file = path.join(dir, tool);
    const script = scripts[tool];
    if (script) await fs.writeFile(file, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
    else await fs.symlink(`/usr/bin/${tool}`, file);
  }
  return dir;
}

/**
 * Inside a test: an app of its own (database and DATA_DIR, so what it restores or lists is
 * nobody else's) with a signed-in admin, closed when the test finishes.
 */
export async function appWithAdmin(
  env: Record<string, string> = {},
): Promise<{ app: TestApp; admin: supertest.Agent; adminEmail: string }> {
  const app = await testApp(env);
  onTestFinished(() => app.close());
  const user = await buildUser(app.db, { role: 'admin' });
  return { app, admin: await app.loginAs(user), adminEmail: user.email };
}

/** A migration a backup can predate: its table is dropped and its record deleted before the backup, then it is applied again. */
export const PREDATED_MIGRATION = '20261123000101_create_backup_runs.ts';

/** A backup of the app's database as it was before PREDATED_MIGRATION; the database itself is migrated again afterwards. */
export async function backupPredatingMigration(app: TestApp, admin: supertest.Agent): Promise<string> {
  await app.db.schema.dropTable('backup_runs');
  await app.db('knex_migrations').where({ name: PREDATED_MIGRATION }).delete();
  const { filename } = (await admin.post('/api/backups').expect(201)).body as { filename: string };
  expect(await migrateLatest(app.db)).toEqual([PREDATED_MIGRATION]);
  return filename;
}

/** Puts a file named like a backup (any bytes) into an app's backups folder. */
export async function placeBackupFile(
  app: TestApp,
  filename: string,
  content: string | Buffer = 'not a dump',
): Promise<string> {
  const dir = path.join(app.dataDir, 'backups');
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, filename);
  await fs.writeFile(file, content);
  return file;
}
