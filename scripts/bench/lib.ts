// Shared benchmark harness: a real server process on a fresh embedded database, sessions, load, memory.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import type { Knex } from 'knex';
import { embeddedPassword } from '../../src/db/embedded';
import { createDb } from '../../src/db/knex';
import { freePort } from '../../test/helpers/free-port';

export type BenchServer = {
  baseUrl: string;
  db: Knex;
  pid: number;
  /** signs in and returns the Cookie header value of the new session */
  login: (email: string, password: string) => Promise<string>;
  stop: () => Promise<void>;
};

/** The node options `npm start` gives the server unless NODE_OPTIONS is set (package.json config). */
export const serverNodeOptions: string = JSON.parse(readFileSync('package.json', 'utf8')).config.serverNodeOptions;

export const BENCH_ADMIN = { email: 'bench-admin@example.ac.uk', password: 'a benchmark admin passphrase' };

async function waitForHealth(baseUrl: string, child: ChildProcess, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${baseUrl}/api/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('server did not become healthy in time');
}

/**
 * Starts the server as `npm start` runs it (dist/server.js, built first when the sources changed,
 * production mode) as its own process with a throwaway embedded PostgreSQL; `env` adds to its
 * environment (the outbox bench lets its webhooks reach a receiver on 127.0.0.1).
 */
export async function startBenchServer(env: Record<string, string> = {}): Promise<BenchServer> {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-bench-'));
  await fs.chmod(dataDir, 0o755);
  const [port, pgPort] = [await freePort(), await freePort()];
  // BENCH_CPU_PROF_DIR=<dir> writes a V8 CPU profile of each server process (open it in Chrome DevTools).
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
    : [];
  const child = spawn(process.execPath, [...profile, 'dist/server.js'], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      NODE_OPTIONS: process.env.NODE_OPTIONS ?? serverNodeOptions,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      EMBEDDED_PG_PORT: String(pgPort),
      DATABASE_URL: '',
      ADMIN_EMAIL: BENCH_ADMIN.email,
      ADMIN_PASSWORD: BENCH_ADMIN.password,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      LOGIN_MAX_FAILURES: '1000',
      LOGIN_MAX_FAILURES_PER_ADDRESS: '100000',
      LOGIN_MAX_FAILURES_PER_DAY: '100000',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(baseUrl, child);
  // the embedded cluster's superuser password is generated per data directory and kept there
  const db = createDb(`postgres://stores:${await embeddedPassword(dataDir)}@127.0.0.1:${pgPort}/stores`, 4);
  return {
    baseUrl,
    db,
    pid: child.pid!,
    login: (email, password) => signIn(baseUrl, email, password),
    async stop() {
      await db.destroy();
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in on the service at baseUrl and returns the Cookie header value of the new session. */
export async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (!res.ok) throw new Error(`login failed for ${email}: ${res.status}`);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

export const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0;
export const round = (n: number) => Math.round(n * 10) / 10;

export type QuoteSales = {
  processed: number;
  refusedForStock: number;
  failures: number;
  /** seconds from the first request to the last answer */
  elapsed: number;
  cycle: number[];
  save: number[];
  process: number[];
  failureSamples: Set<string>;
};

/**
 * Each session (a Cookie header) in a loop until `seconds` have passed: save a draft quote of 1-3
 * random lines of `itemIds` on `chargeCode`, process it; latencies in ms.
 */
export async function sellThroughQuotes(opts: {
  baseUrl: string;
  cookies: string[];
  itemIds: number[];
  chargeCode: string;
  seconds: number;
  tag: string;
}): Promise<QuoteSales> {
  const { baseUrl, cookies, itemIds, chargeCode, seconds, tag } = opts;
  const figures: QuoteSales = {
    processed: 0,
    refusedForStock: 0,
    failures: 0,
    elapsed: 0,
    cycle: [],
    save: [],
    process: [],
    failureSamples: new Set(),
  };
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const post = async (cookie: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: body ? { cookie, 'content-type': 'application/json' } : { cookie },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  const deadline = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    cookies.map(async (cookie, worker) => {
      let n = 0;
      while (Date.now() < deadline) {
        n += 1;
        const lines = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
          itemId: itemIds[Math.floor(random() * itemIds.length)],
          quantity: 1 + Math.floor(random() * 2),
        }));
        const t0 = performance.now();
        const saved = await post(cookie, '/api/sales/quotes', {
          chargeCode,
          sessionId: `bench-${tag}-${worker}-${n}`,
          items: lines,
        });
        const t1 = performance.now();
        figures.save.push(t1 - t0);
        if (saved.status !== 200) {
          figures.failures += 1;
          figures.failureSamples.add(`save ${saved.status} ${String(saved.body.message)}`);
          continue;
        }
        const quote = saved.body.quote as { id: number };
        const done = await post(cookie, `/api/sales/quotes/${quote.id}/process`);
        const t2 = performance.now();
        figures.process.push(t2 - t1);
        figures.cycle.push(t2 - t0);
        if (done.status === 200) figures.processed += 1;
        else if (done.status === 400 && String(done.body.message).startsWith('Insufficient stock'))
          figures.refusedForStock += 1;
        else {
          figures.failures += 1;
          figures.failureSamples.add(`process ${done.status} ${String(done.body.message)}`);
        }
      }
    }),
  );
  figures.elapsed = (Date.now() - started) / 1000;
  return figures;
}

export type LoadResult = {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
};

/** autocannon against one endpoint; `requests` lets each request vary (e.g. a different id). */
export async function runLoad(opts: {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  duration?: number;
  amount?: number;
  requests?: autocannon.Request[];
}): Promise<LoadResult> {
  const result = await autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections ?? 50,
    ...(opts.amount ? { amount: opts.amount } : { duration: opts.duration ?? 10 }),
    requests: opts.requests,
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

/** Samples a process's resident set size every 50 ms until stopped; returns the peak in MB. */
export function sampleRss(pid: number): { stop: () => number } {
  let peakKb = 0;
  const read = () => {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match) peakKb = Math.max(peakKb, Number(match[1]));
    } catch {
      // process gone
    }
  };
  read();
  const timer = setInterval(read, 50);
  return {
    stop() {
      clearInterval(timer);
      read();
      return Math.round(peakKb / 1024);
    },
  };
}

export function report(title: string, figures: Record<string, string | number>): void {
  console.log(`\n## ${title}`);
  for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(28)} ${v}`);
}

/** A figure with a target (issue 15's table): printed at once, and again in run.ts's closing summary. */
export type TargetCheck = { figure: string; value: number; unit: string; target: string; met: boolean };
const targetChecks: TargetCheck[] = [];

/** Records `value` against `bound` (at least, or at most) and prints whether it met it. */
export function checkTarget(
  figure: string,
  value: number,
  unit: string,
  bound: { atLeast: number } | { atMost: number },
): TargetCheck {
  const met = 'atLeast' in bound ? value >= bound.atLeast : value <= bound.atMost;
  const target = 'atLeast' in bound ? `>= ${bound.atLeast} ${unit}` : `<= ${bound.atMost} ${unit}`;
  const check = { figure, value, unit, target, met };
  targetChecks.push(check);
  console.log(`  target: ${figure} ${value} ${unit} (${target}) ${met ? 'met' : 'MISSED'}`);
  return check;
}

export const recordedTargets = (): readonly TargetCheck[] => targetChecks;

/** The words the benchmarks name their seeded items from (a stores catalogue's kinds of thing). */
export const WORDS = [
  'Beaker',
  'Conical flask',
  'Pipette',
  'Burette',
  'Cylinder',
  'Test tube',
  'Petri dish',
  'Funnel',
  'Spatula',
  'Crucible',
  'Gloves',
  'Goggles',
  'Clamp',
  'Stand',
  'Tongs',
  'Thermometer',
  'Hotplate',
  'Stirrer',
  'Filter paper',
  'Wash bottle',
];
