// Issue 29, robustness: one user's hostile PDF must not stall everyone's invoices. A 408 KB PDF
// whose content stream inflates to 400 MB kept a reader busy for 30 s, and three of them made a
// valid invoice from someone else fail too.
import { once } from 'node:events';
import { createDeflate } from 'node:zlib';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInvoicePdf } from '../src/modules/invoices/invoices.pdf';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { INVOICE_LAYOUTS, invoicePdf } from './helpers/purchasing-factories';

const MB = 1024 * 1024;
const TOO_LARGE = 'The PDF is too large or too complex to read';

/** `size` zero bytes deflated at level 9 (some 1,000 to 1), without holding them in memory. */
async function deflatedZeros(size: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const zeros = Buffer.alloc(MB);
  for (let written = 0; written < size; written += MB) {
    if (!deflate.write(zeros)) await once(deflate, 'drain');
  }
  deflate.end();
  await once(deflate, 'end');
  return Buffer.concat(out);
}

/** A one-page PDF whose page content is `content` (its stream dictionary's entries besides the length in `filter`). */
function onePagePdf(content: Buffer, filter = ''): Buffer {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let length = 0;
  const add = (part: string | Buffer) => {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'latin1') : part;
    parts.push(bytes);
    length += bytes.length;
  };
  const object = (n: number, body: string | Buffer[]) => {
    offsets[n] = length;
    add(`${n} 0 obj\n`);
    if (typeof body === 'string') add(body);
    else body.forEach(add);
    add('\nendobj\n');
  };
  add('%PDF-1.4\n');
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  object(
    3,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
  );
  object(4, [
    Buffer.from(`<< /Length ${content.length}${filter} >>\nstream\n`, 'latin1'),
    content,
    Buffer.from('\nendstream', 'latin1'),
  ]);
  object(5, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const xref = length;
  add(
    `xref\n0 6\n0000000000 65535 f \n${offsets
      .slice(1)
      .map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)
      .join('')}`,
  );
  add(`trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

/** A one-page PDF whose page content is a FlateDecode stream of `inflated` bytes. */
const pdfBomb = async (inflated: number) => onePagePdf(await deflatedZeros(inflated), ' /Filter /FlateDecode');

/**
 * A one-page PDF of `runs` separately placed words, not compressed (nothing for the inflation bound
 * to refuse): a few MB that pdf.js takes a second or more to read, far longer than a test's limit.
 */
const slowPdf = (runs: number) =>
  onePagePdf(Buffer.from(`BT /F1 8 Tf ${'1 0 0 1 10 10 Tm (stock) Tj '.repeat(runs)}ET`, 'latin1'));

let t: TestApp;
let bomb: Buffer;
let managers: supertest.Agent[];
beforeAll(async () => {
  t = await testApp();
  bomb = await pdfBomb(400 * MB);
  managers = await Promise.all([1, 2, 3, 4].map(async () => t.loginAs(await buildUser(t.db, { role: 'manager' }))));
});
afterAll(() => t.close());

describe('a PDF that inflates to 400 MB', () => {
  it('is a few hundred KB', () => {
    expect(bomb.length).toBeGreaterThan(100 * 1024);
    expect(bomb.length).toBeLessThan(MB);
  });

  it('422 at once on upload-invoice and import-from-invoice; nothing is stored', async () => {
    const res = await managers[0]
      .post('/api/upload/invoice')
      .attach('invoice', bomb, { filename: 'bomb.pdf', contentType: 'application/pdf' })
      .expect(422);
    expect(res.body).toEqual({ message: TOO_LARGE });
    const imported = await managers[0]
      .post('/api/orders/import-from-invoice')
      .attach('invoice', bomb, 'bomb.pdf')
      .expect(422);
    expect(imported.body).toEqual({ message: TOO_LARGE });
    expect(await t.db('orders').count({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await t.db('order_invoices').count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it("while three users' bombs are in flight, a fourth user's valid invoice is read", async () => {
    const valid = await invoicePdf(1);
    const bombs = managers
      .slice(0, 3)
      .map((agent, i) => agent.post('/api/upload/invoice').attach('invoice', bomb, `bomb-${i}.pdf`));
    const read = managers[3].post('/api/upload/invoice').attach('invoice', valid, 'valid.pdf');
    const [answered, ...refused] = await Promise.all([read, ...bombs]);
    expect(answered.status).toBe(200);
    expect(answered.body.extractedData).toMatchObject({
      invoiceNumber: INVOICE_LAYOUTS[1].expected.invoiceNumber,
      total: INVOICE_LAYOUTS[1].expected.total,
    });
    expect(refused.map((res) => [res.status, res.body.message])).toEqual([0, 1, 2].map(() => [422, TOO_LARGE]));
  });
});

describe('the bounds of a reading', () => {
  it('a reading over its time is given up (422) and its worker ended; the next reading works', async () => {
    // the limit counts from the start of the reading: a document that pdf.js takes a second or more to read
    const slow = slowPdf(200_000);
    await expect(
      readInvoicePdf(
        { originalname: 'slow.pdf', buffer: slow, size: slow.length },
        { readBy: 'timed', timeLimitMs: 1 },
      ),
    ).rejects.toMatchObject({ status: 422, message: TOO_LARGE });
    const valid = await invoicePdf(1);
    const next = await readInvoicePdf(
      { originalname: 'next.pdf', buffer: valid, size: valid.length },
      { readBy: 'timed' },
    );
    expect(next.extracted.invoiceNumber).toBe(INVOICE_LAYOUTS[1].expected.invoiceNumber);
  });

  it("a user's readings are taken one at a time, in order; one more than three waiting is 429", async () => {
    const valid = await invoicePdf(1);
    const file = (n: number) => ({ originalname: `n${n}.pdf`, buffer: valid, size: valid.length });
    const finished: number[] = [];
    const reads = [1, 2, 3].map((n) =>
      readInvoicePdf(file(n), { readBy: 'busy' }).then((r) => (finished.push(n), r.filename)),
    );
    await expect(readInvoicePdf(file(4), { readBy: 'busy' })).rejects.toMatchObject({
      status: 429,
      message: 'Three of your invoices are already being read: try again when they are done',
    });
    // another user is not turned away meanwhile
    expect((await readInvoicePdf(file(5), { readBy: 'other' })).filename).toBe('n5.pdf');
    expect(await Promise.all(reads)).toEqual(['n1.pdf', 'n2.pdf', 'n3.pdf']);
    expect(finished).toEqual([1, 2, 3]);
    expect((await readInvoicePdf(file(6), { readBy: 'busy' })).filename).toBe('n6.pdf');
  });
});
