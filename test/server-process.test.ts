import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freePort } from './helpers/free-port';

async function waitForHealth(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer in time`);
}

describe('npm start', () => {
  it('serves in production mode on its embedded PostgreSQL (a generated superuser password kept in DATA_DIR); a SIGTERM sent to npm stops the server gracefully (exit 0, cluster stopped, port closed)', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-start-'));
    await fs.chmod(dataDir, 0o755);
    const [port, pgPort] = [await freePort(), await freePort()];
    // NODE_ENV unset: npm start means production
    const { NODE_ENV: _unset, ...inherited } = process.env;
    const npm = spawn('npm', ['start'], {
      env: {
        ...inherited,
        LOG_LEVEL: 'info',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        EMBEDDED_PG_PORT: String(pgPort),
        DATABASE_URL: '',
        ADMIN_EMAIL: 'start-admin@example.ac.uk',
        ADMIN_PASSWORD: 'start-admin-password',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    npm.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const exited = once(npm, 'exit');
    try {
      await waitForHealth(`http://127.0.0.1:${port}/api/health`, Date.now() + 45_000);
      expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(true);
      const serverPid = Number(/"pid":(\d+)/.exec(log)?.[1]);
      expect(readFileSync(`/proc/${serverPid}/environ`, 'utf8').split('\0')).toContain('NODE_ENV=production');

      // the superuser password is generated for this data directory, kept there (0600), and the old constant is refused
      const passwordFile = path.join(dataDir, 'pg-password');
      expect((await fs.stat(passwordFile)).mode & 0o777).toBe(0o600);
      const password = (await fs.readFile(passwordFile, 'utf8')).trim();
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      const connect = async (pw: string) => {
        const client = new pg.Client({ connectionString: `postgres://stores:${pw}@127.0.0.1:${pgPort}/stores` });
        try {
          await client.connect();
          return 'connected';
        } catch (err) {
          return (err as { code?: string }).code;
        } finally {
          await client.end().catch(() => undefined);
        }
      };
      expect(await connect(password)).toBe('connected');
      expect(await connect('stores')).toBe('28P01');

      npm.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
      expect(log).toContain('"msg":"shutting down"');
      expect(log).toContain('"msg":"stopped"');
      expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
      expect(await fetch(`http://127.0.0.1:${port}/api/health`).then(() => 'answered', () => 'refused')).toBe('refused');
    } finally {
      // a server left behind by a failed run: its log lines carry its pid
      const serverPid = Number(/"pid":(\d+)/.exec(log)?.[1]);
      for (const pid of [npm.pid, serverPid]) {
        try {
          if (pid) process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
