import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { TestRunOptions, TestRunResults, VitestTestType } from './mcp-runs.schemas';

/** The project's root (package.json, vitest.config.ts, test/), from this file's place in src/modules/mcp-runs. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const vitestBin = (root: string) => path.join(root, 'node_modules', '.bin', 'vitest');

/**
 * Why the project's suites cannot run here, or undefined when they can. A production image
 * installs neither the dev dependencies nor the tests.
 */
export function vitestToolingProblem(root: string): string | undefined {
  const missing = [
    existsSync(vitestBin(root)) ? undefined : 'node_modules/.bin/vitest',
    existsSync(path.join(root, 'test')) ? undefined : 'the test/ directory',
  ].filter(Boolean);
  if (missing.length === 0) return undefined;
  return `The test tooling is not installed on this instance (${missing.join(' and ')} missing, as in a production image); only sales and system runs are available`;
}

/** The vitest projects (vitest.config.ts) that make each suite. */
const SUITE_PROJECTS: Record<VitestTestType, string[]> = {
  unit: ['unit'],
  integration: ['api', 'api-fresh'],
  e2e: ['browser'],
};

/**
 * Set in the child: the suites' config leaves out the test files that start runs of their own, so a
 * run does not start runs inside itself.
 */
const NESTED_RUN_MARKER = 'STORES_MCP_TEST_RUN';

/**
 * The child's environment: this process's, without anything that would point the suites at the
 * live database (DATABASE_URL, TEST_DATABASE_URL, libpq's PG* variables), the service's secrets,
 * or the markers of a vitest run this process may itself be part of. The test suite's global
 * setup then starts its own embedded PostgreSQL in the run's temporary directory.
 */
const WITHHELD =
  /^(DATABASE_URL|TEST_DATABASE_URL|PG.*|SESSION_SECRET|ADMIN_EMAIL|ADMIN_PASSWORD|OIDC_.*|WEBHOOK_SECRET|NODE_OPTIONS|NODE_ENV|VITEST.*|TEST|TINYPOOL.*)$/;
function childEnv(runDir: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !WITHHELD.test(name)));
  return { ...env, TMPDIR: runDir, NO_COLOR: '1', FORCE_COLOR: '0', [NESTED_RUN_MARKER]: '1' };
}

/** What the results keep of the reporter's output, and of each failure. */
const OUTPUT_TAIL_CHARS = 8_000;
const FAILURE_MESSAGE_CHARS = 1_000;
const MAX_FAILURES = 20;
/** After the interrupt at the timeout, how long the suite and its PostgreSQL get to stop before being killed. */
const STOP_GRACE_MS = 5_000;

export class RunTimedOut extends Error {}

type JsonReport = {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
};

type CoverageSummary = { total: Record<'lines' | 'functions' | 'branches', { pct: number }> };

const tail = (text: string, chars: number) => (text.length > chars ? `...${text.slice(-chars)}` : text);

/** Signals the child's whole process group (vitest, its workers, the embedded PostgreSQL); gone already is fine. */
function signalGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group has already exited
  }
}

/**
 * Runs a suite with `vitest run` in a child process of its own process group, with its own
 * temporary directory (TMPDIR) that holds the reports and the suite's database cluster and is
 * removed afterwards. At the timeout (signal) the group is interrupted, then killed, and
 * RunTimedOut is thrown. Counts come from vitest's JSON report, coverage from its json-summary.
 */
export async function runVitestSuite(
  root: string,
  { executionId, suite, options }: { executionId: string; suite: VitestTestType; options: TestRunOptions },
  signal: AbortSignal,
): Promise<TestRunResults> {
  const runDir = path.join(os.tmpdir(), `stores-mcp-run-${executionId}`);
  await fs.mkdir(runDir, { recursive: true });
  // The suite's PostgreSQL runs as the postgres OS user when this process is root: it must reach its cluster inside.
  await fs.chmod(runDir, 0o755);
  try {
    const reportFile = path.join(runDir, 'report.json');
    const coverageDir = path.join(runDir, 'coverage');
    const reporters =
      options.reporter === 'json' ? ['--reporter=json'] : [`--reporter=${options.reporter}`, '--reporter=json'];
    const coverage = options.coverage
      ? [
          '--coverage.enabled',
          '--coverage.provider=v8',
          '--coverage.reporter=json-summary',
          `--coverage.reportsDirectory=${coverageDir}`,
          '--coverage.reportOnFailure',
          '--coverage.include=src/**/*.ts',
        ]
      : [];
    const projects = SUITE_PROJECTS[suite].map((name) => `--project=${name}`);
    const args = [vitestBin(root), 'run', ...projects, ...reporters, `--outputFile.json=${reportFile}`, ...coverage];

    const started = Date.now();
    // node runs vitest's script itself: no shell, no PATH lookup, and not this process's loaders (tsx).
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: childEnv(runDir),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    let output = '';
    const collect = (chunk: Buffer) => {
      output = tail(output + chunk.toString('utf8'), OUTPUT_TAIL_CHARS);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    // A service that exits mid-run takes the suite with it rather than leaving it orphaned.
    const killOnExit = () => signalGroup(child.pid!, 'SIGKILL');
    process.once('exit', killOnExit);

    let killTimer: NodeJS.Timeout | undefined;
    const stopAtTimeout = () => {
      signalGroup(child.pid!, 'SIGINT');
      killTimer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), STOP_GRACE_MS);
    };
    if (signal.aborted) stopAtTimeout();
    else signal.addEventListener('abort', stopAtTimeout, { once: true });
    let code: number | null;
    try {
      [code] = await exited;
    } finally {
      signal.removeEventListener('abort', stopAtTimeout);
      process.removeListener('exit', killOnExit);
      // whatever vitest left in its group (a worker, the cluster) goes with it
      signalGroup(child.pid!, 'SIGKILL');
      clearTimeout(killTimer);
    }
    if (signal.aborted) throw new RunTimedOut(`The ${suite} suite was stopped at its timeout (${options.timeout} ms)`);

    const report = await readJson<JsonReport>(reportFile);
    if (!report)
      throw new Error(
        `vitest ended (exit code ${code}) without writing its report: ${tail(output.trim(), 2_000) || 'no output'}`,
      );
    let measured: TestRunResults['coverage'] = null;
    if (options.coverage) {
      const summary = await readJson<CoverageSummary>(path.join(coverageDir, 'coverage-summary.json'));
      if (!summary) throw new Error('Coverage was asked for but vitest wrote no coverage summary');
      measured = {
        lines: summary.total.lines.pct,
        functions: summary.total.functions.pct,
        branches: summary.total.branches.pct,
      };
    }
    return {
      total_tests: report.numTotalTests,
      passed: report.numPassedTests,
      failed: report.numFailedTests,
      duration: (Date.now() - started) / 1000,
      coverage: measured,
      failures: failuresOf(root, report),
      output: output.trim(),
    };
  } finally {
    await fs.rm(runDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The first failing tests, and the files that failed without a test to blame (a broken import, a hook). */
function failuresOf(root: string, report: JsonReport): TestRunResults['failures'] {
  const failures: NonNullable<TestRunResults['failures']> = [];
  for (const file of report.testResults) {
    const name = path.relative(root, file.name);
    const failedTests = file.assertionResults.filter((a) => a.status === 'failed');
    for (const test of failedTests) {
      failures.push({
        file: name,
        test: test.fullName,
        message: tail((test.failureMessages ?? []).join('\n'), FAILURE_MESSAGE_CHARS),
      });
    }
    if (file.status === 'failed' && failedTests.length === 0) {
      failures.push({
        file: name,
        test: '(file)',
        message: tail(file.message || 'the file failed', FAILURE_MESSAGE_CHARS),
      });
    }
  }
  return failures.slice(0, MAX_FAILURES);
}
