// Outbox benchmark (issue 32): 10,000 queued webhook events delivered to a local receiver (events
// per second, commit-to-delivery latency, the server's peak RSS), events at a steady pace (p99 from
// commit to delivery), and the sale flow's throughput with and without an active outbound webhook,
// side by side (the outbox write must cost a sale less than 10%).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { transaction } from '../../src/db/transaction';
import { publishEvents } from '../../src/modules/outbound-webhooks/outbound-webhooks.queries';
import { BENCH_ADMIN, checkTarget, report, sampleRss, startBenchServer, type BenchServer } from './lib';
import { seedCatalogue } from './sales';

const QUEUED = 10_000;
const BATCH = 500;
const PACED = 400;
const PACED_PER_SECOND = 40;
const SALE_SESSIONS = 10;
const SALE_ROUND_SECONDS = 6;
const SALE_ROUNDS = 3;

/** CPU seconds (user + system) a process has used so far: a figure the machine's other load does not change. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0;

/** A receiver on 127.0.0.1 answering 200 at once, noting when each delivery (by X-Stores-Delivery) arrived. */
async function startReceiver() {
  const arrived = new Map<string, number>();
  /** a queued event's number (its data.bench) -> when it arrived */
  const byNumber = new Map<number, number>();
  let duplicates = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const id = String(req.headers['x-stores-delivery']);
      if (arrived.has(id)) duplicates += 1;
      else arrived.set(id, now);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { bench?: number } };
      const n = body.data?.bench;
      if (typeof n === 'number' && !byNumber.has(n)) byNumber.set(n, now);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/bench`,
    arrived,
    byNumber,
    duplicates: () => duplicates,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

async function until(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/**
 * Queues ping events numbered from `first` in transactions of `batch`, as the service's changes do
 * (publishEvents: the outbox rows and the commit's notification); answers each number's commit time.
 */
async function queueEvents(server: BenchServer, first: number, count: number, batch: number, perSecond?: number) {
  const committed = new Map<number, number>();
  const started = Date.now();
  for (let done = 0; done < count; done += batch) {
    const numbers = Array.from({ length: Math.min(batch, count - done) }, (_, i) => first + done + i);
    await transaction(server.db, (trx) => publishEvents(trx, 'ping', async () => numbers.map((n) => ({ bench: n }))));
    const at = Date.now();
    for (const n of numbers) committed.set(n, at);
    if (perSecond) {
      const due = started + ((done + numbers.length) / perSecond) * 1000;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    }
  }
  return committed;
}

function latencies(committed: Map<number, number>, receiver: Receiver): number[] {
  return [...committed]
    .map(([n, at]) => (receiver.byNumber.get(n) ?? Number.NaN) - at)
    .filter((ms) => !Number.isNaN(ms))
    .sort((a, b) => a - b);
}

async function deliveries(server: BenchServer, receiver: Receiver) {
  const admin = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
  const res = await fetch(`${server.baseUrl}/api/outbound-webhooks`, {
    method: 'POST',
    headers: { cookie: admin, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, events: ['ping'], description: 'bench' }),
  });
  if (res.status !== 201) throw new Error(`endpoint refused: ${res.status} ${await res.text()}`);

  // 1. a backlog: 10,000 events committed as fast as they can be, delivered as fast as they go
  const rss = sampleRss(server.pid);
  const started = Date.now();
  const committed = await queueEvents(server, 0, QUEUED, BATCH);
  const queuedIn = Date.now() - started;
  const delivered = await until(() => receiver.arrived.size >= QUEUED, 600_000);
  const drained = Date.now() - started;
  const peak = rss.stop();
  const backlog = latencies(committed, receiver);
  report(`outbox: ${QUEUED} queued events to one receiver`, {
    'queued in (ms)': queuedIn,
    'all delivered': delivered ? 'yes' : `no (${receiver.arrived.size})`,
    'delivered in (ms)': drained,
    'events per second': Math.round((receiver.arrived.size / drained) * 1000),
    'commit to delivery p50 (ms)': percentile(backlog, 50),
    'commit to delivery p99 (ms)': percentile(backlog, 99),
    duplicates: receiver.duplicates(),
    'server peak RSS (MB)': peak,
  });

  // 2. a steady pace: each event's commit to its delivery
  const paced = await queueEvents(server, QUEUED, PACED, 1, PACED_PER_SECOND);
  await until(() => latencies(paced, receiver).length >= PACED, 60_000);
  const steady = latencies(paced, receiver);
  report(`outbox: ${PACED} events at ${PACED_PER_SECOND}/s`, {
    'commit to delivery p50 (ms)': percentile(steady, 50),
    'commit to delivery p99 (ms)': percentile(steady, 99),
    'commit to delivery max (ms)': steady.at(-1) ?? 0,
  });
  checkTarget('outbox commit to delivery p99 (paced)', percentile(steady, 99), 'ms', { atMost: 5000 });
}

/** Sales through POST /api/sales by every session until the deadline: sales per second, and the server's CPU ms per sale. */
async function saleRound(server: BenchServer, cookies: string[], code: string, ids: number[], seconds: number) {
  const deadline = Date.now() + seconds * 1000;
  let sold = 0;
  let failed = 0;
  const started = Date.now();
  const cpuBefore = cpuSeconds(server.pid);
  await Promise.all(
    cookies.map(async (cookie, worker) => {
      let n = worker;
      while (Date.now() < deadline) {
        n += cookies.length;
        const res = await fetch(`${server.baseUrl}/api/sales`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/json' },
          body: JSON.stringify({
            chargeCode: code,
            items: [{ itemId: ids[n % ids.length], quantity: 1 }],
            vatApplied: true,
          }),
        });
        await res.arrayBuffer();
        if (res.status === 201) sold += 1;
        else failed += 1;
      }
    }),
  );
  const elapsed = Date.now() - started;
  return {
    perSecond: (sold / elapsed) * 1000,
    cpuMsPerSale: ((cpuSeconds(server.pid) - cpuBefore) * 1000) / sold,
    failed,
  };
}

/** Waits until the outbox has nothing pending (what a round queued is delivered before the next starts). */
async function drained(server: BenchServer): Promise<void> {
  for (;;) {
    const [{ n }] = await server.db('outbox_messages').where({ status: 'pending' }).count<{ n: string }[]>('* as n');
    if (Number(n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function saleCost(server: BenchServer, receiver: Receiver) {
  const { ids } = await seedCatalogue(server);
  const cookies = await Promise.all(
    Array.from({ length: SALE_SESSIONS }, () => server.login(BENCH_ADMIN.email, BENCH_ADMIN.password)),
  );
  const admin = cookies[0];
  const patch = (id: string, active: boolean) =>
    fetch(`${server.baseUrl}/api/outbound-webhooks/${id}`, {
      method: 'PATCH',
      headers: { cookie: admin, 'content-type': 'application/json' },
      body: JSON.stringify({ active }),
    }).then((res) => res.arrayBuffer());
  // the first part's endpoint takes ping only: off here, so "without" means no endpoint at all
  for (const row of await server.db('outbound_webhooks').select('id')) await patch(row.id as string, false);
  const created = await fetch(`${server.baseUrl}/api/outbound-webhooks`, {
    method: 'POST',
    headers: { cookie: admin, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, events: ['sale.created', 'stock.low'], description: 'sales' }),
  });
  const id = ((await created.json()) as { id: string }).id;
  await patch(id, false);
  await saleRound(server, cookies, 'BENCH-001', ids, 2); // warm-up
  const without: { perSecond: number; cpuMsPerSale: number }[] = [];
  const withHook: { perSecond: number; cpuMsPerSale: number }[] = [];
  let failures = 0;
  const deliveredBefore = receiver.arrived.size;
  for (let round = 0; round < SALE_ROUNDS; round += 1) {
    await patch(id, false);
    const off = await saleRound(server, cookies, 'BENCH-001', ids, SALE_ROUND_SECONDS);
    await patch(id, true);
    const on = await saleRound(server, cookies, 'BENCH-001', ids, SALE_ROUND_SECONDS);
    // its deliveries go out before the next round (they are not the next round's load)
    await drained(server);
    without.push(off);
    withHook.push(on);
    failures += off.failed + on.failed;
  }
  const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / list.length;
  const rate = (list: typeof without) => mean(list.map((r) => r.perSecond));
  const cpu = (list: typeof without) => mean(list.map((r) => r.cpuMsPerSale));
  const cost = (1 - rate(withHook) / rate(without)) * 100;
  report(
    `sale flow (POST /api/sales, ${SALE_SESSIONS} sessions, ${SALE_ROUNDS} rounds of ${SALE_ROUND_SECONDS} s each way, alternating)`,
    {
      'without an endpoint (sales/s)': without.map((r) => r.perSecond.toFixed(1)).join(', '),
      'with an active endpoint (sales/s)': withHook.map((r) => r.perSecond.toFixed(1)).join(', '),
      'mean without (sales/s)': rate(without).toFixed(1),
      'mean with (sales/s)': rate(withHook).toFixed(1),
      'throughput cost (%)': cost.toFixed(1),
      'server CPU per sale without (ms)': cpu(without).toFixed(2),
      'server CPU per sale with (ms)': cpu(withHook).toFixed(2),
      'CPU cost, delivery included (%)': ((cpu(withHook) / cpu(without) - 1) * 100).toFixed(1),
      'sale.created delivered': receiver.arrived.size - deliveredBefore,
      'refused sales': failures,
    },
  );
  checkTarget('sale throughput cost of an active outbound webhook', Math.round(cost * 10) / 10, '%', { atMost: 10 });
}

export async function run(): Promise<void> {
  const receiver = await startReceiver();
  const server = await startBenchServer({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1' });
  try {
    await deliveries(server, receiver);
    await saleCost(server, receiver);
  } finally {
    await server.stop();
    await receiver.close();
  }
}
