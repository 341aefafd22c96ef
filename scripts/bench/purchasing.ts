// Purchasing benchmark: reading invoice PDFs (POST /api/orders/upload-invoice) under load, storing
// and serving a large invoice PDF (server peak RSS), and creating + receiving orders concurrently
// (orders/s, and a check that stock equals what was received).
import { randomBytes } from 'node:crypto';
import PDFDocument from 'pdfkit';
import { INVOICE_LAYOUTS, renderPdf } from '../../test/helpers/purchasing-factories';
import { BENCH_ADMIN, report, runLoad, sampleRss, startBenchServer, type BenchServer } from './lib';

const BOUNDARY = '----purchasing-bench-boundary';

function multipart(field: string, filename: string, bytes: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** A PDF of about `megabytes` MB: text pages plus an uncompressed stream of random bytes. */
function bigPdf(megabytes: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const doc = new PDFDocument({ size: 'A4', margin: 50, compress: false });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    INVOICE_LAYOUTS[0].draw(doc);
    // filler: many pages of text until the size is reached
    const line = 'Filler line for a large invoice document with terms and conditions. '.repeat(2);
    let bytes = 0;
    while (bytes < megabytes * 1024 * 1024) {
      doc.addPage();
      for (let i = 0; i < 60; i += 1) doc.text(line + randomBytes(8).toString('hex'));
      bytes += 60 * (line.length + 16) * 3; // text objects carry about 3x their characters
    }
    doc.end();
  });
}

async function invoiceReading(server: BenchServer, cookie: string) {
  const pdf = await renderPdf(INVOICE_LAYOUTS[0].draw);
  const body = multipart('invoice', 'invoice.pdf', pdf);
  const before = sampleRss(server.pid).stop();
  const rss = sampleRss(server.pid);
  // Meanwhile a signed-in client on a light endpoint: does reading invoices hold up the rest of the counter?
  const [load, bystander] = await Promise.all([
    runLoad({
      url: `${server.baseUrl}/api/orders/upload-invoice`,
      connections: 8,
      duration: 10,
      requests: [
        {
          method: 'POST',
          path: '/api/orders/upload-invoice',
          headers: { cookie, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
          body,
        },
      ],
    }),
    runLoad({ url: `${server.baseUrl}/api/auth/user`, headers: { cookie }, connections: 2, duration: 10 }),
  ]);
  report('POST /api/orders/upload-invoice (1-page PDF, 8 connections, 10 s)', {
    'requests/s': load.requestsPerSecond,
    'latency p50 / p99 (ms)': `${load.p50} / ${load.p99}`,
    'errors / non-2xx': `${load.errors} / ${load.non2xx}`,
    'server RSS before / peak (MB)': `${before} / ${rss.stop()}`,
    'meanwhile GET /api/auth/user': `${bystander.requestsPerSecond} req/s, p50 / p99 ${bystander.p50} / ${bystander.p99} ms`,
  });
}

async function largeInvoice(server: BenchServer, cookie: string) {
  const supplier = 'bench-supplier';
  await server.db('suppliers').insert({ id: supplier, name: 'Bench Supplier' }).onConflict('id').ignore();
  const [order] = await server.db('orders').insert({ supplier_id: supplier, total_amount: '0' }).returning(['id']);
  const pdf = await bigPdf(8);
  const rss = sampleRss(server.pid);
  const t0 = performance.now();
  const upload = await fetch(`${server.baseUrl}/api/orders/${order.id}/upload-invoice`, {
    method: 'POST',
    headers: { cookie, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body: new Uint8Array(multipart('invoice', 'big.pdf', pdf)),
  });
  const t1 = performance.now();
  const download = await fetch(`${server.baseUrl}/api/orders/${order.id}/invoice-pdf`, { headers: { cookie } });
  const bytes = Buffer.from(await download.arrayBuffer());
  const t2 = performance.now();
  report(`Large invoice PDF (${(pdf.length / 1024 / 1024).toFixed(1)} MB)`, {
    'upload status': upload.status,
    'upload + parse + store (ms)': Math.round(t1 - t0),
    'download (ms)': Math.round(t2 - t1),
    'same bytes back': Buffer.compare(bytes, pdf) === 0 ? 'yes' : 'NO',
    'server peak RSS (MB)': rss.stop(),
  });
}

async function ordersFlow(server: BenchServer, cookie: string) {
  const { db } = server;
  const [category] = await db('categories')
    .insert({ name: `Bench purchasing ${Date.now()}`, color: 'green' })
    .returning('id');
  const items = await db('items')
    .insert(
      Array.from({ length: 50 }, (_, i) => ({
        name: `Purchased item ${i}`,
        sku: `PUR-${i}-${Date.now()}`,
        category_id: category.id,
        price: '2.00',
      })),
    )
    .returning('id');
  const ids = items.map((r: { id: number }) => r.id);
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.baseUrl}${path}`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { id: number; items: { orderItemId: number }[] } };
  };
  const WORKERS = 10;
  const SECONDS = 10;
  const deadline = Date.now() + SECONDS * 1000;
  let orders = 0;
  let failures = 0;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      let n = 0;
      while (Date.now() < deadline) {
        n += 1;
        const lines = [0, 1, 2].map((k) => ({
          itemId: ids[(w * 7 + n * 3 + k * 11) % ids.length],
          quantity: 2,
          unitCost: '1.25',
        }));
        const t0 = performance.now();
        const created = await post('/api/orders', { supplierId: 'bench-supplier', items: lines });
        if (created.status !== 201) {
          failures += 1;
          continue;
        }
        const received = await post(`/api/orders/${created.body.id}/receive`, {
          receivedItems: created.body.items.map((l) => ({
            orderItemId: l.orderItemId,
            receivedQuantity: 2,
            addToInventory: true,
          })),
        });
        latencies.push(performance.now() - t0);
        if (received.status === 200) orders += 1;
        else failures += 1;
      }
    }),
  );
  const [{ stock }] = await db('items').whereIn('id', ids).sum<{ stock: string }[]>('current_stock as stock');
  const [{ received }] = await db('order_items')
    .whereIn('item_id', ids)
    .sum<{ received: string }[]>('received_quantity as received');
  latencies.sort((a, b) => a - b);
  report(`Create + receive orders (3 lines each, ${WORKERS} concurrent buyers, ${SECONDS} s)`, {
    'orders received/s': Math.round(orders / SECONDS),
    'create+receive p50 / p99 (ms)': `${Math.round(latencies[Math.floor(latencies.length / 2)] ?? 0)} / ${Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0)}`,
    failures,
    'stock equals received': Number(stock) === Number(received) ? 'yes' : `NO (${stock} vs ${received})`,
  });
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const cookie = await server.login(BENCH_ADMIN.email, BENCH_ADMIN.password);
    await invoiceReading(server, cookie);
    await largeInvoice(server, cookie);
    await ordersFlow(server, cookie);
  } finally {
    await server.stop();
  }
}
