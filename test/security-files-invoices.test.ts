// Security review, finding 1 (issue 14): an invoice with a 64,000-character line must not stall
// the server. The text is read and parsed in the PDF reader's worker thread, lines over 2,000
// characters are skipped, and the line patterns are linear.
import { once } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LINE_LENGTH, parseInvoiceText } from '../src/modules/invoices/invoices.parser';
import readPdfInvoice from '../src/modules/invoices/invoices.pdf-worker';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { invoicePdf, renderPdf } from './helpers/purchasing-factories';

/** 64,000 characters of "1 x 1 x ...": the old lazy patterns backtracked over it for seconds. */
const LONG_LINE = `${'1 x '.repeat(15_999)}1 xx`;

/** A real invoice with the long line on its own baseline (a tiny font keeps it on the page). */
const longLineInvoice = () =>
  renderPdf((doc) => {
    doc.text('Acme Lab Supplies Ltd', 50, 50);
    doc.text('Invoice No: INV-64K', 50, 65);
    doc.fontSize(0.02).text(LONG_LINE, 50, 100, { lineBreak: false });
    doc.fontSize(10).text('Safety goggles 3 x £4.50 = £13.50', 50, 200);
    doc.text('Total £13.50', 50, 230);
  });

const EXPECTED = {
  supplierName: 'Acme Lab Supplies Ltd',
  invoiceNumber: 'INV-64K',
  total: '13.50',
  items: [{ name: 'Safety goggles', quantity: 3, unitPrice: '4.50' }],
};

describe('parseInvoiceText on long lines', () => {
  it('skips a 64,000-character line and reads the rest of the invoice', () => {
    expect(LONG_LINE).toHaveLength(64_000);
    const text = [
      'Acme Lab Supplies Ltd',
      'Invoice No: INV-64K',
      LONG_LINE,
      'Safety goggles 3 x £4.50 = £13.50',
      'Total £13.50',
    ].join('\n');
    expect(parseInvoiceText(text)).toEqual(EXPECTED);
  });

  it('skips an order line over the cap, reads one at the cap', () => {
    const line = (length: number) => {
      const tail = ' 2 £3.00 £6.00';
      return `Widget ${'w'.repeat(length - tail.length - 'Widget '.length)}${tail}`;
    };
    expect(line(MAX_LINE_LENGTH)).toHaveLength(2_000);
    expect(parseInvoiceText(line(MAX_LINE_LENGTH + 1)).items).toEqual([]);
    const [read] = parseInvoiceText(line(MAX_LINE_LENGTH)).items;
    expect(read).toMatchObject({ quantity: 2, unitPrice: '3.00' });
    expect(read.name).toHaveLength(MAX_LINE_LENGTH - ' 2 £3.00 £6.00'.length);
  });

  it('reads lines under the cap made of what the old patterns backtracked over', () => {
    const filler = (unit: string) => unit.repeat(Math.floor(1_900 / unit.length));
    const text = [
      `${filler('1 x ')}Tubes 2 x £1.50`,
      filler('item qty '),
      `${filler('- ')}Gloves 4 £2.00 £8.00`,
      filler('a 1 @ '),
    ].join('\n');
    const { items } = parseInvoiceText(text);
    expect(items.map((i) => [i.quantity, i.unitPrice])).toEqual([
      [2, '1.50'],
      [4, '2.00'],
    ]);
    expect(items[1].name).toMatch(/^a?[^-]*Gloves$/);
  });
});

describe('the PDF reader worker', () => {
  it('returns what the parser read, not the text, so the main thread never parses', async () => {
    const pdf = await longLineInvoice();
    const { port1: startedReading, port2: started } = new MessageChannel();
    const told = once(startedReading, 'message');
    const result = await readPdfInvoice({
      data: new Uint8Array(pdf),
      started,
      maxPages: 20,
      maxInflatedBytes: 100 * 1024 * 1024,
    });
    expect(result).toEqual({ extracted: EXPECTED });
    // The pool starts the reading's time limit on this message, not when the worker is asked.
    expect(await told).toEqual(['reading']);
    startedReading.close();
  });
});

let t: TestApp;
let manager: supertest.Agent;
let otherManager: supertest.Agent;
let clerk: supertest.Agent;
let clerkId: string;
beforeAll(async () => {
  t = await testApp();
  manager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  otherManager = await t.loginAs(await buildUser(t.db, { role: 'manager' }));
  const c = await buildUser(t.db, { role: 'user' });
  clerkId = c.id;
  clerk = await t.loginAs(c);
});
afterAll(() => t.close());

/** The same invoice, followed by pages of terms that take the reader a while longer to extract. */
const longerLongLineInvoice = () =>
  renderPdf((doc) => {
    doc.text('Acme Lab Supplies Ltd', 50, 50);
    doc.text('Invoice No: INV-64K', 50, 65);
    doc.fontSize(0.02).text(LONG_LINE, 50, 100, { lineBreak: false });
    doc.fontSize(10).text('Safety goggles 3 x £4.50 = £13.50', 50, 200);
    doc.text('Total £13.50', 50, 230);
    for (let page = 1; page < 20; page += 1) {
      doc.addPage();
      for (let i = 0; i < 60; i += 1)
        doc.text(`Terms and conditions, clause ${page}.${i}: goods remain ours until paid in full`, 50, 50 + i * 12, {
          lineBreak: false,
        });
    }
  });

describe('POST /api/upload/invoice with a 64,000-character line', () => {
  it('200 with the invoice read, while a signed-in client is answered before it', async () => {
    // two first uploads start both readers of the pool, so what follows is the long lines' reading alone
    const warm = await invoicePdf(0);
    // (two managers: one person's invoices are read one at a time)
    await Promise.all(
      [manager, otherManager].map((agent, i) =>
        agent.post('/api/upload/invoice').attach('invoice', warm, `warm-${i}.pdf`).expect(200),
      ),
    );
    const [pdf, longer] = await Promise.all([longLineInvoice(), longerLongLineInvoice()]);

    const order: string[] = [];
    const upload = (agent: supertest.Agent, file: Buffer, filename: string) =>
      agent
        .post('/api/upload/invoice')
        .attach('invoice', file, { filename, contentType: 'application/pdf' })
        .then((res) => {
          order.push(filename);
          return res;
        });
    // One person's invoices are read one after another, so once either of the manager's two is
    // answered, the other's whole reading lies ahead: a signed-in client asking then is answered
    // first, with the reading in the worker. (Were the text parsed on this thread, that reading
    // would hold the event loop and the client would wait for it.)
    const uploads = [upload(manager, pdf, 'long.pdf'), upload(manager, longer, 'longer.pdf')] as const;
    await Promise.race(uploads);
    const me = await clerk.get('/api/auth/user').then((res) => {
      order.push('user');
      return res;
    });
    const [first, uploaded] = await Promise.all(uploads);

    expect(order).toHaveLength(3);
    expect(order[1]).toBe('user');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: clerkId });
    for (const [res, file, filename] of [
      [first, pdf, 'long.pdf'],
      [uploaded, longer, 'longer.pdf'],
    ] as const) {
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        message: 'Read 1 line(s) from the invoice',
        extractedData: { supplierName: 'Acme Lab Supplies Ltd', invoiceNumber: 'INV-64K', total: '13.50' },
        file: { filename, size: file.length },
      });
      expect(res.body.extractedData.items).toEqual([expect.objectContaining({ name: 'Safety goggles', quantity: 3 })]);
    }
  });
});
