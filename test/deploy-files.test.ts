import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createDb, createPgPool } from '../src/db/knex';
import { createLogger } from '../src/logger';
import { testDatabase } from './helpers/app';
import { freePort } from './helpers/free-port';
import { deployPgBouncerIni, hasPgBouncer, PGBOUNCER, runPgBouncer, type RunningPgBouncer } from './helpers/pgbouncer';

// Issue 44: the reference deployment's files (deploy/) are the ones IT starts from, so they must
// at least be accepted by the HAProxy and PgBouncer that Debian ships (.ci/run installs both).

const HAPROXY = '/usr/sbin/haproxy';
const DEPLOY = path.join(__dirname, '..', 'deploy');
const NO_HAPROXY = existsSync(HAPROXY)
  ? false
  : `${HAPROXY} is missing (Debian's haproxy package; .ci/run installs it)`;
const NO_PGBOUNCER = hasPgBouncer ? false : `${PGBOUNCER} is missing (Debian's pgbouncer package; .ci/run installs it)`;
for (const reason of [NO_HAPROXY, NO_PGBOUNCER]) if (reason) console.warn(`[deploy-files] skipped: ${reason}`);

describe.skipIf(NO_HAPROXY)('deploy/haproxy.cfg', () => {
  it('is a valid configuration for Debian’s HAProxy, checking /health on two instances', async () => {
    const file = path.join(DEPLOY, 'haproxy.cfg');
    const { stdout } = await promisify(execFile)(HAPROXY, ['-c', '-f', file]);
    expect(stdout).toMatch(/Configuration file is valid/);
    const text = await fs.readFile(file, 'utf8');
    expect(text).toMatch(/http-check send meth GET uri \/health\n/);
    expect(text.match(/^\s+server \S+ \S+:\d+/gm)?.length).toBeGreaterThanOrEqual(2);
  });
});

describe.skipIf(NO_PGBOUNCER)('deploy/pgbouncer.ini, placeholders filled in, started by Debian’s PgBouncer', () => {
  let dir: string;
  let bouncer: RunningPgBouncer | undefined;
  let port: number;
  let user: string;
  let password: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await testDatabase();
    drop = database.drop;
    const server = new URL(database.databaseUrl);
    user = decodeURIComponent(server.username || 'postgres');
    // PgBouncer logs in to PostgreSQL with the userlist's password (any, when the test server trusts)
    password = decodeURIComponent(server.password) || 'deploy-test-secret';
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-deploy-'));
    await fs.chmod(dir, 0o755);
    port = await freePort();
    const ini = await deployPgBouncerIni({
      primaryHost: server.hostname,
      primaryPort: Number(server.port || 5432),
      database: decodeURIComponent(server.pathname.slice(1)),
      listenPort: port,
      configDir: dir,
      runDir: dir,
      adminUser: user,
    });
    await fs.writeFile(path.join(dir, 'pgbouncer.ini'), ini);
    await fs.writeFile(path.join(dir, 'userlist.txt'), `"${user}" "${password}"\n`);
    // as root, PgBouncer runs only as another user, which must own its log and pid file
    if (os.userInfo().uid === 0) execFileSync('chown', ['-R', 'postgres', dir]);
    bouncer = await runPgBouncer(path.join(dir, 'pgbouncer.ini'), port, () => undefined);
  });

  afterAll(async () => {
    await bouncer?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    await drop?.();
  });

  const url = (database: string) =>
    `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;

  it('has `stores` in transaction mode and `stores_direct` in session mode, on the same database', async () => {
    const admin = new pg.Client({ connectionString: url('pgbouncer') });
    await admin.connect();
    try {
      type Entry = { name: string; database: string; pool_mode: string | null };
      const { rows } = await admin.query<Entry>('SHOW DATABASES');
      const db = Object.fromEntries(rows.map((r) => [r.name, r]));
      const { rows: settings } = await admin.query<{ key: string; value: string }>('SHOW CONFIG');
      const defaultMode = settings.find((r) => r.key === 'pool_mode')?.value;
      // a database's pool_mode is null when it takes the [pgbouncer] section's
      expect([db.stores.pool_mode ?? defaultMode, db.stores_direct.pool_mode ?? defaultMode]).toEqual([
        'transaction',
        'session',
      ]);
      expect(db.stores.database).toBe(db.stores_direct.database);
    } finally {
      await admin.end();
    }
  });

  it('serves the service in DATABASE_POOL_MODE=transaction', async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      SESSION_SECRET: 'test-session-secret-0123456789',
      DATABASE_URL: url('stores'),
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_DIRECT_URL: url('stores_direct'),
    });
    const db = createDb(url('stores'), 2, undefined, { poolMode: 'transaction' });
    const sessionPool = createPgPool(url('stores'), () => undefined, 1, 'transaction');
    try {
      const app = buildApp({
        db,
        databaseUrl: url('stores_direct'),
        config,
        logger: createLogger('silent'),
        sessionPool,
        sessionSecret: config.sessionSecret!,
      });
      const res = await supertest(app).get('/api/health').expect(200);
      expect([res.body.database, res.body.poolMode]).toEqual(['connected', 'transaction']);
    } finally {
      await db.destroy();
      await sessionPool.end();
    }
  });
});
