// Inventory benchmark: 50,000 items seeded with one SQL statement (each with its opening 'in'
// movement), then autocannon (50 connections, signed in) on the item list, the list with a
// search (a term the trigram index serves, and a two-character one it cannot), the item read and
// the stock endpoint; a bulk import of 10,000 items; and exports of
// all 50,000 items as CSV and XLSX while sampling the server's peak RSS.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { BENCH_ADMIN, checkTarget, report, runLoad, sampleRss, startBenchServer, type BenchServer, WORDS } from './lib';

const ITEMS = 50_000;
const IMPORT_ITEMS = 10_000;
const CONNECTIONS = 50;
const DURATION = 10;
const SEARCH = 'flask';
/** too short for a trigram: the same 2,500 items as SEARCH, found without the index */
const SHORT_SEARCH = 'fl';

export async function seedItems(server: BenchServer): Promise<number[]> {
  const { db } = server;
  const admin = await db('users').where({ email: BENCH_ADMIN.email }).first('id');
  await db.raw(`INSERT INTO categories (name, description, icon, color)
                SELECT 'Bench category ' || g, 'Benchmark category', 'fa-box', 'blue' FROM generate_series(1, 10) g`);
  await db.raw(
    `INSERT INTO items (name, sku, description, category_id, price, current_stock, minimum_stock, created_by)
     SELECT (?::text[])[1 + g % 20] || ' ' || g, 'BENCH-' || lpad(g::text, 6, '0'), 'Benchmark item number ' || g || ', lot ' || (g % 997),
            (SELECT min(id) FROM categories) + g % 10, round((1 + (g % 500) * 0.37)::numeric, 2), 100 + g % 50, g % 20, ?
       FROM generate_series(1, ?) g`,
    [WORDS, admin.id, ITEMS],
  );
  // the opening stock of every item in the ledger, as the API would have recorded it
  await db.raw(
    `INSERT INTO stock_movements (item_id, item_name, item_sku, type, quantity, previous_stock, new_stock, reason, performed_by)
     SELECT id, name, sku, 'in', current_stock, 0, current_stock, 'Initial stock', created_by FROM items`,
  );
  await db.raw('VACUUM ANALYZE items');
  await db.raw('VACUUM ANALYZE stock_movements');
  // write the seeded pages out now rather than in a checkpoint during the first measurement
  await db.raw('CHECKPOINT').catch(() => undefined);
  return db('items').orderBy('id').pluck('id');
}

const FRESH_SEARCHES = 30;

/**
 * A search's cost when the server cannot use the matches it keeps (items.search-cache.ts): each
 * request follows a rename of an item, so the matches are collected again, one request at a time.
 */
async function freshSearchLatency(
  server: BenchServer,
  headers: Record<string, string>,
  term: string,
): Promise<Record<string, number>> {
  const latencies: number[] = [];
  for (let i = 0; i < FRESH_SEARCHES; i++) {
    await server.db.raw(`UPDATE items SET name = name WHERE id = (SELECT min(id) FROM items)`);
    const t0 = performance.now();
    const res = await fetch(`${server.baseUrl}/api/items?page=1&limit=20&search=${term}`, { headers });
    await res.arrayBuffer();
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(1));
  return { 'p50 ms': at(0.5), 'max ms': at(1) };
}

/** The server process and its descendants (the embedded PostgreSQL and its backends). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const all: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    all.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return all;
}

/** CPU ms used so far by the node server (first pid) and by the rest of the tree (PostgreSQL). */
export function cpuMs(pids: number[]): { node: number; pg: number } {
  const ticks = 100; // USER_HZ
  let node = 0;
  let pg = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
      if (pid === pids[0]) node += ms;
      else pg += ms;
    } catch {
      // exited meanwhile
    }
  }
  return { node, pg };
}

/**
 * A short untimed run first (JIT and pools warm), then the measured run. Besides req/s it
 * reports the server's CPU per request (node + PostgreSQL), which does not depend on what
 * else the machine is doing, and the req/s two dedicated cores would allow at that cost.
 */
async function measure(serverPid: number, opts: Parameters<typeof runLoad>[0]) {
  await runLoad({ ...opts, duration: 3 });
  const pids = processTree(serverPid);
  const before = cpuMs(pids);
  const result = await runLoad(opts);
  const after = cpuMs(pids);
  const node = (after.node - before.node) / result.total;
  const pg = (after.pg - before.pg) / result.total;
  return {
    'req/s': result.requestsPerSecond,
    'p50 ms': result.p50,
    'p99 ms': result.p99,
    'errors / non-2xx': `${result.errors} / ${result.non2xx}`,
    'server CPU ms/req': `${(node + pg).toFixed(2)} (node ${node.toFixed(2)} + pg ${pg.toFixed(2)})`,
    'req/s on 2 free cores': Math.round(2000 / (node + pg)),
  };
}

async function exportAll(server: BenchServer, cookie: string, format: 'csv' | 'xlsx') {
  const before = sampleRss(server.pid).stop();
  const rss = sampleRss(server.pid);
  const t0 = performance.now();
  const res = await fetch(`${server.baseUrl}/api/items/bulk/export`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: JSON.stringify({ all: true, format }),
  });
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  const seconds = (performance.now() - t0) / 1000;
  const peak = rss.stop();
  report(`POST /api/items/bulk/export (${format}, all ${ITEMS} items)`, {
    status: res.status,
    'size MB': (bytes / 1024 / 1024).toFixed(1),
    seconds: seconds.toFixed(2),
    'server RSS before MB': before,
    'server peak RSS MB': peak,
  });
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const t0 = performance.now();
    const ids = await seedItems(server);
    console.log(
      `seeded ${ids.length} items and their opening movements in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
    const headers = { cookie };
    const randomId = () => ids[Math.floor(Math.random() * ids.length)];
    const idle = sampleRss(server.pid);
    console.log(
      `server RSS before load: ${idle.stop()} MB; machine load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );

    // exports first, while the server's heap has not yet grown under the load runs
    await exportAll(server, cookie, 'csv');
    await exportAll(server, cookie, 'xlsx');

    report(
      `GET /api/items?page=1&limit=20 (${CONNECTIONS} connections, ${DURATION} s)`,
      await measure(server.pid, {
        url: `${server.baseUrl}/api/items?page=1&limit=20`,
        headers,
        connections: CONNECTIONS,
        duration: DURATION,
      }),
    );
    for (const term of [SEARCH, SHORT_SEARCH]) {
      const matches = (await (
        await fetch(`${server.baseUrl}/api/items?search=${term}&limit=1`, { headers })
      ).json()) as { total: number };
      const figure = `GET /api/items?page=1&limit=20&search=${term} (${matches.total} matches)`;
      const searched = await measure(server.pid, {
        url: `${server.baseUrl}/api/items?page=1&limit=20&search=${term}`,
        headers,
        connections: CONNECTIONS,
        duration: DURATION,
      });
      report(figure, searched);
      if (term === SEARCH) {
        checkTarget(figure, searched['req/s'], 'req/s', { atLeast: 900 });
        checkTarget(`${figure} p99`, searched['p99 ms'], 'ms', { atMost: 120 });
      }
      report(
        `${figure}, first asked after a change to the catalogue (${FRESH_SEARCHES} in turn)`,
        await freshSearchLatency(server, headers, term),
      );
    }
    report(
      'GET /api/items/{id} (random ids)',
      await measure(server.pid, {
        url: server.baseUrl,
        headers,
        connections: CONNECTIONS,
        duration: DURATION,
        requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/items/${randomId()}` }) }],
      }),
    );
    report(
      'POST /api/items/{id}/stock (type in, random ids)',
      await measure(server.pid, {
        url: server.baseUrl,
        headers: { ...headers, 'content-type': 'application/json' },
        connections: CONNECTIONS,
        duration: DURATION,
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => ({
              ...req,
              path: `/api/items/${randomId()}/stock`,
              body: JSON.stringify({ type: 'in', quantity: 1, reason: 'bench' }),
            }),
          },
        ],
      }),
    );

    const importBody = JSON.stringify({
      items: Array.from({ length: IMPORT_ITEMS }, (_, i) => ({
        name: `Imported item ${i + 1}`,
        sku: `IMPORT-${String(i + 1).padStart(6, '0')}`,
        description: 'Bulk import benchmark',
        categoryName: `bench category ${1 + (i % 10)}`,
        price: (2 + (i % 300) * 0.11).toFixed(2),
        currentStock: i % 40,
        minimumStock: i % 5,
      })),
    });
    const rss = sampleRss(server.pid);
    const i0 = performance.now();
    const imported = await fetch(`${server.baseUrl}/api/items/bulk-import`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: importBody,
    });
    const result = (await imported.json()) as { successful: number; failed: number };
    report(
      `POST /api/items/bulk-import (${IMPORT_ITEMS} items, ${(importBody.length / 1024 / 1024).toFixed(1)} MB body)`,
      {
        status: imported.status,
        successful: result.successful,
        failed: result.failed,
        seconds: ((performance.now() - i0) / 1000).toFixed(2),
        'server peak RSS MB': rss.stop(),
      },
    );
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
