import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, listensOn } from './free-port';

/** Debian's PgBouncer (1.18 on bookworm), which `.ci/run` installs when it is missing. */
export const PGBOUNCER = '/usr/sbin/pgbouncer';
export const hasPgBouncer = existsSync(PGBOUNCER);

export type PgBouncer = {
  port: number;
  /** a connection string to the database through this PgBouncer (no password: auth_type trust) */
  url: (database: string) => string;
  /** SIGTERM: PgBouncer's immediate shutdown; every client and server connection is closed */
  stop: () => Promise<void>;
  /** starts it again on the same port and configuration; resolves once it accepts connections */
  start: () => Promise<void>;
  /** what it logged */
  log: () => string;
  /** stops it for good and removes its files */
  close: () => Promise<void>;
};

/** As root, PgBouncer refuses to run unless told which OS user to become. */
const asUser = () => (os.userInfo().uid === 0 ? ['-u', 'postgres'] : []);

/**
 * A PgBouncer of the test's own, in front of the PostgreSQL of `serverUrl` (every database, as the
 * client names it), on a free loopback port: transaction mode and a pool of 2 server connections a
 * database and user unless `settings` say otherwise. Clients are trusted; PgBouncer logs in to
 * PostgreSQL with the user and password of `serverUrl` (its userlist). PgBouncer's defaults
 * otherwise: no ignore_startup_parameters, so a startup `options` is refused as in production.
 */
export async function startPgBouncer(
  serverUrl: string,
  settings: Record<string, string | number> = {},
  target?: { host: string; port: number },
): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const password = decodeURIComponent(server.password);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-pgbouncer-'));
  await fs.chmod(dir, 0o755);
  const port = await freePort();
  const host = target?.host ?? server.hostname;
  const serverPort = target?.port ?? (Number(server.port) || 5432);
  const ini = path.join(dir, 'pgbouncer.ini');
  const options: Record<string, string | number> = {
    listen_addr: '127.0.0.1',
    listen_port: port,
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: path.join(dir, 'userlist.txt'),
    pool_mode: 'transaction',
    default_pool_size: 2,
    max_client_conn: 200,
    server_login_retry: 1,
    query_wait_timeout: 10,
    log_connections: 0,
    log_disconnections: 0,
    ...settings,
  };
  await fs.writeFile(
    ini,
    `[databases]\n* = host=${host} port=${serverPort}\n\n[pgbouncer]\n` +
      Object.entries(options)
        .map(([k, v]) => `${k} = ${v}`)
        .join('\n') +
      '\n',
    { mode: 0o644 },
  );
  const quote = (v: string) => `"${v.replace(/"/g, '""')}"`;
  await fs.writeFile(options.auth_file as string, `${quote(user)} ${quote(password)}\n`, { mode: 0o644 });
  if (os.userInfo().uid === 0) execFileSync('chown', ['-R', 'postgres', dir]);

  let running: RunningPgBouncer | undefined;
  let log = '';
  const start = async () => {
    running = await runPgBouncer(ini, port, (chunk) => (log += chunk));
  };
  const stop = async () => {
    await running?.stop();
    running = undefined;
  };
  await start();
  return {
    port,
    url: (database) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    start,
    stop,
    log: () => log,
    async close() {
      await stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

export type RunningPgBouncer = {
  /** SIGTERM (PgBouncer's immediate shutdown); resolves once it has exited */
  stop: () => Promise<void>;
};

/**
 * Debian's PgBouncer on `ini` (whose listen_port is `port`), as a child process; resolves once it
 * listens on its port. As root its directory must belong to postgres (it writes its log and pid there).
 */
export async function runPgBouncer(
  ini: string,
  port: number,
  onLog: (chunk: string) => void,
): Promise<RunningPgBouncer> {
  const child = spawn(PGBOUNCER, [...asUser(), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const collect = (chunk: Buffer) => {
    log += chunk.toString();
    onLog(chunk.toString());
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let gone = false;
  const exited = once(child, 'exit').then(() => (gone = true));
  const deadline = Date.now() + 20_000;
  // itself: another process may have taken the free port first, and would answer in its place
  while (!(await listensOn(child.pid!, port))) {
    if (gone) throw new Error(`pgbouncer exited while starting:\n${log}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`pgbouncer did not listen within 20 s:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    async stop() {
      if (!gone) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/** The values of deploy/pgbouncer.ini's @PLACEHOLDERS@ (its header explains each). */
export type PgBouncerDeployValues = {
  primaryHost: string;
  primaryPort: number;
  database: string;
  listenPort: number;
  configDir: string;
  runDir: string;
  adminUser: string;
};

/** deploy/pgbouncer.ini with its placeholders filled in; throws if the file gained one this does not know. */
export async function deployPgBouncerIni(values: PgBouncerDeployValues): Promise<string> {
  const ini = (await fs.readFile(fileURLToPath(new URL('../../deploy/pgbouncer.ini', import.meta.url)), 'utf8'))
    .replaceAll('@PRIMARY_HOST@', values.primaryHost)
    .replaceAll('@PRIMARY_PORT@', String(values.primaryPort))
    .replaceAll('@DATABASE@', values.database)
    .replaceAll('@LISTEN_PORT@', String(values.listenPort))
    .replaceAll('@CONFIG_DIR@', values.configDir)
    .replaceAll('@RUN_DIR@', values.runDir)
    .replaceAll('@ADMIN_USER@', values.adminUser);
  const left = ini.match(/@[A-Z_]+@/);
  if (left) throw new Error(`deploy/pgbouncer.ini has a placeholder the tests do not fill: ${left[0]}`);
  return ini;
}
