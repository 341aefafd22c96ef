import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import pg from 'pg';
import { createDb } from '../../src/db/knex';
import { migrateLatest } from '../../src/db/migrate';
import { freePort } from './free-port';
import { deployPgBouncerIni, PGBOUNCER, runPgBouncer, type RunningPgBouncer } from './pgbouncer';
import { waitFor } from './poll';
import { startServer, type ServerProcess } from './server-process';

/**
 * Issue 44's reference deployment (deploy/) built on one machine from Debian's packages, for the
 * fault tests and `npm run bench -- topology`:
 *
 *   clients -> HAProxy (deploy/haproxy.cfg) -> N instances of the service
 *              instances -> PgBouncer (deploy/pgbouncer.ini): `stores` (transaction) and
 *                           `stores_direct` (session), both on the primary
 *              instances -> the replica directly (DATABASE_REPLICA_URLS)
 *   primary (deploy/postgresql.primary.conf) --streaming--> replica (pg_basebackup -R,
 *                                                          deploy/postgresql.replica.conf)
 *
 * Every deploy/ file is used as it is, with only what one machine forces changed: loopback
 * addresses and free ports, the files in a temporary directory, no unix sockets for PostgreSQL,
 * fsync off, no syslog. So what the tests prove is about the files IT starts from.
 */

const BIN = '/usr/lib/postgresql/15/bin';
const HAPROXY = '/usr/sbin/haproxy';
// import.meta, not __dirname: `npm run bench -- topology` loads this file as an ES module
const DEPLOY = fileURLToPath(new URL('../../deploy', import.meta.url));
/** The walreceiver's application_name, as deploy/postgresql.replica.conf's primary_conninfo sets it. */
const REPLICA_NAME = 'replica1';
/** The service's database and the role everything logs in as (trusted by PostgreSQL; PgBouncer checks the password). */
const DATABASE = 'stores';
const USER = 'postgres';
const PASSWORD = 'topology-secret';

/** Why a topology cannot be built here (a Debian package missing), or false; for describe.skipIf. */
export const topologyMissing: string | false =
  [
    [path.join(BIN, 'pg_basebackup'), 'postgresql-15'],
    [PGBOUNCER, 'pgbouncer'],
    [HAPROXY, 'haproxy'],
  ]
    .filter(([file]) => !existsSync(file))
    .map(([file, pkg]) => `${file} is missing (Debian's ${pkg} package; .ci/run installs it)`)
    .join('; ') || false;

const run = promisify(execFile);

/** As root, PostgreSQL runs only as another OS user: postgres, which must own its files. */
const osUser = (() => {
  if (os.userInfo().uid !== 0) return undefined;
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
})();
const pgTool = (tool: string, args: string[]) =>
  run(path.join(BIN, tool), args, { ...osUser, timeout: 120_000 }).then(() => undefined);

export type TopologyOptions = {
  /**
   * synchronous_standby_names names the replica (as deploy/postgresql.primary.conf does): a COMMIT
   * returns once the replica has it, so a promotion loses no acknowledged sale; and writes wait
   * while the replica is stopped. Off: asynchronous replication.
   */
  synchronousReplica: boolean;
  /** how many instances of the service behind HAProxy (default 2) */
  instances?: number;
  /** more environment for every instance (e.g. SMTP_*, DATABASE_REPLICA_MAX_LAG_MS) */
  env?: Record<string, string>;
};

/** One PostgreSQL server of the topology. */
export type PgNode = {
  port: number;
  /** the service's database on it, directly (no PgBouncer) */
  url: string;
  /** a knex (pool of 4) on that database for the test's own checks; a new one after each start() */
  readonly db: Knex;
  /** whether it is running (as far as this helper started and stopped it) */
  readonly running: boolean;
};

export type Topology = {
  /** HAProxy's frontend: what clients use */
  url: string;
  /** the instances, each also reachable on its own baseUrl (bypassing HAProxy) */
  instances: ServerProcess[];
  /** the instances' DATA_DIR, one for all (backups, uploads), as a shared folder in production */
  dataDir: string;
  primary: PgNode;
  replica: PgNode;
  pgbouncer: {
    port: number;
    /** a connection string through PgBouncer: `stores` (transaction), `stores_direct` (session) */
    url: (database: 'stores' | 'stores_direct') => string;
    /** a command on PgBouncer's admin console (SHOW POOLS, RELOAD, ...): its rows */
    admin: (command: string) => Promise<Record<string, unknown>[]>;
    /** what it logged */
    log: () => Promise<string>;
  };
  /** a command on HAProxy's stats socket (`show stat`, `set server stores/app1 state drain`): its answer */
  haproxy: (command: string) => Promise<string>;
  /** the primary's fast shutdown (pg_ctl stop -m fast): its sessions are ended, nothing waits */
  stopPrimary: () => Promise<void>;
  /** starts the (old) primary again on its port and data */
  startPrimary: () => Promise<void>;
  /** pg_ctl promote on the replica; resolves once it accepts writes (pg_is_in_recovery() false) */
  promoteReplica: () => Promise<void>;
  /**
   * Rewrites pgbouncer.ini's host/port on both `stores` and `stores_direct` (to the replica, or
   * back to the primary) and RELOADs PgBouncer on its admin console, as docs/operations.md's
   * failover does; the instances are not touched.
   */
  repointPgBouncer: (toReplica: boolean) => Promise<void>;
  /** the replica's fast shutdown; with synchronousReplica, writes on the primary wait until it is back */
  stopReplica: () => Promise<void>;
  /** starts the replica again; resolves once it accepts connections (not necessarily caught up) */
  startReplica: () => Promise<void>;
  /** stops everything this topology started and removes its files; safe to call twice, or after a failure */
  close: () => Promise<void>;
};

/**
 * deploy/'s `name` = value lines, with `overrides` replacing the values of the settings they name
 * (in place, so the file's comments still explain them) and appended when the file has none.
 */
async function deployConf(file: string, overrides: Record<string, string>): Promise<string> {
  const left = new Map(Object.entries(overrides));
  const lines = (await fs.readFile(path.join(DEPLOY, file), 'utf8')).split('\n').map((line) => {
    const key = /^\s*(\w+)\s*=/.exec(line)?.[1];
    if (key === undefined || !left.has(key)) return line;
    const value = left.get(key)!;
    left.delete(key);
    return `${key} = ${value}`;
  });
  return [...lines, ...[...left].map(([k, v]) => `${k} = ${v}`), ''].join('\n');
}

const quoted = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** What one machine forces on a PostgreSQL server of the topology, whatever deploy/ says. */
const oneMachine = (port: number) => ({
  port: String(port),
  listen_addresses: quoted('127.0.0.1'),
  // no socket in a shared directory: other engineers' clusters run on this machine
  unix_socket_directories: quoted(''),
  // a test's data is thrown away: no reason to wait for the disk
  fsync: 'off',
  full_page_writes: 'off',
  // a test writes little: 1GB would be reserved for nothing in /tmp
  wal_keep_size: quoted('64MB'),
});

/**
 * Builds the topology (about 20-60 s on a busy machine): the primary with the service's database
 * migrated, the replica streaming from it, PgBouncer, the instances and HAProxy, all up and HAProxy
 * seeing every instance UP. On any failure everything started so far is stopped and removed.
 */
export async function startTopology(options: TopologyOptions): Promise<Topology> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-topology-'));
  await fs.chmod(base, 0o755);
  if (osUser) await fs.chown(base, osUser.uid, osUser.gid);
  // what close() undoes, last started first
  const undo: (() => Promise<unknown>)[] = [() => fs.rm(base, { recursive: true, force: true })];
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const step of undo.reverse()) await step().catch(() => undefined);
  };

  try {
    const node = (name: string, port: number) => {
      const dir = path.join(base, name);
      const url = `postgres://${USER}@127.0.0.1:${port}/${DATABASE}`;
      let db: Knex | undefined;
      let running = false;
      const self = {
        port,
        url,
        dir,
        get db() {
          db ??= createDb(url, 4);
          return db;
        },
        get running() {
          return running;
        },
        async start() {
          await pgTool('pg_ctl', ['-D', dir, '-l', path.join(base, `${name}.log`), '-w', '-t', '120', 'start']);
          running = true;
        },
        async stop(mode: 'fast' | 'immediate' = 'fast') {
          // the test's pool would otherwise hold connections to a server that is gone
          await db?.destroy();
          db = undefined;
          if (running) await pgTool('pg_ctl', ['-D', dir, '-m', mode, '-w', '-t', '120', 'stop']);
          running = false;
        },
      };
      undo.push(() => self.stop('immediate'));
      return self;
    };
    const primary = node('primary', await freePort());
    const replica = node('replica', await freePort());

    // --- the primary: initdb, then deploy/postgresql.primary.conf's settings appended
    await pgTool('initdb', ['-D', primary.dir, '-U', USER, '-A', 'trust', '-E', 'UTF8', '--no-sync']);
    // initdb's own postgresql.conf, before the primary's settings: pg_basebackup copies the data
    // directory, and the replica must not inherit the primary's synchronous_standby_names
    const initdbConf = await fs.readFile(path.join(primary.dir, 'postgresql.conf'), 'utf8');
    await fs.appendFile(
      path.join(primary.dir, 'postgresql.conf'),
      await deployConf('postgresql.primary.conf', {
        ...oneMachine(primary.port),
        synchronous_standby_names: quoted(options.synchronousReplica ? REPLICA_NAME : ''),
      }),
    );
    await primary.start();

    // --- the replica: a base backup with -R (standby.signal, primary_conninfo and the slot in
    // postgresql.auto.conf), whose conninfo names the walreceiver as synchronous_standby_names does
    await pgTool('pg_basebackup', [
      '-d',
      `host=127.0.0.1 port=${primary.port} user=${USER} application_name=${REPLICA_NAME}`,
      '-D',
      replica.dir,
      '-R',
      '-X',
      'stream',
      '-C',
      '-S',
      REPLICA_NAME,
      // a checkpoint now rather than spread over minutes
      '--checkpoint=fast',
      '--no-sync',
    ]);
    await fs.writeFile(
      path.join(replica.dir, 'postgresql.conf'),
      initdbConf +
        (await deployConf('postgresql.replica.conf', {
          ...oneMachine(replica.port),
          primary_conninfo: quoted(`host=127.0.0.1 port=${primary.port} user=${USER} application_name=${REPLICA_NAME}`),
        })),
    );
    if (osUser) await fs.chown(path.join(replica.dir, 'postgresql.conf'), osUser.uid, osUser.gid);
    await replica.start();
    // the service's database, created and migrated on the primary once the replica streams (with
    // synchronous replication every commit from here on waits for the replica)
    const admin = createDb(`postgres://${USER}@127.0.0.1:${primary.port}/postgres`, 1);
    try {
      await waitFor('the replica streaming', async () => {
        const rows = await admin
          .withSchema('pg_catalog')
          .from('pg_stat_replication')
          .where({ application_name: REPLICA_NAME, state: 'streaming' });
        return rows.length === 1 || undefined;
      });
      await admin.raw(`CREATE DATABASE ${DATABASE}`);
      // PgBouncer (auth_type scram-sha-256) checks clients against its userlist, then logs in
      // to the primary, which trusts loopback
      await admin.raw(`ALTER ROLE ${USER} PASSWORD '${PASSWORD}'`);
    } finally {
      await admin.destroy();
    }
    await migrateLatest(primary.db);

    // --- PgBouncer from deploy/pgbouncer.ini
    const bouncerDir = path.join(base, 'pgbouncer');
    await fs.mkdir(bouncerDir, { mode: 0o755 });
    const bouncerPort = await freePort();
    const ini = path.join(bouncerDir, 'pgbouncer.ini');
    const writeIni = async (target: { port: number }) => {
      const text = (
        await deployPgBouncerIni({
          primaryHost: '127.0.0.1',
          primaryPort: target.port,
          database: DATABASE,
          listenPort: bouncerPort,
          configDir: bouncerDir,
          runDir: bouncerDir,
          adminUser: USER,
        })
      )
        // not on every interface of a shared machine
        .replace(/^listen_addr = \*$/m, 'listen_addr = 127.0.0.1');
      await fs.writeFile(ini, text, { mode: 0o644 });
      if (osUser) await fs.chown(ini, osUser.uid, osUser.gid);
    };
    await writeIni(primary);
    await fs.writeFile(path.join(bouncerDir, 'userlist.txt'), `"${USER}" "${PASSWORD}"\n`, { mode: 0o644 });
    if (osUser) execFileSync('chown', ['-R', 'postgres', bouncerDir]);
    const bouncer: RunningPgBouncer = await runPgBouncer(ini, bouncerPort, () => undefined);
    undo.push(() => bouncer.stop());
    const bouncerUrl = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${bouncerPort}/${database}`;
    const bouncerAdmin = async (command: string) => {
      // the console speaks only the simple query protocol: a query without parameters
      const client = new pg.Client({ connectionString: bouncerUrl('pgbouncer') });
      await client.connect();
      try {
        return (await client.query(command)).rows as Record<string, unknown>[];
      } finally {
        await client.end();
      }
    };

    // --- the instances, on PgBouncer and the replica, with HAProxy's address as their public one
    const haproxyPort = await freePort();
    const url = `http://127.0.0.1:${haproxyPort}`;
    // one DATA_DIR for every instance, as a shared folder would be: a backup taken through one
    // instance is restored through whichever HAProxy picks
    const dataDir = path.join(base, 'data');
    await fs.mkdir(dataDir);
    const env = {
      DATA_DIR: dataDir,
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_DIRECT_URL: bouncerUrl('stores_direct'),
      DATABASE_REPLICA_URLS: replica.url,
      PUBLIC_URL: url,
      ...options.env,
    };
    // all at once, as IT's deployment starts them: the first start's work takes turns (issue 44)
    const instances: ServerProcess[] = [];
    const starts = await Promise.allSettled(
      Array.from({ length: options.instances ?? 2 }, () => startServer(bouncerUrl('stores'), env)),
    );
    for (const started of starts) {
      if (started.status === 'fulfilled') {
        instances.push(started.value);
        undo.push(() => started.value.kill());
      }
    }
    const failed = starts.find((started) => started.status === 'rejected');
    if (failed) throw failed.reason;

    // --- HAProxy from deploy/haproxy.cfg, in the foreground (-db) as a child process
    const stats = path.join(base, 'haproxy.sock');
    const serverLines = instances.map((s, i) => `    server app${i + 1} 127.0.0.1:${s.port}`).join('\n');
    const cfg = (await fs.readFile(path.join(DEPLOY, 'haproxy.cfg'), 'utf8'))
      // no syslog on a test machine (`log global` then logs nowhere)
      .replace(/^\s*log \/dev\/log.*\n/m, '')
      .replace(/^(\s*stats socket )\S+/m, `$1${stats}`)
      .replace(/^(\s*bind )\S+/m, `$1127.0.0.1:${haproxyPort}`)
      .replace(/(^\s*server \S+ \S+:\d+.*\n)+/m, `${serverLines}\n`);
    const cfgFile = path.join(base, 'haproxy.cfg');
    await fs.writeFile(cfgFile, cfg);
    const haproxyChild = spawn(HAPROXY, ['-db', '-f', cfgFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    let haproxyLog = '';
    haproxyChild.stdout!.on('data', (chunk: Buffer) => (haproxyLog += chunk.toString()));
    haproxyChild.stderr!.on('data', (chunk: Buffer) => (haproxyLog += chunk.toString()));
    const haproxyExited = once(haproxyChild, 'exit');
    undo.push(async () => {
      if (haproxyChild.exitCode === null && haproxyChild.signalCode === null) {
        haproxyChild.kill('SIGTERM');
        await haproxyExited;
      }
    });
    const haproxy = (command: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(stats);
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString()));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
        socket.end(`${command}\n`);
      });
    // HAProxy serves an instance only once its checks passed (rise 2): wait for every one UP
    await waitFor('HAProxy to see every instance UP', async () => {
      if (haproxyChild.exitCode !== null) throw new Error(`haproxy exited:\n${haproxyLog}`);
      const rows = (await haproxy('show stat')).split('\n').filter((l) => l.startsWith('stores,app'));
      return (rows.length === instances.length && rows.every((row) => row.split(',')[17] === 'UP')) || undefined;
    }).catch((err: Error) => {
      throw new Error(`${err.message}\n${haproxyLog}`);
    });

    return {
      url,
      instances,
      dataDir,
      primary,
      replica,
      pgbouncer: {
        port: bouncerPort,
        url: bouncerUrl,
        admin: bouncerAdmin,
        log: () => fs.readFile(path.join(bouncerDir, 'pgbouncer.log'), 'utf8').catch(() => ''),
      },
      haproxy,
      stopPrimary: () => primary.stop(),
      startPrimary: () => primary.start(),
      async promoteReplica() {
        await pgTool('pg_ctl', ['-D', replica.dir, '-w', '-t', '120', 'promote']);
        await waitFor('the promoted replica to accept writes', async () => {
          const { rows } = await replica.db.raw<{ rows: { recovery: boolean }[] }>(
            'SELECT pg_is_in_recovery() AS recovery',
          );
          return rows[0].recovery === false || undefined;
        });
      },
      async repointPgBouncer(toReplica) {
        await writeIni(toReplica ? replica : primary);
        await bouncerAdmin('RELOAD');
      },
      stopReplica: () => replica.stop(),
      startReplica: () => replica.start(),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
