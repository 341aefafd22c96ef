// The knex configuration for the knex CLI (e.g. `npx tsx node_modules/.bin/knex migrate:status`),
// against DATABASE_DIRECT_URL (default DATABASE_URL). The server, the scripts and the tests build the same configuration
// through src/db/knex.ts; migrations and seeds run with `npm run db:migrate` / `npm run db:seed`,
// which load the TypeScript files through src/db/migrate.ts and src/db/seed.ts.
import { loadConfig } from './src/config';
import { knexConfig } from './src/db/knex';
import { MIGRATIONS_DIR } from './src/db/migrate';

const { databaseUrl, databaseDirectUrl } = loadConfig();

export default {
  ...knexConfig(databaseDirectUrl ?? databaseUrl ?? 'postgres://localhost/stores', 10, undefined, {
    poolMode: databaseDirectUrl ? 'direct' : 'session',
  }),
  migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'] },
};
