import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { startEmbeddedPostgres } from './embedded';
import { createDb } from './knex';

export type OpenDatabase = {
  /** the pool every request uses (DATABASE_URL: PostgreSQL, or PgBouncer in either mode) */
  db: Knex;
  /** db's connection string (the session store's pool opens its own connections there) */
  url: string;
  /**
   * a session connection to the primary (DATABASE_DIRECT_URL, default DATABASE_URL): migrations, the
   * scheduled jobs and their locks; the same pool as db when both are the same session connection
   */
  direct: Knex;
  /** DATABASE_DIRECT_URL's connection string: the outbox's LISTEN, pg_dump and pg_restore */
  directUrl: string;
  close: () => Promise<void>;
};

/** A handful: migrations, one job at a time per instance, the restore's migrations. */
const DIRECT_POOL_MAX = 3;

/** DATABASE_URL when set; otherwise the embedded PostgreSQL under DATA_DIR. */
export async function openDatabase(config: Config, logger: Logger): Promise<OpenDatabase> {
  const knexLog = logger.child({ module: 'knex' });
  if (config.databaseUrl) {
    const db = createDb(config.databaseUrl, 10, knexLog, { poolMode: config.databasePoolMode });
    const directUrl = config.databaseDirectUrl ?? config.databaseUrl;
    if (config.databasePoolMode === 'session' && directUrl === config.databaseUrl)
      return { db, url: config.databaseUrl, direct: db, directUrl, close: () => db.destroy() };
    if (!config.databaseDirectUrl)
      logger.warn(
        'DATABASE_POOL_MODE=transaction without DATABASE_DIRECT_URL: the outbox cannot LISTEN through the pooler ' +
          '(it polls instead) and migrations, job locks and pg_dump go through it; set DATABASE_DIRECT_URL',
      );
    const direct = createDb(directUrl, DIRECT_POOL_MAX, knexLog, { poolMode: 'direct' });
    return {
      db,
      url: config.databaseUrl,
      direct,
      directUrl,
      close: async () => {
        await db.destroy();
        await direct.destroy();
      },
    };
  }
  const pgLog = logger.child({ module: 'embedded-postgres' });
  const embedded = await startEmbeddedPostgres({
    dataDir: config.dataDir,
    port: config.embeddedPgPort,
    database: 'stores',
    onLog: (line) => pgLog.debug(line.trim()),
  });
  logger.info(
    { dataDir: config.dataDir, port: config.embeddedPgPort },
    embedded.reused ? 'using the embedded PostgreSQL already running on DATA_DIR' : 'embedded PostgreSQL started',
  );
  const db = createDb(embedded.url, 10, knexLog);
  return {
    db,
    url: embedded.url,
    direct: db,
    directUrl: embedded.url,
    close: async () => {
      await db.destroy();
      await embedded.stop();
    },
  };
}
