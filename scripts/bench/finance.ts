// Finance recharges benchmark (issue 17): over 100,000 sales (the sales bench's seed, with one line
// of every 20th sale partly refunded), in this order: the recharge report as JSON, a batch close
// taking every sale and refund, that batch's journal CSV, then the report as a streamed CSV and XLSX
// with every line. For each: seconds, and the server's peak RSS (VmHWM, reset before each request
// through /proc/<pid>/clear_refs, so each figure is that request's peak from the RSS it started at).
import { readFileSync, writeFileSync } from 'node:fs';
import { BENCH_ADMIN, checkTarget, report, startBenchServer, type BenchServer } from './lib';
import { seedCatalogue, seedSales } from './sales';

const round = (n: number) => Math.round(n * 100) / 100;
const statusMb = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);

/**
 * Resets the process's peak RSS (VmHWM) to its current RSS (Linux: "5" into /proc/<pid>/clear_refs),
 * so the next VmHWM read is the peak of what ran in between; false where the kernel refuses it.
 */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** One request read to its end: status, seconds, bytes and lines of the body. */
async function timed(server: BenchServer, cookie: string, path: string, init: RequestInit = {}) {
  const t0 = performance.now();
  const res = await fetch(`${server.baseUrl}${path}`, {
    ...init,
    headers: { cookie, 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  let bytes = 0;
  let newlines = 0;
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    for (const b of value) if (b === 10) newlines += 1;
    if (bytes < 1_000_000) chunks.push(value);
  }
  const seconds = (performance.now() - t0) / 1000;
  return {
    status: res.status,
    seconds: round(seconds),
    bytes,
    newlines,
    head: Buffer.concat(chunks).toString('utf8', 0, Math.min(bytes, 1_000_000)),
  };
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const { adminId } = await seedCatalogue(server);
    const seeded = await seedSales(server, adminId);
    // Refunds through the trigger's path: one line of every 20th sale loses one unit.
    const t0 = Date.now();
    await server.db.raw(`UPDATE sale_items si SET refunded_quantity = 1
                          WHERE si.id IN (SELECT min(id) FROM sale_items WHERE sale_id % 20 = 0 GROUP BY sale_id)`);
    await server.db.raw(`UPDATE sales s SET refunded_amount = r.gross, status = 'partially_refunded'
                           FROM (SELECT sale_id, sum(gross_amount) AS gross FROM sale_refund_lines GROUP BY sale_id) r WHERE r.sale_id = s.id`);
    await server.db.raw('ANALYZE sale_refund_lines; ANALYZE sales; ANALYZE sale_items');
    const refundSeconds = (Date.now() - t0) / 1000;
    const [{ sales, lines, refunds }] = (
      await server.db.raw(
        'SELECT (SELECT count(*)::int FROM sales) AS sales, (SELECT count(*)::int FROM sale_items) AS lines, (SELECT count(*)::int FROM sale_refund_lines) AS refunds',
      )
    ).rows;
    const cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
    // The high-water mark at start includes start-up (tsx compiling the sources, migrations) and the
    // sign-in's password hash; each step below is measured from a reset mark.
    const idle = { rss: statusMb(server.pid, 'VmRSS'), hwm: statusMb(server.pid, 'VmHWM') };
    const resets = resetPeak(server.pid);
    const step = async (path: string, init?: RequestInit) => {
      const before = statusMb(server.pid, 'VmRSS');
      resetPeak(server.pid);
      const result = await timed(server, cookie, path, init);
      return { ...result, before, peak: statusMb(server.pid, 'VmHWM') };
    };

    // The report and the close (the figures) first; then the journal and the exports of every line.
    const json = await step('/api/finance/recharges');
    const jsonBody = JSON.parse(json.head) as { groups: unknown[]; totals: { sales: number; gross: string } };
    const close = await step('/api/finance/recharge-batches', {
      method: 'POST',
      body: JSON.stringify({ to: new Date().toISOString() }),
    });
    const batch = (
      JSON.parse(close.head) as { batch: { number: string; sales: number; refunds: number; gross: string } }
    ).batch;
    const journal = await step(`/api/finance/recharge-batches/${batch.number}/journal`);
    const csv = await step('/api/finance/recharges?format=csv&lines=true');
    const xlsx = await step('/api/finance/recharges?format=xlsx&lines=true');
    const peak = Math.max(json.peak, csv.peak, xlsx.peak, close.peak, journal.peak);

    report(
      `Finance recharges over ${sales} sales, ${lines} lines, ${refunds} refund lines (seeded in ${round(seeded + refundSeconds)} s)`,
      {
        'report JSON': `${json.status}, ${json.seconds} s, ${jsonBody.groups.length} groups, ${jsonBody.totals.sales} sales, gross ${jsonBody.totals.gross}`,
        'report CSV with lines': `${csv.status}, ${csv.seconds} s, ${csv.newlines - 2} line rows, ${round(csv.bytes / 1024 / 1024)} MB`,
        'report XLSX with lines': `${xlsx.status}, ${xlsx.seconds} s, ${round(xlsx.bytes / 1024 / 1024)} MB`,
        'batch close': `${close.status}, ${close.seconds} s, ${batch.number}: ${batch.sales} sales, ${batch.refunds} refunds, gross ${batch.gross}`,
        'journal CSV': `${journal.status}, ${journal.seconds} s, ${journal.newlines - 1} rows, ${round(journal.bytes / 1024 / 1024)} MB`,
        'server RSS idle / VmHWM since start MB': `${idle.rss} / ${idle.hwm}`,
        'RSS before -> peak MB': resets
          ? [json, close, journal, csv, xlsx]
              .map((r, i) => `${['JSON', 'close', 'journal', 'CSV', 'XLSX'][i]} ${r.before} -> ${r.peak}`)
              .join(', ')
          : `${peak} (VmHWM since start: the kernel refused to reset it)`,
        verdict:
          csv.newlines - 2 !== lines ||
          batch.sales !== sales ||
          journal.newlines - 1 !== batch.sales + batch.refunds ||
          jsonBody.totals.gross !== batch.gross
            ? 'FAILED: rows missing, or the batch and the report disagree'
            : 'OK: every line exported, every sale batched, the report gross equals the batch gross',
      },
    );
    checkTarget(`GET /api/finance/recharges JSON over ${sales} sales`, json.seconds, 's', { atMost: 2 });
    checkTarget(`GET /api/finance/recharges CSV with every line (${lines})`, csv.seconds, 's', { atMost: 30 });
    checkTarget(`GET /api/finance/recharges XLSX with every line (${lines})`, xlsx.seconds, 's', { atMost: 60 });
    checkTarget(`POST /api/finance/recharge-batches over ${sales} sales`, close.seconds, 's', { atMost: 30 });
    checkTarget('GET /api/finance/recharge-batches/{batch}/journal', journal.seconds, 's', { atMost: 30 });
    const steps = {
      'report JSON': json,
      'batch close': close,
      journal,
      'report CSV with every line': csv,
      'report XLSX with every line': xlsx,
    };
    for (const [name, r] of Object.entries(steps))
      checkTarget(`finance ${name}: server peak RSS (VmHWM)`, resets ? r.peak : peak, 'MB', { atMost: 250 });
  } finally {
    await server.stop();
  }
}
