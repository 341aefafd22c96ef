// Pages benchmark: signed-in GET /items (20 rows of 2,000 items) and GET /counter, with the JSON
// API's GET /api/items of the same 20 rows beside them (how fast this machine is today), then the
// counter's add-by-SKU (an htmx POST /counter/add) from 20 concurrent counters, each its own
// session and basket, cycling over 20 SKUs so every basket stays a realistic size: saturated
// (each counter scans again the moment the last scan answers) and at a brisk human pace (one
// scan every 500 ms per counter, the scanner's beep-to-beep rhythm of someone working fast).
import { BENCH_ADMIN, report, runLoad, startBenchServer, type BenchServer } from './lib';

const ITEMS = 2_000;
const COUNTERS = 20;
const SKUS_PER_BASKET = 20;
const SECONDS = 10;
const PACED_INTERVAL_MS = 500;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
const skuOf = (counterIndex: number, i: number) =>
  `PAGE-${String(counterIndex * SKUS_PER_BASKET + (i % SKUS_PER_BASKET) + 1).padStart(5, '0')}`;

async function seed(server: BenchServer) {
  const { db } = server;
  const categories = await db('categories')
    .insert(['Glassware', 'Chemicals', 'Electronics', 'Stationery', 'Safety'].map((name) => ({ name, color: 'blue' })))
    .returning('id');
  const admin = await db('users').where({ email: BENCH_ADMIN.email }).first('id');
  const items = Array.from({ length: ITEMS }, (_, i) => ({
    name: `Bench item ${i + 1}`,
    sku: `PAGE-${String(i + 1).padStart(5, '0')}`,
    description: `A stocked item for the pages benchmark (${i + 1})`,
    category_id: categories[i % categories.length].id,
    price: (1 + (i % 50) * 0.37).toFixed(2),
    current_stock: 1_000_000,
    created_by: admin.id,
  }));
  for (let i = 0; i < items.length; i += 500) await db('items').insert(items.slice(i, i + 500));
}

/** A signed-in session that has shown the counter: its cookie and the CSRF token its pages carry. */
async function counterSession(server: BenchServer): Promise<{ cookie: string; token: string }> {
  const cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
  const res = await fetch(`${server.baseUrl}/counter`, { headers: { cookie } });
  const html = await res.text();
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!res.ok || !token) throw new Error(`GET /counter answered ${res.status} without a CSRF token`);
  // generating the token may have set the session anew
  const refreshed = res.headers.getSetCookie().map((c) => c.split(';')[0]);
  return { cookie: refreshed.length > 0 ? refreshed.join('; ') : cookie, token };
}

const figures = (res: Awaited<ReturnType<typeof runLoad>>) => ({
  'req/s': res.requestsPerSecond,
  'p50 ms': res.p50,
  'p99 ms': res.p99,
  'errors / non-2xx': `${res.errors} / ${res.non2xx}`,
});

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    await seed(server);
    const { cookie } = await counterSession(server);

    const api = await runLoad({
      url: `${server.baseUrl}/api/items?limit=20`,
      headers: { cookie },
      connections: 20,
      duration: SECONDS,
    });
    report('baseline: GET /api/items?limit=20 (the same rows as JSON, 20 connections)', figures(api));

    const list = await runLoad({
      url: `${server.baseUrl}/items`,
      headers: { cookie },
      connections: 20,
      duration: SECONDS,
    });
    report(`GET /items (20 rows of ${ITEMS.toLocaleString('en-GB')}, whole page, 20 connections)`, figures(list));

    const search = await runLoad({
      url: `${server.baseUrl}/items?search=item+1`,
      headers: { cookie, 'hx-request': 'true' },
      connections: 20,
      duration: SECONDS,
    });
    report('GET /items?search= (htmx rows partial, as-you-type, 20 connections)', figures(search));

    const counter = await runLoad({
      url: `${server.baseUrl}/counter`,
      headers: { cookie },
      connections: 20,
      duration: SECONDS,
    });
    report('GET /counter (whole page, 20 connections)', figures(counter));

    // 20 counters, each its own session: one connection each, scanning SKUs one after another
    const sessions = await Promise.all(Array.from({ length: COUNTERS }, () => counterSession(server)));
    const scans = await Promise.all(
      sessions.map((session, counterIndex) =>
        runLoad({
          url: `${server.baseUrl}/counter/add`,
          method: 'POST',
          connections: 1,
          duration: SECONDS,
          requests: Array.from({ length: SKUS_PER_BASKET }, (_, i) => ({
            method: 'POST' as const,
            path: '/counter/add',
            headers: {
              cookie: session.cookie,
              'x-csrf-token': session.token,
              'hx-request': 'true',
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: `sku=${skuOf(counterIndex, i)}`,
          })),
        }),
      ),
    );
    const total = scans.reduce((sum, s) => sum + s.total, 0);
    report(`POST /counter/add (add by SKU, htmx, ${COUNTERS} counters scanning flat out)`, {
      'scans/s': Math.round(total / SECONDS),
      'p50 ms (worst counter)': Math.max(...scans.map((s) => s.p50)),
      'p99 ms (worst counter)': Math.max(...scans.map((s) => s.p99)),
      'errors / non-2xx': `${scans.reduce((n, s) => n + s.errors, 0)} / ${scans.reduce((n, s) => n + s.non2xx, 0)}`,
    });

    // the same 20 counters at a human pace: each scans every 500 ms, the latency of every scan is kept
    const latencies: number[] = [];
    let failed = 0;
    const deadline = Date.now() + SECONDS * 1000;
    await Promise.all(
      sessions.map(async (session, counterIndex) => {
        await new Promise((r) => setTimeout(r, (counterIndex * PACED_INTERVAL_MS) / COUNTERS));
        for (let i = 0; Date.now() < deadline; i += 1) {
          const started = performance.now();
          const res = await fetch(`${server.baseUrl}/counter/add`, {
            method: 'POST',
            headers: {
              cookie: session.cookie,
              'x-csrf-token': session.token,
              'hx-request': 'true',
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: `sku=${skuOf(counterIndex, i)}`,
          });
          await res.text();
          const took = performance.now() - started;
          if (res.ok) latencies.push(took);
          else failed += 1;
          await new Promise((r) => setTimeout(r, Math.max(0, PACED_INTERVAL_MS - took)));
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    report(`POST /counter/add (${COUNTERS} counters, one scan every ${PACED_INTERVAL_MS} ms each)`, {
      'scans/s': Math.round(latencies.length / SECONDS),
      'p50 ms': Math.round(percentile(latencies, 50)),
      'p99 ms': Math.round(percentile(latencies, 99)),
      'max ms': Math.round(latencies.at(-1) ?? 0),
      'failed scans': failed,
    });

    const lines = await server.db('quote_items').count<{ count: string }[]>('* as count');
    const quantity = await server.db('quote_items').sum<{ sum: string }[]>('quantity as sum');
    console.log(
      `  baskets: ${COUNTERS} drafts hold ${lines[0].count} lines, ${quantity[0].sum} units scanned (= successful scans)`,
    );
  } finally {
    await server.stop();
  }
}
