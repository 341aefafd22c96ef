// Stocktake benchmark (issue 31): 50,000 items seeded as the inventory benchmark seeds them, a
// stocktake of every item started through the API, every item counted through the count endpoint
// by 10 counters at once (10 signed-in users, autocannon with 10 connections: the scans per second),
// the stocktake read, its CSV report, and the posting of the whole count (time, server peak RSS).
import os from 'node:os';
import { BENCH_ADMIN, report, runLoad, sampleRss, startBenchServer } from './lib';
import { cpuMs, processTree, seedItems } from './inventory';

const COUNTERS = 10;
const COUNTER_PASSWORD = 'a stocktake counter passphrase';

type Timed<T> = { value: T; seconds: number; peakRssMb: number };

async function timed<T>(pid: number, work: () => Promise<T>): Promise<Timed<T>> {
  const rss = sampleRss(pid);
  const t0 = performance.now();
  const value = await work();
  return { value, seconds: (performance.now() - t0) / 1000, peakRssMb: rss.stop() };
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const t0 = performance.now();
    const ids = await seedItems(server);
    console.log(
      `seeded ${ids.length} items and their opening movements in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const admin = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
    const json = { cookie: admin, 'content-type': 'application/json' };
    const counters: string[] = [];
    for (let i = 1; i <= COUNTERS; i++) {
      const email = `counter-${i}@example.ac.uk`;
      const created = await fetch(`${server.baseUrl}/api/users`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          email,
          firstName: 'Counter',
          lastName: String(i),
          role: 'user',
          password: COUNTER_PASSWORD,
        }),
      });
      if (created.status !== 201) throw new Error(`creating ${email}: ${created.status} ${await created.text()}`);
      counters.push(await server.login(email, COUNTER_PASSWORD));
    }
    const items: { sku: string; current_stock: string }[] = await server
      .db('items')
      .orderBy('id')
      .select('sku', 'current_stock');
    console.log(
      `server RSS before: ${sampleRss(server.pid).stop()} MB; machine load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );

    const created = await timed(server.pid, async () => {
      const res = await fetch(`${server.baseUrl}/api/stocktakes`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ name: 'Year-end count', scope: { all: true } }),
      });
      const body = (await res.json()) as { id: number; reference: string; lines: unknown[] };
      if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(body)}`);
      return body;
    });
    const stocktake = created.value;
    report(`POST /api/stocktakes (scope all: ${stocktake.lines.length} lines, answered with every line)`, {
      seconds: created.seconds.toFixed(2),
      'server peak RSS MB': created.peakRssMb,
    });

    // Every item counted once: each scan takes the next SKU; every 10th item is one short.
    let next = 0;
    const pids = processTree(server.pid);
    const cpuBefore = cpuMs(pids);
    const rss = sampleRss(server.pid);
    const c0 = performance.now();
    const load = await runLoad({
      url: server.baseUrl,
      connections: COUNTERS,
      amount: items.length,
      requests: [
        {
          method: 'POST',
          setupRequest: (req) => {
            const n = next++;
            const item = items[n % items.length];
            const quantity = Number(item.current_stock) - (n % 10 === 0 ? 1 : 0);
            return {
              ...req,
              path: `/api/stocktakes/${stocktake.id}/counts`,
              headers: { ...req.headers, cookie: counters[n % COUNTERS], 'content-type': 'application/json' },
              body: JSON.stringify({ code: item.sku, quantity }),
            };
          },
        },
      ],
    });
    const countSeconds = (performance.now() - c0) / 1000;
    const cpuAfter = cpuMs(pids);
    const cpuPerScan = (cpuAfter.node - cpuBefore.node + cpuAfter.pg - cpuBefore.pg) / load.total;
    report(`POST /api/stocktakes/{id}/counts (${items.length} scans by ${COUNTERS} counters at once)`, {
      'scans/s': Math.round(load.total / countSeconds),
      'p50 ms': load.p50,
      'p99 ms': load.p99,
      'errors / non-2xx': `${load.errors} / ${load.non2xx}`,
      seconds: countSeconds.toFixed(1),
      'server peak RSS MB': rss.stop(),
      'server CPU ms/scan': `${cpuPerScan.toFixed(2)} (node ${((cpuAfter.node - cpuBefore.node) / load.total).toFixed(2)} + pg ${((cpuAfter.pg - cpuBefore.pg) / load.total).toFixed(2)})`,
      'scans/s on 2 free cores': Math.round(2000 / cpuPerScan),
    });

    const read = await timed(server.pid, async () => {
      const res = await fetch(`${server.baseUrl}/api/stocktakes/${stocktake.id}`, { headers: { cookie: admin } });
      return (await res.json()) as { totals: Record<string, unknown> };
    });
    report(`GET /api/stocktakes/{id} (${items.length} lines)`, {
      seconds: read.seconds.toFixed(2),
      'server peak RSS MB': read.peakRssMb,
      totals: JSON.stringify(read.value.totals),
    });
    const csv = await timed(server.pid, async () => {
      const res = await fetch(`${server.baseUrl}/api/stocktakes/${stocktake.id}/report?format=csv`, {
        headers: { cookie: admin },
      });
      return (await res.arrayBuffer()).byteLength;
    });
    report('GET /api/stocktakes/{id}/report?format=csv', {
      'size MB': (csv.value / 1024 / 1024).toFixed(1),
      seconds: csv.seconds.toFixed(2),
      'server peak RSS MB': csv.peakRssMb,
    });

    // the manager's pages: the review (one page of lines sorted in SQL) and the post confirmation (totals only)
    for (const [label, path] of [
      ['GET /stocktakes/{id} (the review page)', `/stocktakes/${stocktake.id}`],
      ['GET /stocktakes/{id}?show=variance', `/stocktakes/${stocktake.id}?show=variance`],
      ['GET /stocktakes/{id}/post (the post confirmation page)', `/stocktakes/${stocktake.id}/post`],
    ]) {
      const page = await timed(server.pid, async () => {
        const res = await fetch(`${server.baseUrl}${path}`, { headers: { cookie: admin } });
        if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
        return (await res.arrayBuffer()).byteLength;
      });
      report(label, { seconds: page.seconds.toFixed(2), 'size KB': Math.round(page.value / 1024) });
    }

    const posted = await timed(server.pid, async () => {
      const res = await fetch(`${server.baseUrl}/api/stocktakes/${stocktake.id}/post`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ uncounted: 'ignore' }),
      });
      const body = (await res.json()) as Record<string, unknown>;
      if (res.status !== 200) throw new Error(`post: ${res.status} ${JSON.stringify(body)}`);
      return body;
    });
    const [{ mismatched }] = (
      await server.db.raw(`SELECT count(*)::int AS mismatched FROM items i
        WHERE i.current_stock <> coalesce((SELECT m.new_stock FROM stock_movements m WHERE m.item_id = i.id ORDER BY m.id DESC LIMIT 1), 0)`)
    ).rows as { mismatched: number }[];
    report(`POST /api/stocktakes/{id}/post (${items.length} counted lines)`, {
      seconds: posted.seconds.toFixed(2),
      'server peak RSS MB': posted.peakRssMb,
      answer: JSON.stringify(posted.value),
      'items out of line with the ledger': mismatched,
    });
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
