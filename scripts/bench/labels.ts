// Labels benchmark (issue 31): 2,000 labels to PDF on Avery L7160 sheets (96 pages), through the
// server as `npm start` runs it: the time to the first byte and to the last, the PDF's size, and the
// server's peak RSS, and the slowest answer of /api/health meanwhile (the encoding yields to other
// requests). Three prints: 2,000 different items in Code 128 (a symbol for each: the worst
// case), the same in QR code, and 2,000 copies of one item (one symbol, reused). The PDF is
// streamed page by page, so the server holds a page, not the document.
import { readFileSync } from 'node:fs';
import { BENCH_ADMIN, report, sampleRss, startBenchServer, type BenchServer } from './lib';

const LABELS = 2000;

const rssMb = (pid: number) =>
  Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);

async function seedLabelItems(server: BenchServer): Promise<number[]> {
  const { db } = server;
  const [category] = await db('categories')
    .insert({ name: 'Labels bench', description: 'Benchmark category', icon: 'fa-box', color: 'blue' })
    .returning('id');
  await db.raw(
    `INSERT INTO items (name, sku, description, category_id, price, current_stock, minimum_stock)
     SELECT 'Nitrile gloves, powder free, size ' || g || ', box of 100', 'LBL-' || lpad(g::text, 6, '0'), null, ?,
            round((1 + (g % 500) * 0.37)::numeric, 2), 10, 0
       FROM generate_series(1, ?) g`,
    [category.id, LABELS],
  );
  return db('items').where({ category_id: category.id }).orderBy('id').pluck('id');
}

/** Asks /api/health one after the other until stopped: the slowest answer while a print runs. */
function healthProbe(server: BenchServer): { stop: () => Promise<number> } {
  let running = true;
  let slowest = 0;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      await fetch(`${server.baseUrl}/api/health`).then((res) => res.arrayBuffer());
      slowest = Math.max(slowest, performance.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return Math.round(slowest);
    },
  };
}

async function timedPrint(server: BenchServer, cookie: string, body: unknown) {
  const rssBefore = rssMb(server.pid);
  const rss = sampleRss(server.pid);
  const health = healthProbe(server);
  const t0 = performance.now();
  const res = await fetch(`${server.baseUrl}/api/labels`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST /api/labels answered ${res.status}: ${await res.text()}`);
  let firstByte = 0;
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (bytes === 0) firstByte = performance.now() - t0;
    bytes += chunk.byteLength;
  }
  const seconds = (performance.now() - t0) / 1000;
  const peak = rss.stop();
  const slowestHealth = await health.stop();
  return {
    'time to first byte ms': Math.round(firstByte),
    'time to last byte s': seconds.toFixed(2),
    'labels per second': Math.round(LABELS / seconds),
    'PDF size': `${(bytes / 1024 / 1024).toFixed(2)} MB (${Math.round(bytes / LABELS)} bytes a label)`,
    'server RSS before / peak MB': `${rssBefore} / ${peak}`,
    'slowest /api/health meanwhile ms': slowestHealth,
  };
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const ids = await seedLabelItems(server);
    const cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
    const distinct = ids.map((itemId) => ({ itemId, copies: 1 }));
    // a first, small print loads pdfkit and bwip-js, as the first print after a start would
    await timedPrint(server, cookie, { layout: 'avery-l7160', items: distinct.slice(0, 1) });
    report(
      '2,000 labels, 2,000 items, Code 128, L7160 (96 sheets), with prices',
      await timedPrint(server, cookie, { layout: 'avery-l7160', items: distinct, showPrice: true }),
    );
    report(
      '2,000 labels, 2,000 items, QR code, L7160, with prices',
      await timedPrint(server, cookie, { layout: 'avery-l7160', symbology: 'qr', items: distinct, showPrice: true }),
    );
    report(
      'the same 2,000 QR labels again (the symbols kept from the last print)',
      await timedPrint(server, cookie, { layout: 'avery-l7160', symbology: 'qr', items: distinct, showPrice: true }),
    );
    report(
      '2,000 copies of one item, Code 128, L7160 (one symbol reused)',
      await timedPrint(server, cookie, { layout: 'avery-l7160', items: [{ itemId: ids[0], copies: LABELS }] }),
    );
  } finally {
    await server.stop();
  }
}
