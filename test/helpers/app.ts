import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import type { Knex } from 'knex';
import type { DestinationStream } from 'pino';
import supertest from 'supertest';
import { inject, onTestFinished } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import { createDb, createPgPool } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { startOutboxDelivery } from '../../src/jobs/outbox-delivery';
import { withDatabase } from '../global-setup';
import { TEST_PASSWORD } from './factories';
import type { UserRow } from '../../src/modules/users/users.service';

export type TestApp = {
  app: Express;
  db: Knex;
  config: Config;
  databaseUrl: string;
  /** this app's DATA_DIR (backups, archives): a temporary directory removed by close() */
  dataDir: string;
  /** requests without any cookie jar */
  request: ReturnType<typeof supertest>;
  /** a cookie-keeping agent signed in as the user (created with the factory password) */
  loginAs: (user: Pick<UserRow, 'email'>) => Promise<supertest.Agent>;
  close: () => Promise<void>;
};

/** A fresh database cloned from the migrated template (no app built on it), and how to drop it. */
export async function testDatabase(): Promise<{ databaseUrl: string; drop: () => Promise<void> }> {
  const { serverUrl, template } = inject('testDatabase');
  const name = `${template}_${randomBytes(6).toString('hex')}`;
  const admin = createDb(serverUrl, 1);
  await admin.raw(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  await admin.destroy();
  return {
    databaseUrl: withDatabase(serverUrl, name),
    async drop() {
      const dropper = createDb(serverUrl, 1);
      await dropper.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await dropper.destroy();
    },
  };
}

/** A fresh database cloned from the migrated template, and the app built on it. */
export async function testApp(
  env: Record<string, string> = {},
  opts: {
    logDestination?: DestinationStream;
    /** run the outbox's delivery worker beside the app, as the server does (emails, outbound webhooks) */
    deliverOutbox?: boolean;
  } = {},
): Promise<TestApp> {
  const { databaseUrl, drop } = await testDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-test-data-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SESSION_SECRET: 'test-session-secret-0123456789',
    PUBLIC_URL: 'http://127.0.0.1',
    ...env,
  });
  const logger = createLogger(config.logLevel, opts.logDestination);
  const db = createDb(databaseUrl, 10, logger);
  const sessionPool = createPgPool(databaseUrl, () => undefined, 3);
  const app = buildApp({ db, databaseUrl, config, logger, sessionPool, sessionSecret: config.sessionSecret! });
  const outbox = opts.deliverOutbox
    ? startOutboxDelivery({ db, databaseUrl, config, logger }, { pollMs: 100 })
    : undefined;

  return {
    app,
    db,
    config,
    databaseUrl,
    dataDir: config.dataDir,
    request: supertest(app),
    async loginAs(user) {
      const agent = supertest.agent(app);
      await agent.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(200);
      return agent;
    },
    async close() {
      await outbox?.stop();
      await db.destroy();
      await sessionPool.end();
      await drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Inside a test: the app on a database it cannot use (nothing listens, a name that does not
 * resolve, a PgBouncer whose server logins fail), its pools closed when the test finishes.
 */
export function appOnUnusableDatabase(
  url: string,
  poolMode: 'session' | 'transaction' = 'session',
): { app: Express; config: Config } {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    SESSION_SECRET: 'test-session-secret-0123456789',
    DATABASE_URL: url,
    DATABASE_POOL_MODE: poolMode,
  });
  const logger = createLogger('silent');
  const db = createDb(url, 2, logger, { poolMode });
  const sessionPool = createPgPool(url, () => undefined, 1, poolMode);
  onTestFinished(async () => {
    await db.destroy();
    await sessionPool.end();
  });
  const app = buildApp({ db, databaseUrl: url, config, logger, sessionPool, sessionSecret: config.sessionSecret! });
  return { app, config };
}
