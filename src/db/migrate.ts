import type { Knex } from 'knex';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { transaction } from './transaction';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

type Migration = { up: (knex: Knex) => Promise<void>; down: (knex: Knex) => Promise<void> };

/** The migration files of this release, in the order they apply. */
export async function migrationFiles(): Promise<string[]> {
  const files = await fs.readdir(MIGRATIONS_DIR);
  return files.filter((f) => /^\d{14}_.+\.ts$/.test(f)).sort();
}

/**
 * Loads the TypeScript migrations through our own import() so that both tsx (server, CLI)
 * and vitest (tests) transpile them; knex's own loader would hand .ts files to plain Node.
 * The import names the folder literally so that the production build (scripts/build.mjs)
 * bundles every migration; a migration keeps its .ts file name in knex_migrations either way.
 */
const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: migrationFiles,
  getMigrationName: (file) => file,
  async getMigration(file) {
    return (await import(`../../migrations/${path.basename(file, '.ts')}.ts`)) as Migration;
  },
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}

/** The advisory lock whose holder runs the migrations, while the others wait their turn. */
export const MIGRATIONS_TURN = 'stores.migrations';

/**
 * migrateLatest for a starting instance, or a restore: several at once on one database take turns.
 * knex's own lock does not make them wait: the second fails ("Migration table is already locked"),
 * or sooner, both create knex_migrations and one fails on it. The turn is a transaction-scoped
 * advisory lock, held by a transaction that stays open on a connection of its own while the
 * migrations run on others (so the pool needs two), and that works through PgBouncer in
 * transaction mode too. The wait and the idle holder have no timeout: another instance's
 * migrations may take minutes on a first start.
 */
export async function migrateLatestInTurn(db: Knex): Promise<string[]> {
  return transaction(db, async (trx) => {
    await trx.raw('SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0');
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [MIGRATIONS_TURN]);
    return migrateLatest(db);
  });
}

export async function migrateRollbackAll(db: Knex): Promise<void> {
  await db.migrate.rollback({ migrationSource }, true);
}
