import type { Db } from '../../db/knex';
import { isUniqueViolation } from '../../db/pg-errors';
import { MAX_TIMEOUT_MS, type TestRunOptions, type TestRunResults, type TestType } from './mcp-runs.schemas';

export type TestRunStatus = 'running' | 'completed' | 'failed';

export type TestRunRow = {
  execution_id: string;
  test_type: TestType;
  options: TestRunOptions;
  status: TestRunStatus;
  started_at: Date;
  completed_at: Date | null;
  results: TestRunResults | null;
  error: string | null;
  key_id: number | null;
};

/** How a run ended, as it is written to its row. */
export type TestRunOutcome = { status: 'completed' | 'failed'; results: TestRunResults | null; error: string | null };

/** The partial unique index that lets only one run be 'running' across every instance. */
const ONE_RUNNING_INDEX = 'mcp_test_runs_one_running';

/**
 * A row still 'running' this long after its own timeout is a run whose instance stopped (crashed,
 * redeployed) before it could write the outcome: a live run has been stopped and written by then.
 */
export const ABANDONED_MARGIN_SECONDS = 60;

/** The mcp_test_runs table: the one place its rows are read and written. */
export function mcpRunsRecords(db: Db) {
  return {
    find(executionId: string): Promise<TestRunRow | undefined> {
      return db<TestRunRow>('mcp_test_runs').where({ execution_id: executionId }).first();
    },

    /** The last run that ended (completed or failed), for the status figures. */
    lastFinished(): Promise<TestRunRow | undefined> {
      return db<TestRunRow>('mcp_test_runs')
        .whereNot({ status: 'running' })
        .orderByRaw('completed_at DESC NULLS LAST, started_at DESC')
        .first();
    },

    /** Marks failed every run left 'running' past its timeout and the margin; answers how many. */
    async failAbandoned(): Promise<number> {
      return (
        db('mcp_test_runs')
          .where({ status: 'running' })
          // a row without a timeout of its own (not written by this service) gets the longest one allowed
          .andWhereRaw(
            `started_at < now() - make_interval(secs => coalesce((options->>'timeout')::numeric, ?) / 1000 + ?)`,
            [MAX_TIMEOUT_MS, ABANDONED_MARGIN_SECONDS],
          )
          .update({
            status: 'failed',
            completed_at: db.fn.now(),
            error:
              'Abandoned: the run was still marked running after its timeout; the instance running it stopped before recording an outcome',
          })
      );
    },

    /**
     * The new run's row, or the execution id of the run already in progress (the unique index
     * refused the insert). A run that ends between the refusal and the read lets the insert try again.
     */
    async insertRunning(run: {
      test_type: TestType;
      options: TestRunOptions;
      key_id: number | null;
    }): Promise<{ row: TestRunRow } | { runningId: string }> {
      for (let attempt = 1; ; attempt += 1) {
        try {
          const [row] = await db<TestRunRow>('mcp_test_runs')
            .insert({ test_type: run.test_type, options: run.options, key_id: run.key_id })
            .returning('*');
          return { row };
        } catch (err) {
          if (!isUniqueViolation(err) || (err as { constraint?: string }).constraint !== ONE_RUNNING_INDEX) throw err;
          const running = await db('mcp_test_runs').where({ status: 'running' }).first('execution_id');
          if (running || attempt === 3) return { runningId: running?.execution_id ?? 'unknown' };
        }
      }
    },

    /** Writes how a run ended; a row already failed as abandoned keeps that outcome. */
    async finish(executionId: string, outcome: TestRunOutcome): Promise<void> {
      await db('mcp_test_runs')
        .where({ execution_id: executionId, status: 'running' })
        .update({
          status: outcome.status,
          completed_at: db.fn.now(),
          results: outcome.results === null ? null : JSON.stringify(outcome.results),
          error: outcome.error,
        });
    },

    /** Whole seconds the last 5 completed runs of the type took on average; undefined before any. */
    async averageSeconds(type: TestType): Promise<number | undefined> {
      const recent = db('mcp_test_runs')
        .where({ test_type: type, status: 'completed' })
        .orderBy('completed_at', 'desc')
        .limit(5)
        .select(db.raw('extract(epoch FROM completed_at - started_at) AS seconds'));
      const row = await db
        .from(recent.as('recent'))
        .first<{ average: string | null }>(db.raw('avg(seconds) AS average'));
      return row?.average == null ? undefined : Math.ceil(Number(row.average));
    },
  };
}
