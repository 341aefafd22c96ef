import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '../seeds/01_users';
import { testApp, type TestApp } from './helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

/** npm run db:seed's script against this file's database, with the given NODE_ENV and arguments. */
async function seed(nodeEnv: string, args: string[] = []): Promise<{ code: number | null; output: string }> {
  const env = {
    ...process.env,
    NODE_ENV: nodeEnv,
    DATABASE_URL: t.databaseUrl,
    DATA_DIR: t.dataDir,
    LOG_LEVEL: 'info',
    ADMIN_EMAIL: '',
    ADMIN_PASSWORD: '',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/seed.ts', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

const demoAccounts = () =>
  t
    .db('users')
    .whereIn(
      'email',
      DEMO_USERS.map((demo) => demo.email),
    )
    .pluck('email');

describe('npm run db:seed', () => {
  it('refuses under NODE_ENV=production (exit 1, says why and how), creating no demo account; --force seeds', async () => {
    const refused = await seed('production');
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(
      'NODE_ENV=production: the demo data has accounts with published passwords; npm run db:seed -- --force to load it anyway',
    );
    expect(await demoAccounts()).toEqual([]);

    const forced = await seed('production', ['--force']);
    expect(forced.code, forced.output).toBe(0);
    expect((await demoAccounts()).sort()).toEqual(['manager@example.ac.uk', 'user@example.ac.uk']);
  });
});
