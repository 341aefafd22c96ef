// MCP benchmark: GET /api/mcp/inventory and the MCP server's tools/call search_items (POST /mcp,
// stateless: a new server and transport per request) from 20 connections cycling over 500 MCP
// keys, so no key reaches the spec's 100 data requests a minute, beside the JSON API's
// GET /api/items of the same rows with a bearer token (how fast this machine is today). For each,
// the server process's CPU per request (from /proc), and the per-key limiter on its own: the
// CPU one PostgreSQL-counted consume costs this process.
import { readFileSync } from 'node:fs';
import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../../src/modules/audit/audit.actor';
import { mcpKeysService } from '../../src/modules/mcp-keys/mcp-keys.service';
import { mcpLimiters } from '../../src/auth/mcp-limits';
import { BENCH_ADMIN, report, runLoad, startBenchServer, type BenchServer } from './lib';

const ITEMS = 2_000;
const CONNECTIONS = 20;
/** enough keys that none spends its 100 data requests a minute below 5,000 req/s */
const KEYS = 500;
const SECONDS = 10;
const LIMITER_CALLS = 2_000;
const CLOCK_TICKS_PER_SECOND = 100;
const SEARCH_ARGUMENTS = { search: 'Bench item 1', limit: 20 };

async function seed(db: Knex) {
  const categories = await db('categories')
    .insert(['Glassware', 'Chemicals', 'Electronics', 'Stationery', 'Safety'].map((name) => ({ name, color: 'blue' })))
    .returning('id');
  const admin = await db('users').where({ email: BENCH_ADMIN.email }).first('id');
  const items = Array.from({ length: ITEMS }, (_, i) => ({
    name: `Bench item ${i + 1}`,
    sku: `MCP-${String(i + 1).padStart(5, '0')}`,
    description: `A stocked item for the MCP benchmark (${i + 1})`,
    category_id: categories[i % categories.length].id,
    price: (1 + (i % 50) * 0.37).toFixed(2),
    current_stock: 1 + (i % 40),
    minimum_stock: 5,
    created_by: admin.id,
  }));
  for (let i = 0; i < items.length; i += 500) await db('items').insert(items.slice(i, i + 500));
  return admin.id as string;
}

/** Fresh keys for one scenario, so each scenario has the whole data allowance of its keys. */
async function keysFor(db: Knex, adminId: string, scenario: string): Promise<string[]> {
  const keys = mcpKeysService(db);
  const created = [];
  for (let i = 0; i < KEYS; i += 1)
    created.push(
      (await keys.create({ ...SYSTEM_ACTOR, userId: adminId }, { name: `${scenario} ${i + 1}`, scopes: ['read'] })).key,
    );
  return created;
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** Runs the load and reports it with the server's CPU milliseconds per request. */
async function measured(server: BenchServer, title: string, load: () => ReturnType<typeof runLoad>) {
  const cpuBefore = cpuSecondsOf(server.pid);
  const res = await load();
  const cpuMs = ((cpuSecondsOf(server.pid) - cpuBefore) * 1000) / Math.max(1, res.total);
  report(title, {
    'req/s': res.requestsPerSecond,
    'p50 ms': res.p50,
    'p99 ms': res.p99,
    'server CPU ms/req': cpuMs.toFixed(2),
    'errors / non-2xx': `${res.errors} / ${res.non2xx}`,
  });
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const adminId = await seed(server.db);
    const cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
    const tokenRes = await fetch(`${server.baseUrl}/api/auth/tokens`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', origin: server.baseUrl },
      body: JSON.stringify({ name: 'bench' }),
    });
    const { token } = (await tokenRes.json()) as { token: string };

    await measured(server, `baseline: GET /api/items?limit=50 (bearer token, ${CONNECTIONS} connections)`, () =>
      runLoad({
        url: `${server.baseUrl}/api/items?limit=50`,
        headers: { authorization: `Bearer ${token}` },
        connections: CONNECTIONS,
        duration: SECONDS,
      }),
    );

    const inventoryRequests = (await keysFor(server.db, adminId, 'inventory')).map((key) => ({
      method: 'GET' as const,
      path: '/api/mcp/inventory?limit=50',
      headers: { authorization: `Bearer ${key}` },
    }));
    await measured(server, `GET /api/mcp/inventory?limit=50 (${KEYS} keys, ${CONNECTIONS} connections)`, () =>
      runLoad({ url: server.baseUrl, connections: CONNECTIONS, duration: SECONDS, requests: inventoryRequests }),
    );

    const searchRequests = (await keysFor(server.db, adminId, 'search')).map((key) => ({
      method: 'POST' as const,
      path: '/mcp',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'search_items', arguments: SEARCH_ARGUMENTS },
      }),
    }));
    const probe = await fetch(`${server.baseUrl}/mcp`, searchRequests[0]);
    const answer = (await probe.json()) as {
      result?: { isError?: boolean; structuredContent?: { items?: unknown[] } };
    };
    if (!probe.ok || answer.result?.isError || !answer.result?.structuredContent?.items?.length) {
      throw new Error(
        `search_items did not answer with items: ${probe.status} ${JSON.stringify(answer).slice(0, 200)}`,
      );
    }
    await measured(
      server,
      `POST /mcp tools/call search_items (stateless, ${KEYS} keys, ${CONNECTIONS} connections)`,
      () => runLoad({ url: server.baseUrl, connections: CONNECTIONS, duration: SECONDS, requests: searchRequests }),
    );

    await limiterAlone(server.db, adminId);
  } finally {
    await server.stop();
  }
}

/** The per-key limiter on its own, in this process: CPU per consume, sequentially and 20 at a time. */
async function limiterAlone(db: Knex, adminId: string) {
  const limit = mcpLimiters(db).data;
  const keys = await Promise.all(
    Array.from({ length: CONNECTIONS }, (_, i) =>
      mcpKeysService(db).create({ ...SYSTEM_ACTOR, userId: adminId }, { name: `limiter ${i}`, scopes: ['read'] }),
    ),
  );
  const holders = keys.map(({ row }) => ({ ...row, creator: {} }) as never);
  const consume = (holder: never) =>
    new Promise<void>((resolve, reject) => {
      const req = { mcpKey: holder } as never;
      void limit(req, {} as never, (err?: unknown) =>
        err && (err as { status?: number }).status !== 429 ? reject(err as Error) : resolve(),
      );
    });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < LIMITER_CALLS / 2; i += 1) await consume(holders[i % holders.length]);
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, c) => {
      for (let i = 0; i < LIMITER_CALLS / 2 / CONNECTIONS; i += 1) await consume(holders[c]);
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  report(`per-key limiter alone (${LIMITER_CALLS} consumes of the PostgreSQL counter)`, {
    'CPU µs/consume (this process)': Math.round((cpu.user + cpu.system) / LIMITER_CALLS),
    'wall ms/consume': ((performance.now() - started) / LIMITER_CALLS).toFixed(2),
  });
}
