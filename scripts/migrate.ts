// npm run db:migrate — applies pending migrations (npm start does this too).
import { loadConfig, loadEnvFile } from '../src/config';
import { createLogger } from '../src/logger';
import { openDatabase } from '../src/db/open';
import { migrateLatest } from '../src/db/migrate';

loadEnvFile();
const config = loadConfig();
const logger = createLogger(config.logLevel);
const database = await openDatabase(config, logger);
try {
  const applied = await migrateLatest(database.direct);
  logger.info({ migrations: applied }, applied.length ? 'migrations applied' : 'already up to date');
} finally {
  await database.close();
}
