import { z } from 'zod';
import '../../http/openapi';

export const TEST_TYPES = ['unit', 'integration', 'e2e', 'sales', 'system'] as const;
export type TestType = (typeof TEST_TYPES)[number];

/** The types that run the project's own vitest suites in a child process; sales and system are built in. */
export const VITEST_TEST_TYPES = ['unit', 'integration', 'e2e'] as const satisfies readonly TestType[];
export type VitestTestType = (typeof VITEST_TEST_TYPES)[number];
export const isVitestTestType = (type: TestType): type is VitestTestType =>
  (VITEST_TEST_TYPES as readonly string[]).includes(type);

/** vitest's console reporters a client may pick; the JSON report the counts come from is always written too. */
export const VITEST_REPORTERS = ['default', 'verbose', 'dot', 'tap', 'json'] as const;

export const MIN_TIMEOUT_MS = 1_000;
export const MAX_TIMEOUT_MS = 30 * 60_000;
/** Long enough for the integration suite (about 5 minutes on 2 cores) with room to spare. */
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;

export const TestRunOptions = z
  .object({
    coverage: z
      .boolean({ error: 'must be a boolean' })
      .default(false)
      .openapi({ description: 'unit, integration and e2e only: measure coverage (v8)' }),
    reporter: z
      .enum(VITEST_REPORTERS, { error: `must be one of ${VITEST_REPORTERS.join(', ')}` })
      .default('default')
      .openapi({
        description: "unit, integration and e2e only: the vitest reporter whose output's tail the results keep",
      }),
    timeout: z
      .number({ error: 'must be a whole number of milliseconds' })
      .int({ error: 'must be a whole number of milliseconds' })
      .min(MIN_TIMEOUT_MS, { error: `must be at least ${MIN_TIMEOUT_MS} ms` })
      .max(MAX_TIMEOUT_MS, { error: `must be at most ${MAX_TIMEOUT_MS} ms (30 minutes)` })
      .default(DEFAULT_TIMEOUT_MS)
      .openapi({ description: 'ms; the run is stopped and marked failed after it. 1000..1800000, default 600000' }),
  })
  .openapi('McpTestRunOptions');
export type TestRunOptions = z.infer<typeof TestRunOptions>;

export const StartTestRun = z
  .object({
    test_type: z.enum(TEST_TYPES, { error: `must be one of ${TEST_TYPES.join(', ')}` }),
    // prefault, not default: an omitted options object still goes through its fields' defaults
    options: TestRunOptions.prefault({}),
  })
  .superRefine((body, ctx) => {
    if (body.options.coverage && !isVitestTestType(body.test_type)) {
      ctx.addIssue({
        code: 'custom',
        path: ['options', 'coverage'],
        message: 'applies only to unit, integration and e2e runs',
      });
    }
  })
  .openapi('McpStartTestRun');
export type StartTestRun = z.infer<typeof StartTestRun>;

export const ExecutionParams = z.object({ execution_id: z.uuid({ error: 'must be a UUID' }) });

const Percentage = z
  .string()
  .nullable()
  .openapi({ description: 'e.g. "42.5%"; null when it could not be measured', example: '42.5%' });

export const McpStatus = z
  .object({
    system: z.object({
      status: z.enum(['healthy', 'degraded']).openapi({ description: 'degraded while the database does not answer' }),
      version: z.string(),
      uptime: z.number().int().openapi({ description: 'seconds since this process started' }),
      environment: z.string(),
    }),
    database: z.object({
      connected: z.boolean(),
      latency: z
        .number()
        .int()
        .nullable()
        .openapi({ description: 'ms of a SELECT 1 round trip; null when not connected' }),
    }),
    tests: z.object({
      total: z.number().int(),
      passed: z.number().int(),
      failed: z.number().int(),
      last_run: z
        .string()
        .nullable()
        .openapi({ description: 'when the last finished test run ended; null before any' }),
      last_execution_id: z.string().nullable(),
      last_test_type: z.enum(TEST_TYPES).nullable(),
      last_status: z.enum(['completed', 'failed']).nullable(),
    }),
    resources: z.object({
      memory_usage: Percentage.openapi({ description: "this process's resident memory over the machine's memory" }),
      cpu_usage: Percentage.openapi({
        description: "this process's CPU time over the wall time since the previous status call, across all cores",
      }),
      disk_usage: Percentage.openapi({ description: 'used share of the file system holding DATA_DIR' }),
    }),
  })
  .openapi('McpStatus');
export type McpStatus = z.infer<typeof McpStatus>;

export const TestRunStarted = z
  .object({
    execution_id: z.string(),
    status: z.literal('running'),
    started_at: z.string(),
    estimated_duration: z
      .number()
      .int()
      .openapi({ description: 'seconds: the mean of the last 5 completed runs of this type, or a default per type' }),
  })
  .openapi('McpTestRunStarted');
export type TestRunStarted = z.infer<typeof TestRunStarted>;

const Coverage = z
  .object({ lines: z.number(), functions: z.number(), branches: z.number() })
  .nullable()
  .openapi({ description: 'percent covered; null when coverage was not asked for (or the run type has none)' });

export const TestRunResults = z
  .object({
    total_tests: z.number().int(),
    passed: z.number().int(),
    failed: z.number().int(),
    duration: z.number().openapi({ description: 'seconds' }),
    coverage: Coverage,
    checks: z
      .array(z.object({ name: z.string(), passed: z.boolean(), message: z.string() }))
      .optional()
      .openapi({ description: 'sales and system runs: each step or check, in order' }),
    failures: z
      .array(z.object({ file: z.string(), test: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: 'unit, integration and e2e runs: the first failing tests' }),
    output: z
      .string()
      .optional()
      .openapi({ description: "unit, integration and e2e runs: the end of the chosen reporter's output" }),
  })
  .openapi('McpTestRunResults');
export type TestRunResults = z.infer<typeof TestRunResults>;

export const TestRun = z
  .object({
    execution_id: z.string(),
    test_type: z.enum(TEST_TYPES),
    status: z.enum(['running', 'completed', 'failed']).openapi({
      description:
        'completed: the run went to its end (results say how many tests failed); failed: it could not (timeout, crash, a tool missing), see error',
    }),
    options: TestRunOptions,
    started_at: z.string(),
    completed_at: z.string().nullable(),
    results: TestRunResults.nullable(),
    error: z.string().nullable(),
  })
  .openapi('McpTestRun');
export type TestRun = z.infer<typeof TestRun>;
