// Footprint: the time from `npm start` to the first /health 200 on an existing data directory,
// and the idle server's resident memory, beside bare node and the tsx loader of `npm run dev`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/helpers/free-port';
import { checkTarget, report, sampleRss } from './lib';

/** How long the server is left alone after its first /health answer before its memory is read. */
const SETTLE_MS = 5_000;
/** V8 gives back the young generation that start-up grew only after some 10-20 s of idling. */
const LONG_IDLE_MS = 30_000;
const HEALTH_POLL_MS = 20;

type Started = { child: ChildProcess; serverPid: number; startMs: number; stop: () => Promise<void> };

async function start(command: string[], env: NodeJS.ProcessEnv): Promise<Started> {
  const [port, pgPort] = [await freePort(), await freePort()];
  const began = performance.now();
  const child = spawn(command[0], command.slice(1), {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', EMBEDDED_PG_PORT: String(pgPort), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited with code ${child.exitCode}:\n${log}`);
    if (Date.now() > deadline) throw new Error(`${command.join(' ')} did not answer /health in time`);
    if (
      await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, HEALTH_POLL_MS));
  }
  const startMs = performance.now() - began;
  // npm start's server is npm's child: its pid is in its log lines
  const serverPid = Number(/"pid":(\d+)/.exec(log)?.[1] ?? child.pid);
  return {
    child,
    serverPid,
    startMs,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function idleRssMb(pid: number, afterMs = SETTLE_MS): Promise<number> {
  await new Promise((r) => setTimeout(r, afterMs));
  return sampleRss(pid).stop();
}

async function bareNodeRssMb(args: string[]): Promise<number> {
  const child = spawn(process.execPath, [...args, '-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 1_000));
  const rss = sampleRss(child.pid!).stop();
  child.kill();
  return rss;
}

export async function run(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-bench-footprint-'));
  await fs.chmod(dataDir, 0o755);
  const { NODE_ENV: _unset, ...inherited } = process.env;
  const env = { ...inherited, DATA_DIR: dataDir, DATABASE_URL: '' };
  const devMode = [process.execPath, '--import', 'tsx', 'src/server.ts'];
  try {
    // the first start initialises the cluster and migrates it with the development (tsx) runner
    const first = await start(devMode, { ...env, NODE_ENV: 'production' });
    await first.stop();

    const dev = await start(devMode, { ...env, NODE_ENV: 'production' });
    const devRss = await idleRssMb(dev.serverPid);
    await dev.stop();

    // npm start on an unchanged tree: dist/ is up to date, as on every restart but the first after a change
    const buildStarted = performance.now();
    await fs.rm('dist/.inputs-sha256', { force: true });
    execFileSync(process.execPath, ['scripts/build.mjs']);
    const buildMs = performance.now() - buildStarted;
    const production = await start(['npm', 'start'], env);
    const productionRss = await idleRssMb(production.serverPid);
    const productionLongIdleRss = await idleRssMb(production.serverPid, LONG_IDLE_MS - SETTLE_MS);
    await production.stop();

    report('idle server after start, existing data directory (production mode)', {
      'npm start -> /health 200': `${(production.startMs / 1000).toFixed(2)} s (after a change, the build adds ${(buildMs / 1000).toFixed(2)} s)`,
      'npm start idle RSS': `${productionRss} MB (${LONG_IDLE_MS / 1000} s after start: ${productionLongIdleRss} MB)`,
      'tsx -> /health 200': `${(dev.startMs / 1000).toFixed(2)} s`,
      'tsx idle RSS': `${devRss} MB`,
      'bare node RSS': `${await bareNodeRssMb([])} MB`,
      'bare node + tsx RSS': `${await bareNodeRssMb(['--import', 'tsx'])} MB`,
    });
    checkTarget(
      'npm start to /health 200, existing data directory',
      Number((production.startMs / 1000).toFixed(2)),
      's',
      { atMost: 3 },
    );
    checkTarget('idle server RSS after start', productionRss, 'MB', { atMost: 110 });
    checkTarget(`idle server RSS ${LONG_IDLE_MS / 1000} s after start`, productionLongIdleRss, 'MB', { atMost: 100 });
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
