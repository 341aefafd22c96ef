import type { TestRunRow } from './mcp-runs.records';
import type { McpStatus, TestRun, TestRunResults, TestRunStarted } from './mcp-runs.schemas';
import type { StartedRun } from './mcp-runs.service';
import type { StatusRecord } from './mcp-status.service';

/** A share (0..1) as the spec's percentage string, one decimal: 0.425 -> "42.5%". */
const percentage = (share: number | null) => (share === null ? null : `${(share * 100).toFixed(1)}%`);

export function presentMcpStatus(s: StatusRecord): McpStatus {
  const last = s.lastRun;
  return {
    system: {
      status: s.database.connected ? 'healthy' : 'degraded',
      version: s.version,
      uptime: s.uptimeSeconds,
      environment: s.environment,
    },
    database: { connected: s.database.connected, latency: s.database.latencyMs },
    tests: {
      // a run that failed before producing results (a timeout) counts no tests
      total: last?.results?.total_tests ?? 0,
      passed: last?.results?.passed ?? 0,
      failed: last?.results?.failed ?? 0,
      last_run: last?.completed_at?.toISOString() ?? null,
      last_execution_id: last?.execution_id ?? null,
      last_test_type: last?.test_type ?? null,
      last_status: last && last.status !== 'running' ? last.status : null,
    },
    resources: {
      memory_usage: percentage(s.memoryShare),
      cpu_usage: percentage(s.cpuShare),
      disk_usage: percentage(s.diskShare),
    },
  };
}

export const presentTestRunStarted = ({ row, estimatedSeconds }: StartedRun): TestRunStarted => ({
  execution_id: row.execution_id,
  status: 'running',
  started_at: row.started_at.toISOString(),
  estimated_duration: estimatedSeconds,
});

function presentResults(r: TestRunResults): TestRunResults {
  return {
    total_tests: r.total_tests,
    passed: r.passed,
    failed: r.failed,
    duration: r.duration,
    coverage: r.coverage
      ? { lines: r.coverage.lines, functions: r.coverage.functions, branches: r.coverage.branches }
      : null,
    ...(r.checks && { checks: r.checks.map((c) => ({ name: c.name, passed: c.passed, message: c.message })) }),
    ...(r.failures && { failures: r.failures.map((f) => ({ file: f.file, test: f.test, message: f.message })) }),
    ...(r.output !== undefined && { output: r.output }),
  };
}

export const presentTestRun = (row: TestRunRow): TestRun => ({
  execution_id: row.execution_id,
  test_type: row.test_type,
  status: row.status,
  options: { coverage: row.options.coverage, reporter: row.options.reporter, timeout: row.options.timeout },
  started_at: row.started_at.toISOString(),
  completed_at: row.completed_at?.toISOString() ?? null,
  results: row.results ? presentResults(row.results) : null,
  error: row.error,
});
