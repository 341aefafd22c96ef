import { performance } from 'node:perf_hooks';
import type { Deps } from '../../deps';
import { BadRequest, NotFound } from '../../http/errors';
import { McpTestRunning } from '../../http/mcp-errors';
import type { UserRow } from '../users/users.service';
import type { McpKeyHolder } from '../mcp-keys/mcp-keys.service';
import { mcpRunsRecords, type TestRunOutcome, type TestRunRow } from './mcp-runs.records';
import { runSalesFlow } from './mcp-runs.sales';
import { isVitestTestType, type StartTestRun, type TestRunResults, type TestType } from './mcp-runs.schemas';
import { runSystemChecks, type Check } from './mcp-runs.system';
import { PROJECT_ROOT, runVitestSuite, vitestToolingProblem } from './mcp-runs.vitest';

export type McpRunsDeps = Pick<Deps, 'db' | 'databaseUrl' | 'config' | 'logger'>;

/** The estimate before a type has completed runs of its own: what it takes on a 2-core machine, rounded up. */
const DEFAULT_ESTIMATE_SECONDS: Record<TestType, number> = {
  unit: 15,
  integration: 360,
  e2e: 240,
  sales: 2,
  system: 2,
};

export type StartedRun = { row: TestRunRow; estimatedSeconds: number };

const seconds = (ms: number) => Math.round(ms) / 1000;

/** A sales or system run's steps as test results; coverage does not apply to them. */
function checksResults(checks: Check[], elapsedMs: number): TestRunResults {
  const passed = checks.filter((c) => c.passed).length;
  return {
    total_tests: checks.length,
    passed,
    failed: checks.length - passed,
    duration: seconds(elapsedMs),
    coverage: null,
    checks,
  };
}

/** Rejects when the signal aborts; never settles otherwise. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_resolve, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );

/**
 * Test runs started by MCP clients. One run at a time across every instance (the database's
 * unique index decides); the run itself happens in this process, in the background, and its
 * outcome is written to its row, which clients poll. opts.projectRoot: where the project's suites
 * are (tests point it at a folder without them).
 */
export function mcpRunsService(deps: McpRunsDeps, opts: { projectRoot?: string } = {}) {
  const { db, logger } = deps;
  const root = opts.projectRoot ?? PROJECT_ROOT;
  const records = mcpRunsRecords(db);
  const log = logger.child({ module: 'mcp-runs' });

  /** The run to its end or its timeout. Never throws: a failure is the outcome 'failed' with its reason. */
  async function execute(row: TestRunRow, actor: UserRow): Promise<TestRunOutcome> {
    const signal = AbortSignal.timeout(row.options.timeout);
    const started = performance.now();
    try {
      if (isVitestTestType(row.test_type)) {
        return {
          status: 'completed',
          results: await runVitestSuite(
            root,
            { executionId: row.execution_id, suite: row.test_type, options: row.options },
            signal,
          ),
          error: null,
        };
      }
      // The built-in runs check the signal between steps; the race answers at the timeout even mid-step.
      const run = row.test_type === 'sales' ? runSalesFlow(db, actor, signal) : runSystemChecks(deps, signal);
      const checks = await Promise.race([run, untilAborted(signal)]);
      return { status: 'completed', results: checksResults(checks, performance.now() - started), error: null };
    } catch (err) {
      if (signal.aborted) {
        return {
          status: 'failed',
          results: null,
          error: `Timed out: the ${row.test_type} run was stopped at its timeout of ${row.options.timeout} ms`,
        };
      }
      log.warn({ err, executionId: row.execution_id }, 'test run failed');
      return {
        status: 'failed',
        results: null,
        error: `The ${row.test_type} run could not complete: ${(err as Error).message}`,
      };
    }
  }

  /**
   * Runs and records the outcome without anyone awaiting it. Every error ends here: a run
   * must never be left 'running' by a throw, nor reject unhandled. If even the outcome cannot be
   * written (the database is gone), the row is failed as abandoned after its timeout.
   */
  function runInBackground(row: TestRunRow, actor: UserRow): void {
    void (async () => {
      const outcome = await execute(row, actor).catch((err: unknown): TestRunOutcome => ({
        status: 'failed',
        results: null,
        error: `The run broke: ${(err as Error).message}`,
      }));
      try {
        await records.finish(row.execution_id, outcome);
        log.info(
          {
            executionId: row.execution_id,
            testType: row.test_type,
            status: outcome.status,
            results: outcome.results && { total: outcome.results.total_tests, failed: outcome.results.failed },
          },
          'test run finished',
        );
      } catch (err) {
        log.error({ err, executionId: row.execution_id }, 'the outcome of a test run could not be recorded');
      }
    })();
  }

  return {
    /**
     * Starts a run: 400 when the project's suites are not installed here (asked before anything
     * is written), 409 while another run is in progress anywhere. Runs left 'running' by a stopped
     * instance are failed first, so they cannot block runs for ever.
     */
    async start(input: StartTestRun, key: McpKeyHolder): Promise<StartedRun> {
      if (isVitestTestType(input.test_type)) {
        const problem = vitestToolingProblem(root);
        if (problem) throw BadRequest(problem);
      }
      const abandoned = await records.failAbandoned();
      if (abandoned > 0) log.warn({ abandoned }, 'test runs left running past their timeout were marked failed');
      const estimatedSeconds =
        (await records.averageSeconds(input.test_type)) ?? DEFAULT_ESTIMATE_SECONDS[input.test_type];
      const inserted = await records.insertRunning({
        test_type: input.test_type,
        options: input.options,
        key_id: key.id,
      });
      if ('runningId' in inserted) throw McpTestRunning(inserted.runningId);
      runInBackground(inserted.row, key.creator);
      return { row: inserted.row, estimatedSeconds };
    },

    async get(executionId: string): Promise<TestRunRow> {
      const row = await records.find(executionId);
      if (!row) throw NotFound('Test run not found');
      return row;
    },
  };
}
