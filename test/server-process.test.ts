import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freePort } from './helpers/free-port';

/**
 * How long a start may take before the test gives up: generous, since the tsx start compiles the
 * whole of src/ and on a busy 2-core machine (the rest of the suite beside it) that has taken over 45 s.
 */
const START_DEADLINE_MS = 150_000;

/**
 * Until the process has said it listens and the health check answers: on a machine where other
 * servers come and go (the rest of the suite), an answer alone could come from another process
 * that took the port, and a signal sent then would reach ours before its shutdown handler.
 */
async function waitForHealth(url: string, deadline: number, output: { log: string }): Promise<void> {
  while (Date.now() < deadline) {
    if (
      output.log.includes('"msg":"stores service listening"') &&
      (await fetch(url).then(
        (r) => r.ok,
        () => false,
      ))
    )
      return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer in time`);
}

function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { log: '' };
  child.stdout.on('data', (chunk: Buffer) => (output.log += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output.log += chunk.toString()));
  return { child, output, exited: once(child, 'exit') };
}

describe('npm start', () => {
  it(
    'runs the compiled server from dist/ in production mode on a data directory the development runner (tsx) initialised and migrated, re-running no migration; its embedded PostgreSQL has a generated superuser password kept in DATA_DIR; a SIGTERM sent to npm stops the server gracefully (exit 0, cluster stopped, port closed)',
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-start-'));
      await fs.chmod(dataDir, 0o755);
      const [port, pgPort] = [await freePort(), await freePort()];
      // NODE_ENV unset: npm start means production
      const { NODE_ENV: _unset, ...inherited } = process.env;
      const env = {
        ...inherited,
        LOG_LEVEL: 'info',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        EMBEDDED_PG_PORT: String(pgPort),
        DATABASE_URL: '',
        ADMIN_EMAIL: 'start-admin@example.ac.uk',
        ADMIN_PASSWORD: 'a start-up admin passphrase',
        // production drains 5 s by default; a second shows the same path
        SHUTDOWN_DRAIN_SECONDS: '1',
      };
      const started: ReturnType<typeof startProcess>[] = [];
      try {
        const dev = startProcess(process.execPath, ['--import', 'tsx', 'src/server.ts'], env);
        started.push(dev);
        await waitForHealth(`http://127.0.0.1:${port}/api/health`, Date.now() + START_DEADLINE_MS, dev.output);
        dev.child.kill('SIGTERM');
        expect((await dev.exited)[0]).toBe(0);
        expect(dev.output.log).toContain('"msg":"migrations applied"');
        // the embedded server's version, and the client tools' beside it
        expect(dev.output.log).toMatch(
          /"postgres":"15\.\d+","clientTools":\{"pg_dump":"\d+\.\d+","pg_restore":"\d+\.\d+","psql":"\d+\.\d+"\},"msg":"PostgreSQL server and client tools"/,
        );

        const production = startProcess('npm', ['start'], env);
        started.push(production);
        const { child: npm, output, exited } = production;
        await waitForHealth(`http://127.0.0.1:${port}/api/health`, Date.now() + START_DEADLINE_MS, output);
        expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(true);
        const serverPid = Number(/"pid":(\d+)/.exec(output.log)?.[1]);
        expect(readFileSync(`/proc/${serverPid}/cmdline`, 'utf8').split('\0').slice(1, -1)).toEqual(['dist/server.js']);
        const serverEnv = readFileSync(`/proc/${serverPid}/environ`, 'utf8').split('\0');
        expect(serverEnv).toContain('NODE_ENV=production');
        // the young generation capped (package.json config.serverNodeOptions): idle RSS under 100 MB
        expect(serverEnv).toContain('NODE_OPTIONS=--max-semi-space-size=4');
        expect(output.log).not.toContain('migrations applied');

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

        // knex records each migration under its TypeScript file name, whichever runner applied it
        const migrations = (await fs.readdir('migrations')).filter((f) => f.endsWith('.ts')).sort();
        const client = new pg.Client({ connectionString: `postgres://stores:${password}@127.0.0.1:${pgPort}/stores` });
        await client.connect();
        const recorded = await client
          .query<{ name: string }>('SELECT name FROM knex_migrations ORDER BY name')
          .finally(() => client.end());
        expect(recorded.rows.map((row) => row.name)).toEqual(migrations);

        npm.kill('SIGTERM');
        const [code] = await exited;
        expect(code).toBe(0);
        expect(output.log).toContain('"msg":"shutting down: /api/health answers 503 while requests drain"');
        expect(output.log).toContain('"msg":"stopped"');
        expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
        expect(
          await fetch(`http://127.0.0.1:${port}/api/health`).then(
            () => 'answered',
            () => 'refused',
          ),
        ).toBe('refused');
      } finally {
        // a server left behind by a failed run: its log lines carry its pid
        for (const { child, output } of started) {
          for (const pid of [child.pid, Number(/"pid":(\d+)/.exec(output.log)?.[1])]) {
            try {
              if (pid) process.kill(pid, 'SIGTERM');
            } catch {
              // already gone
            }
          }
        }
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
    2 * START_DEADLINE_MS + 120_000,
  );
});
