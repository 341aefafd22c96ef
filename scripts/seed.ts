// npm run db:seed — applies pending migrations, then loads the demo data in seeds/ (knex seeds,
// run in file-name order). Each seed skips rows that already exist, so running it twice is harmless.
import { loadConfig, loadEnvFile } from '../src/config';
import { createLogger } from '../src/logger';
import { openDatabase } from '../src/db/open';
import { migrateLatest } from '../src/db/migrate';
import { runSeeds } from '../src/db/seed';

loadEnvFile();
const config = loadConfig();
const logger = createLogger(config.logLevel);
const database = await openDatabase(config, logger);
try {
  const applied = await migrateLatest(database.db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  logger.info({ seeds: await runSeeds(database.db) }, 'demo data loaded');
} finally {
  await database.close();
}
