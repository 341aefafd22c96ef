import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../src/db/embedded';
import { freePort } from './helpers/free-port';

async function connects(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return 'connected';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('the embedded PostgreSQL superuser password', () => {
  it('a cluster made with the old constant password gets the generated one on its next start', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-embedded-'));
    await fs.chmod(dataDir, 0o755);
    const port = await freePort();
    const start = () =>
      startEmbeddedPostgres({ dataDir, port, database: 'stores', onLog: () => undefined, settings: { fsync: 'off' } });
    try {
      // a cluster as an older release left it: superuser password 'stores', no password file
      const first = await start();
      const setup = new pg.Client({ connectionString: first.url });
      await setup.connect();
      await setup.query(`ALTER ROLE stores PASSWORD 'stores'`);
      await setup.end();
      await first.stop();
      await fs.rm(path.join(dataDir, 'pg-password'));

      const second = await start();
      try {
        const password = (await fs.readFile(path.join(dataDir, 'pg-password'), 'utf8')).trim();
        expect(password).toMatch(/^[0-9a-f]{48}$/);
        expect((await fs.stat(path.join(dataDir, 'pg-password'))).mode & 0o777).toBe(0o600);
        expect(second.url).toBe(`postgres://stores:${password}@127.0.0.1:${port}/stores`);
        expect(await connects(second.url)).toBe('connected');
        expect(await connects(`postgres://stores:stores@127.0.0.1:${port}/stores`)).toBe('28P01');
      } finally {
        await second.stop();
      }
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
