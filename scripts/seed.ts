// npm run db:seed — applies pending migrations, then loads the demo data in seeds/ (knex seeds,
// run in file-name order). Each seed skips rows that already exist, so running it twice is harmless.
// Under NODE_ENV=production (npm run db:seed means development when NODE_ENV is unset) it refuses unless given --force.
import { loadConfig, loadEnvFile } from '../src/config';
import { createLogger } from '../src/logger';
import { openDatabase } from '../src/db/open';
import { migrateLatest } from '../src/db/migrate';
import { runSeeds } from '../src/db/seed';

loadEnvFile();
const config = loadConfig();
// the demo accounts' passwords are printed in README: a production database must not get them by accident
if (config.env === 'production' && !process.argv.slice(2).includes('--force')) {
  console.error(
    'Refusing to seed under NODE_ENV=production: the demo data has accounts with published passwords; npm run db:seed -- --force to load it anyway',
  );
  process.exit(1);
}
const logger = createLogger(config.logLevel);
const database = await openDatabase(config, logger);
try {
  const applied = await migrateLatest(database.db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  logger.info({ seeds: await runSeeds(database.db) }, 'demo data loaded');
} finally {
  await database.close();
}
