import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { startEmbeddedPostgres } from './embedded';
import { createDb } from './knex';

export type OpenDatabase = { db: Knex; url: string; close: () => Promise<void> };

/** DATABASE_URL when set; otherwise the embedded PostgreSQL under DATA_DIR. */
export async function openDatabase(config: Config, logger: Logger): Promise<OpenDatabase> {
  if (config.databaseUrl) {
    const db = createDb(config.databaseUrl, 10, logger.child({ module: 'knex' }));
    return { db, url: config.databaseUrl, close: () => db.destroy() };
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
  const db = createDb(embedded.url, 10, logger.child({ module: 'knex' }));
  return {
    db,
    url: embedded.url,
    close: async () => {
      await db.destroy();
      await embedded.stop();
    },
  };
}
