import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/knex';
import { HttpError } from '../src/http/errors';
import { APP_VERSION } from '../src/lib/version';
import { createLogger } from '../src/logger';
import { mcpKeysService } from '../src/modules/mcp-keys/mcp-keys.service';
import { presentMcpStatus } from '../src/modules/mcp-runs/mcp-runs.present';
import { StartTestRun } from '../src/modules/mcp-runs/mcp-runs.schemas';
import { mcpRunsService } from '../src/modules/mcp-runs/mcp-runs.service';
import { mcpStatusService } from '../src/modules/mcp-runs/mcp-status.service';
import { PROJECT_ROOT } from '../src/modules/mcp-runs/mcp-runs.vitest';
import { NO_FITTING_CLIENT } from './backup-helpers';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildMcpKey, withKey } from './helpers/mcp-factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const mcpError = (code: string) => ({
  error: { code, message: expect.any(String), timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
});
const PERCENTAGE = /^\d+(\.\d+)?%$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** GET /api/mcp/test/:id until the run is no longer running, polling quickly at first, then once a second. */
async function finishedRun(key: string, executionId: string, withinMs = 60_000) {
  const deadline = Date.now() + withinMs;
  for (let wait = 100; ; wait = Math.min(1000, wait * 1.5)) {
    const res = await t.request.get(`/api/mcp/test/${executionId}`).set(withKey(key)).expect(200);
    if (res.body.status !== 'running') return res.body;
    if (Date.now() > deadline) throw new Error(`run ${executionId} still running after ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** A run in progress elsewhere (another instance), written straight to the table. */
async function insertRunningRun(overrides: { startedSecondsAgo?: number; timeoutMs?: number } = {}): Promise<string> {
  const [row] = await t
    .db('mcp_test_runs')
    .insert({
      test_type: 'integration',
      options: JSON.stringify({ coverage: false, reporter: 'default', timeout: overrides.timeoutMs ?? 600_000 }),
      started_at: t.db.raw(`now() - make_interval(secs => ?)`, [overrides.startedSecondsAgo ?? 0]),
    })
    .returning('execution_id');
  return row.execution_id;
}

const TABLES_THE_SALES_RUN_WRITES = [
  'categories',
  'items',
  'item_counts',
  'stock_movements',
  'charge_codes',
  'charge_code_authorised_users',
  'quotes',
  'quote_items',
  'sales',
  'sale_items',
  'audit_log',
];
async function rowCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES_THE_SALES_RUN_WRITES)
    counts[table] = Number((await t.db(table).count<{ count: number }[]>('* as count'))[0].count);
  return counts;
}

describe('GET /api/mcp/status', () => {
  it('200 with measured figures; tests are those of the last finished run in the database', async () => {
    const { key } = await buildMcpKey(t.db);
    const [run] = await t
      .db('mcp_test_runs')
      .insert({
        test_type: 'system',
        status: 'completed',
        started_at: t.db.raw(`now() - interval '3 seconds'`),
        completed_at: t.db.fn.now(),
        results: JSON.stringify({ total_tests: 6, passed: 5, failed: 1, duration: 3, coverage: null }),
      })
      .returning('*');

    const res = await t.request.get('/api/mcp/status').set(withKey(key)).expect(200);
    expect(res.body).toEqual({
      system: { status: 'healthy', version: APP_VERSION, uptime: expect.any(Number), environment: 'test' },
      database: { connected: true, latency: expect.any(Number) },
      tests: {
        total: 6,
        passed: 5,
        failed: 1,
        last_run: run.completed_at.toISOString(),
        last_execution_id: run.execution_id,
        last_test_type: 'system',
        last_status: 'completed',
      },
      resources: {
        memory_usage: expect.stringMatching(PERCENTAGE),
        cpu_usage: expect.stringMatching(PERCENTAGE),
        disk_usage: expect.stringMatching(PERCENTAGE),
      },
    });
    expect(Number.isInteger(res.body.system.uptime) && res.body.system.uptime >= 0).toBe(true);
    expect(Math.floor(process.uptime()) - res.body.system.uptime).toBeLessThanOrEqual(1);
    expect(Number.isInteger(res.body.database.latency) && res.body.database.latency >= 0).toBe(true);
    // RSS over the machine's memory, as measured here
    const memory = Number.parseFloat(res.body.resources.memory_usage);
    expect(memory).toBeGreaterThan(0);
    expect(Math.abs(memory - (process.memoryUsage.rss() / os.totalmem()) * 100)).toBeLessThan(5);
    for (const figure of Object.values(res.body.resources))
      expect(Number.parseFloat(figure as string)).toBeLessThanOrEqual(100);
  });

  it('200 degraded, not an error, when the database does not answer', async () => {
    // nothing listens on port 1: the connection is refused at once (knex's own complaint is silenced)
    const quiet = { warn: () => undefined, error: () => undefined, debug: () => undefined };
    const unreachable = createDb('postgres://nobody:nothing@127.0.0.1:1/none', 1, quiet);
    try {
      const body = presentMcpStatus(await mcpStatusService({ db: unreachable, config: t.config }).status());
      expect(body.system.status).toBe('degraded');
      expect(body.database).toEqual({ connected: false, latency: null });
      expect(body.tests).toMatchObject({ total: 0, passed: 0, failed: 0, last_run: null });
      expect(body.resources.memory_usage).toMatch(PERCENTAGE);
    } finally {
      await unreachable.destroy();
    }
  });

  it('401 MCP_AUTH_REQUIRED without a key, MCP_AUTH_INVALID for a bearer token: a session or a token is refused', async () => {
    const admin = await buildUser(t.db, { role: 'admin' });
    const agent = await t.loginAs(admin);
    expect((await agent.get('/api/mcp/status').expect(401)).body).toEqual(mcpError('MCP_AUTH_REQUIRED'));
    const token = (await agent.post('/api/auth/tokens').send({ name: 'script', expiresInDays: 1 }).expect(201)).body
      .token;
    const byToken = await t.request.get('/api/mcp/status').set('Authorization', `Bearer ${token}`).expect(401);
    expect(byToken.body).toEqual(mcpError('MCP_AUTH_INVALID'));
    expect((await t.request.get('/api/mcp/status').expect(401)).body).toEqual(mcpError('MCP_AUTH_REQUIRED'));
  });

  it('429 MCP_RATE_LIMITED on the 61st call in a minute, with Retry-After; another key still passes', async () => {
    const busy = await buildMcpKey(t.db);
    const other = await buildMcpKey(t.db);
    for (let i = 0; i < 60; i += 1) await t.request.get('/api/mcp/status').set(withKey(busy.key)).expect(200);
    const refused = await t.request.get('/api/mcp/status').set(withKey(busy.key)).expect(429);
    expect(refused.body).toEqual(mcpError('MCP_RATE_LIMITED'));
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    // the run lookups spend the same allowance
    await t.request.get(`/api/mcp/test/${randomUUID()}`).set(withKey(busy.key)).expect(429);
    await t.request.get('/api/mcp/status').set(withKey(other.key)).expect(200);
  });
});

describe('POST /api/mcp/test', () => {
  it('202 starts a system run that completes with each check of the running service', async () => {
    const { id: keyId, key } = await buildMcpKey(t.db);
    const res = await t.request.post('/api/mcp/test').set(withKey(key)).send({ test_type: 'system' }).expect(202);
    expect(res.body).toEqual({
      execution_id: expect.stringMatching(UUID),
      status: 'running',
      started_at: expect.any(String),
      estimated_duration: expect.any(Number),
    });
    expect(Number.isInteger(res.body.estimated_duration)).toBe(true);
    const row = await t.db('mcp_test_runs').where({ execution_id: res.body.execution_id }).first();
    expect(row).toMatchObject({
      test_type: 'system',
      key_id: keyId,
      options: { coverage: false, reporter: 'default', timeout: 600_000 },
    });
    expect(row.started_at.toISOString()).toBe(res.body.started_at);

    const run = await finishedRun(key, res.body.execution_id);
    const names = [
      'database_reachable',
      'migrations_current',
      'stock_ledger_reconciles',
      'backup_directory_writable',
      'backup_tools_usable',
      'disk_space',
    ];
    expect(run.results.checks.map((c: { name: string }) => c.name)).toEqual(names);
    // on a server newer than Debian's client tools (.ci/pg17) the tools' check fails, naming both versions
    expect(run.results.checks.filter((c: { passed: boolean }) => !c.passed)).toEqual(
      NO_FITTING_CLIENT
        ? [
            {
              name: 'backup_tools_usable',
              passed: false,
              message: expect.stringMatching(/^pg_dump \S+ \(on PATH\) is older than the PostgreSQL server /),
            },
          ]
        : [],
    );
    expect(run).toEqual({
      execution_id: res.body.execution_id,
      test_type: 'system',
      status: 'completed',
      options: { coverage: false, reporter: 'default', timeout: 600_000 },
      started_at: res.body.started_at,
      completed_at: expect.any(String),
      results: {
        total_tests: 6,
        passed: NO_FITTING_CLIENT ? 5 : 6,
        failed: NO_FITTING_CLIENT ? 1 : 0,
        duration: expect.any(Number),
        coverage: null,
        checks: expect.any(Array),
      },
      error: null,
    });
    const stored = await t.db('mcp_test_runs').where({ execution_id: res.body.execution_id }).first();
    expect(stored).toMatchObject({ status: 'completed', error: null, results: run.results });
    expect(stored.completed_at.toISOString()).toBe(run.completed_at);
    // the probe file of the backup folder check is gone
    expect(await fs.readdir(path.join(t.dataDir, 'backups'))).toEqual([]);
  });

  it('202 for a sales run through the real services that completes and leaves nothing behind, with the charge-code policies on', async () => {
    const { key } = await buildMcpKey(t.db);
    const policies = ['chargeCodes.requireAuthorisedUser', 'chargeCodes.requirePin'];
    await t
      .db('settings')
      .insert(policies.map((policy) => ({ key: policy, value: JSON.stringify({ enabled: true }) })));
    const before = await rowCounts();
    const res = await t.request
      .post('/api/mcp/test')
      .set(withKey(key))
      .send({ test_type: 'sales', options: { timeout: 60_000 } })
      .expect(202);
    const run = await finishedRun(key, res.body.execution_id).finally(() =>
      t.db('settings').whereIn('key', policies).delete(),
    );
    expect(run.status).toBe('completed');
    expect(run.results.checks.filter((c: { passed: boolean }) => !c.passed)).toEqual([]);
    expect(run.results.checks.map((c: { name: string }) => c.name)).toEqual([
      'category_created',
      'item_created_with_stock',
      'charge_code_created',
      'quote_saved',
      'quote_processed',
      'stock_reduced',
      'sale_recorded',
      'rolled_back',
    ]);
    expect(run.results).toMatchObject({ total_tests: 8, passed: 8, failed: 0, coverage: null });
    expect(run.results.checks.find((c: { name: string }) => c.name === 'quote_processed').message).toMatch(
      /^sale SALE-\d{8}-\d+$/,
    );
    expect(await rowCounts()).toEqual(before);
  });

  it('202 estimates the duration as the mean of the last 5 completed runs of the type', async () => {
    const { key } = await buildMcpKey(t.db);
    await t.db('mcp_test_runs').insert(
      [40, 50].map((secs) => ({
        test_type: 'system',
        status: 'completed',
        started_at: t.db.raw(`now() - make_interval(secs => ?)`, [secs]),
        completed_at: t.db.fn.now(),
        results: JSON.stringify({ total_tests: 6, passed: 6, failed: 0, duration: secs, coverage: null }),
      })),
    );
    const lastFive = await t
      .db('mcp_test_runs')
      .where({ test_type: 'system', status: 'completed' })
      .orderBy('completed_at', 'desc')
      .limit(5)
      .select(t.db.raw('extract(epoch FROM completed_at - started_at)::float AS secs'));
    const mean = lastFive.reduce((sum: number, r: { secs: number }) => sum + r.secs, 0) / lastFive.length;
    const res = await t.request.post('/api/mcp/test').set(withKey(key)).send({ test_type: 'system' }).expect(202);
    expect(res.body.estimated_duration).toBe(Math.ceil(mean));
    expect(res.body.estimated_duration).toBeGreaterThanOrEqual(18);
    await finishedRun(key, res.body.execution_id);
  });

  it('409 MCP_TEST_RUNNING while a run is in progress on any instance; nothing is inserted', async () => {
    const { key } = await buildMcpKey(t.db);
    const running = await insertRunningRun();
    try {
      const countBefore = await t.db('mcp_test_runs').count<{ count: number }[]>('* as count');
      const res = await t.request.post('/api/mcp/test').set(withKey(key)).send({ test_type: 'sales' }).expect(409);
      expect(res.body).toEqual(mcpError('MCP_TEST_RUNNING'));
      expect(res.body.error.message).toContain(running);
      expect(await t.db('mcp_test_runs').count<{ count: number }[]>('* as count')).toEqual(countBefore);
    } finally {
      await t
        .db('mcp_test_runs')
        .where({ execution_id: running })
        .update({ status: 'failed', completed_at: t.db.fn.now() });
    }
  });

  it('202 after failing a run left running past its own timeout by a stopped instance', async () => {
    const { key } = await buildMcpKey(t.db);
    const abandoned = await insertRunningRun({ startedSecondsAgo: 120, timeoutMs: 1_000 });
    const res = await t.request.post('/api/mcp/test').set(withKey(key)).send({ test_type: 'system' }).expect(202);
    expect(await t.db('mcp_test_runs').where({ execution_id: abandoned }).first()).toMatchObject({
      status: 'failed',
      completed_at: expect.any(Date),
      error: expect.stringMatching(/^Abandoned/),
    });
    expect((await finishedRun(key, res.body.execution_id)).status).toBe('completed');
  });

  it('400 MCP_INVALID_REQUEST for an unknown test type or a refused option; nothing is inserted', async () => {
    const { key } = await buildMcpKey(t.db);
    const countBefore = await t.db('mcp_test_runs').count<{ count: number }[]>('* as count');
    const refusals: [object, RegExp][] = [
      [{ test_type: 'smoke' }, /test_type must be one of unit, integration, e2e, sales, system/],
      [{}, /test_type/],
      [{ test_type: 'unit', options: { timeout: 10 } }, /options\.timeout must be at least 1000 ms/],
      [{ test_type: 'unit', options: { timeout: 1.5e6 * 2 } }, /options\.timeout must be at most/],
      [{ test_type: 'unit', options: { reporter: 'html' } }, /options\.reporter must be one of/],
      [
        { test_type: 'system', options: { coverage: true } },
        /options\.coverage applies only to unit, integration and e2e runs/,
      ],
    ];
    for (const [body, message] of refusals) {
      const res = await t.request.post('/api/mcp/test').set(withKey(key)).send(body).expect(400);
      expect(res.body).toEqual(mcpError('MCP_INVALID_REQUEST'));
      expect(res.body.error.message).toMatch(message);
    }
    expect(await t.db('mcp_test_runs').count<{ count: number }[]>('* as count')).toEqual(countBefore);
  });

  it('429 MCP_RATE_LIMITED on the 11th start in an hour, with Retry-After', async () => {
    const { key } = await buildMcpKey(t.db);
    const running = await insertRunningRun();
    try {
      for (let i = 0; i < 10; i += 1)
        await t.request.post('/api/mcp/test').set(withKey(key)).send({ test_type: 'system' }).expect(409);
      const res = await t.request.post('/api/mcp/test').set(withKey(key)).send({ test_type: 'system' }).expect(429);
      expect(res.body).toEqual(mcpError('MCP_RATE_LIMITED'));
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(3000);
    } finally {
      await t
        .db('mcp_test_runs')
        .where({ execution_id: running })
        .update({ status: 'failed', completed_at: t.db.fn.now() });
    }
  });

  it('400 for the project suites on an instance without the test tooling, before anything is written', async () => {
    const { key } = await buildMcpKey(t.db);
    const holder = (await mcpKeysService(t.db).authenticate(key))!;
    const bareRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-no-tooling-'));
    const countBefore = await t.db('mcp_test_runs').count<{ count: number }[]>('* as count');
    try {
      const runs = mcpRunsService(
        { db: t.db, databaseUrl: t.databaseUrl, config: t.config, logger: createLogger('silent') },
        { projectRoot: bareRoot },
      );
      for (const test_type of ['unit', 'integration', 'e2e'] as const) {
        const refusal = await runs.start(StartTestRun.parse({ test_type }), holder).catch((err: unknown) => err);
        expect(refusal).toBeInstanceOf(HttpError);
        expect(refusal).toMatchObject({
          status: 400,
          message: expect.stringMatching(/test tooling is not installed.*node_modules\/\.bin\/vitest.*test\//),
        });
      }
    } finally {
      await fs.rm(bareRoot, { recursive: true, force: true });
    }
    expect(await t.db('mcp_test_runs').count<{ count: number }[]>('* as count')).toEqual(countBefore);
  });
});

describe('GET /api/mcp/test/:execution_id', () => {
  it('404 MCP_NOT_FOUND for an unknown run; 400 MCP_INVALID_REQUEST for an id that is no UUID', async () => {
    const { key } = await buildMcpKey(t.db);
    expect((await t.request.get(`/api/mcp/test/${randomUUID()}`).set(withKey(key)).expect(404)).body).toEqual(
      mcpError('MCP_NOT_FOUND'),
    );
    expect((await t.request.get('/api/mcp/test/not-a-uuid').set(withKey(key)).expect(400)).body).toEqual(
      mcpError('MCP_INVALID_REQUEST'),
    );
    expect((await t.request.get(`/api/mcp/test/${randomUUID()}`).expect(401)).body).toEqual(
      mcpError('MCP_AUTH_REQUIRED'),
    );
  });
});

describe('unit runs (the project suite in a child vitest)', () => {
  const unitSources = () =>
    readdirSync(path.join(PROJECT_ROOT, 'test/unit'))
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => readFileSync(path.join(PROJECT_ROOT, 'test/unit', f), 'utf8'));
  /** The unit project's test cases, counted in its files (test/unit), to check the run reports the real number. */
  const unitTestCases = () => unitSources().reduce((n, source) => n + (source.match(/^\s*it\(/gm) ?? []).length, 0);
  /** The names of the unit project's tests (a one-line it('...') title). */
  const unitTestNames = () =>
    unitSources().flatMap((source) => [...source.matchAll(/^\s*it\('([^']+)'/gm)].map((m) => m[1]));
  const runDir = (executionId: string) => path.join(os.tmpdir(), `stores-mcp-run-${executionId}`);
  /** Processes still running with the run's directory on their command line (its PostgreSQL cluster). */
  const processesOf = (executionId: string) =>
    execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(`stores-mcp-run-${executionId}`));

  it(
    'a unit run with coverage completes with the counts and coverage of its files; its directory is removed',
    { timeout: 120_000 },
    async () => {
      const { key } = await buildMcpKey(t.db);
      const res = await t.request
        .post('/api/mcp/test')
        .set(withKey(key))
        .send({ test_type: 'unit', options: { coverage: true, reporter: 'verbose', timeout: 110_000 } })
        .expect(202);
      const run = await finishedRun(key, res.body.execution_id, 115_000);
      expect(run.error).toBeNull();
      expect(run.status).toBe('completed');
      const cases = unitTestCases();
      expect(cases).toBeGreaterThan(5);
      expect(run.results).toMatchObject({ total_tests: cases, passed: cases, failed: 0, failures: [] });
      expect(run.results.duration).toBeGreaterThan(0);
      for (const figure of ['lines', 'functions', 'branches']) {
        expect(run.results.coverage[figure]).toBeGreaterThan(0);
        expect(run.results.coverage[figure]).toBeLessThanOrEqual(100);
      }
      // the verbose reporter names each test; the results keep the output's tail, so some of them
      const named = unitTestNames().filter((name) => run.results.output.includes(name));
      expect(named.length).toBeGreaterThan(3);
      expect(existsSync(runDir(res.body.execution_id))).toBe(false);
      expect(processesOf(res.body.execution_id)).toEqual([]);
    },
  );

  it('a run stopped at its timeout ends failed; its processes and files are gone', { timeout: 60_000 }, async () => {
    const { key } = await buildMcpKey(t.db);
    const res = await t.request
      .post('/api/mcp/test')
      .set(withKey(key))
      .send({ test_type: 'unit', options: { timeout: 1_000 } })
      .expect(202);
    const run = await finishedRun(key, res.body.execution_id, 30_000);
    expect(run).toMatchObject({
      status: 'failed',
      results: null,
      error: 'Timed out: the unit run was stopped at its timeout of 1000 ms',
      completed_at: expect.any(String),
    });
    expect(await t.db('mcp_test_runs').where({ execution_id: res.body.execution_id }).first()).toMatchObject({
      status: 'failed',
      error: run.error,
    });
    expect(existsSync(runDir(res.body.execution_id))).toBe(false);
    expect(processesOf(res.body.execution_id)).toEqual([]);
  });
});
