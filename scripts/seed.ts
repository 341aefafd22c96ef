// npm run db:seed — applies pending migrations, then loads the demo data in seeds/ (knex seeds,
// run in file-name order). Each seed skips rows that already exist, so running it twice is harmless.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { openDatabase } from '../src/db/open';
import { migrateLatest } from '../src/db/migrate';

export const SEEDS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../seeds');

const config = loadConfig();
const logger = createLogger(config.logLevel);
const database = await openDatabase(config, logger);
try {
  const applied = await migrateLatest(database.db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  const [files] = await database.db.seed.run({ directory: SEEDS_DIR, loadExtensions: ['.ts'], sortDirsSeparately: false });
  logger.info({ seeds: files.map((f) => path.basename(f)) }, 'demo data loaded');
} finally {
  await database.close();
}
