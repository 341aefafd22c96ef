import type { Knex } from 'knex';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const SEEDS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../seeds');

/**
 * Loads the TypeScript seeds through our own import(), like the migrations, so that both
 * tsx (npm run db:seed) and vitest transpile them; knex's loader hands .ts to plain Node.
 */
const seedSource: Knex.SeedSource<string> = {
  async getSeeds(config) {
    const files = (await fs.readdir(SEEDS_DIR)).filter((f) => /^\d+_.+\.ts$/.test(f)).sort();
    return config.specific ? files.filter((f) => f === config.specific) : files;
  },
  async getSeed(file) {
    return (await import(pathToFileURL(path.join(SEEDS_DIR, file)).href)) as Knex.Seed;
  },
};

/** Runs the demo-data seeds in file-name order (or one of them); returns the files run. */
export async function runSeeds(db: Knex, specific?: string): Promise<string[]> {
  const [files] = await db.seed.run({ seedSource, specific });
  return files.map((f) => path.basename(f));
}
