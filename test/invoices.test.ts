import { createHash } from 'node:crypto';
import { PDFParse } from 'pdf-parse';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAmount, parseInvoiceText } from '../src/modules/invoices/invoices.parser';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import {
  INVOICE_LAYOUTS,
  PNG_BYTES,
  buildOrder,
  buildSupplier,
  invoicePdf,
  labSolventsInvoicePdf,
  renderPdf,
} from './helpers/purchasing-factories';
import { binaryBody } from './helpers/binary-body';

async function pdfText(pdf: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

describe('parseInvoiceText', () => {
  for (const layout of INVOICE_LAYOUTS) {
    it(`reads ${layout.name}`, async () => {
      const text = await pdfText(await renderPdf(layout.draw));
      expect(parseInvoiceText(text)).toEqual(layout.expected);
    });
  }

  it('reads tab-separated lines and returns nulls when nothing matches', () => {
    expect(parseInvoiceText('Zeta Ltd\nInvoice No: Z-1\nWidget\t2\t$3.00\t$6.00\nTotal\t$6.00')).toEqual({
      supplierName: 'Zeta Ltd',
      invoiceNumber: 'Z-1',
      total: '6.00',
      items: [{ name: 'Widget', quantity: 2, unitPrice: '3.00' }],
    });
    expect(parseInvoiceText('')).toEqual({ supplierName: null, invoiceNumber: null, total: null, items: [] });
  });

  it('does not take a line whose printed amount disagrees with qty x price', () => {
    expect(parseInvoiceText('Widget 2 £3.00 £7.00').items).toEqual([]);
  });
});

describe('parseAmount', () => {
  it.each([
    ['£1,234.50', '1234.50'],
    ['€1.234,50', '1234.50'],
    ['$12', '12.00'],
    ['12,5', '12.50'],
    ['1,000', '1000.00'],
    ['GBP 1,013.50', '1013.50'],
    ['1.234.567,89 EUR', '1234567.89'],
    ['abc', null],
  ])('%s -> %s', (input, expected) => {
    expect(parseAmount(input)).toBe(expected);
  });
});

let t: TestApp;
let manager: supertest.Agent;
let user: supertest.Agent;
let managerId: string;
beforeAll(async () => {
  t = await testApp();
  const m = await buildUser(t.db, { role: 'manager' });
  managerId = m.id;
  manager = await t.loginAs(m);
  user = await t.loginAs(await buildUser(t.db, { role: 'user' }));
});
afterAll(() => t.close());

const truncated = async () => {
  const pdf = await invoicePdf(0);
  return pdf.subarray(0, pdf.length - 40);
};

describe.each(['/api/orders/upload-invoice', '/api/upload/invoice'])('POST %s', (path) => {
  it('200 with the extracted data of the invoice', async () => {
    const pdf = await invoicePdf(1);
    const res = await manager
      .post(path)
      .attach('invoice', pdf, { filename: 'beta.pdf', contentType: 'application/pdf' })
      .expect(200);
    expect(res.body).toEqual({
      success: true,
      message: 'Read 2 line(s) from the invoice',
      // the spec's fields as they were, and (issue 28) the supplier and each line's part number and match: none here
      extractedData: {
        ...INVOICE_LAYOUTS[1].expected,
        supplierId: null,
        items: INVOICE_LAYOUTS[1].expected.items.map((line) => ({ ...line, supplierSku: null, match: null })),
      },
      file: { filename: 'beta.pdf', size: pdf.length, sha256: createHash('sha256').update(pdf).digest('hex') },
    });
  });

  it('400 for a PNG renamed .pdf, a truncated PDF, a PDF header on garbage, no file; never 500', async () => {
    const png = await manager
      .post(path)
      .attach('invoice', PNG_BYTES, { filename: 'scan.pdf', contentType: 'application/pdf' })
      .expect(400);
    expect(png.body.message).toBe('The uploaded file is not a PDF');
    const cut = await manager
      .post(path)
      .attach('invoice', await truncated(), { filename: 'cut.pdf', contentType: 'application/pdf' })
      .expect(400);
    expect(cut.body.message).toBe('The uploaded PDF is incomplete or damaged');
    const garbage = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(3000, 0x41), Buffer.from('\n%%EOF\n')]);
    const broken = await manager
      .post(path)
      .attach('invoice', garbage, { filename: 'g.pdf', contentType: 'application/pdf' })
      .expect(400);
    expect(broken.body.message).toBe('The uploaded PDF could not be read');
    const none = await manager.post(path).field('x', 'y').expect(400);
    expect(none.body.message).toBe("No file uploaded: send the PDF in the multipart field 'invoice'");
    await manager
      .post(path)
      .attach('document', await invoicePdf(0), 'a.pdf')
      .expect(400);
  });

  it('403 for a user, 401 without a session', async () => {
    await user.post(path).attach('invoice', PNG_BYTES, 'a.pdf').expect(403);
    await t.request.post(path).attach('invoice', PNG_BYTES, 'a.pdf').expect(401);
  });
});

describe('upload size limit', () => {
  it('413 for an 11 MB file', async () => {
    const big = Buffer.alloc(11 * 1024 * 1024, 0x20);
    big.write('%PDF-1.4\n');
    const res = await manager
      .post('/api/orders/upload-invoice')
      .attach('invoice', big, { filename: 'big.pdf', contentType: 'application/pdf' });
    expect(res.status).toBe(413);
    expect(res.body.message).toBe('File too large');
    const direct = await manager
      .post('/api/upload/invoice')
      .attach('invoice', big, { filename: 'big.pdf', contentType: 'application/pdf' });
    expect([direct.status, direct.body.message]).toEqual([413, 'File too large']);
  });

  it("400 naming multer's reason for a file in a field the route does not take; nothing is stored", async () => {
    const invoicesBefore = await t.db('order_invoices').count({ n: '*' }).first();
    const res = await manager.post('/api/orders/upload-invoice').attach('document', await invoicePdf(0), 'a.pdf');
    expect([res.status, res.body.message]).toEqual([400, 'Invalid upload: Unexpected file field']);
    expect(await t.db('order_invoices').count({ n: '*' }).first()).toEqual(invoicesBefore);
  });
});

describe('POST /api/orders/:id/upload-invoice and GET /api/orders/:id/invoice-pdf', () => {
  it('stores the PDF in the database; the download returns the same bytes; a new upload replaces it', async () => {
    const supplier = await buildSupplier(t.db);
    const { order } = await buildOrder(t.db, supplier.id, [{ name: 'A', quantity: '1', unitCost: '1.00' }]);
    await user.get(`/api/orders/${order.id}/invoice-pdf`).expect(404);

    const pdf = await invoicePdf(0);
    const res = await manager
      .post(`/api/orders/${order.order_id}/upload-invoice`)
      .attach('invoice', pdf, { filename: 'acme invoice.pdf', contentType: 'application/pdf' })
      .expect(200);
    expect(res.body).toEqual({
      success: true,
      message: `Invoice attached to order ${order.order_id}`,
      invoice: {
        orderId: order.order_id,
        filename: 'acme invoice.pdf',
        size: pdf.length,
        sha256: createHash('sha256').update(pdf).digest('hex'),
        uploadedBy: managerId,
        uploadedAt: expect.any(String),
      },
      extractedData: INVOICE_LAYOUTS[0].expected,
    });
    expect((await t.db('orders').where({ id: order.id }).first()).invoice_number).toBe('INV-1001');

    const download = await user
      .get(`/api/orders/${order.id}/invoice-pdf`)
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(download.headers['content-type']).toBe('application/pdf');
    expect(download.headers['content-disposition']).toBe(`attachment; filename=invoice-${order.order_id}.pdf`);
    expect(Buffer.compare(download.body as Buffer, pdf)).toBe(0);

    const other = await invoicePdf(2);
    await manager.post(`/api/orders/${order.id}/upload-invoice`).attach('invoice', other, 'second.pdf').expect(200);
    const rows = await t.db('order_invoices').where({ order_id: order.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ filename: 'second.pdf', size_bytes: other.length });
    expect(Buffer.compare(rows[0].data, other)).toBe(0);
    // an invoice number already set is kept
    expect((await t.db('orders').where({ id: order.id }).first()).invoice_number).toBe('INV-1001');
    expect((await user.get(`/api/orders/${order.id}`).expect(200)).body.hasInvoice).toBe(true);
  });

  it("serves a stored invoice as invoice-<orderId>.pdf (application/pdf), never under the uploader's file name and extension (issue 29)", async () => {
    const supplier = await buildSupplier(t.db);
    const { order } = await buildOrder(t.db, supplier.id, [{ name: 'A', quantity: '1', unitCost: '1.00' }]);
    const pdf = await invoicePdf(0);
    await manager
      .post(`/api/orders/${order.order_id}/upload-invoice`)
      .attach('invoice', pdf, { filename: 'x<script>.html', contentType: 'text/html' })
      .expect(200);
    const download = await user
      .get(`/api/orders/${order.id}/invoice-pdf`)
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(download.headers['content-disposition']).toBe(`attachment; filename=invoice-${order.order_id}.pdf`);
    expect(download.headers['content-type']).toBe('application/pdf');
    expect(Buffer.compare(download.body as Buffer, pdf)).toBe(0);
  });

  it('404 for an unknown order, 400 for a non-PDF (nothing stored), 403 for a user', async () => {
    const supplier = await buildSupplier(t.db);
    const { order } = await buildOrder(t.db, supplier.id, [{ name: 'A', quantity: '1', unitCost: '1.00' }]);
    await manager
      .post('/api/orders/999999/upload-invoice')
      .attach('invoice', await invoicePdf(0), 'a.pdf')
      .expect(404);
    await manager.post(`/api/orders/${order.id}/upload-invoice`).attach('invoice', PNG_BYTES, 'a.pdf').expect(400);
    await manager
      .post(`/api/orders/${order.id}/upload-invoice`)
      .attach('invoice', await truncated(), 'a.pdf')
      .expect(400);
    await user
      .post(`/api/orders/${order.id}/upload-invoice`)
      .attach('invoice', await invoicePdf(0), 'a.pdf')
      .expect(403);
    expect(await t.db('order_invoices').where({ order_id: order.id })).toHaveLength(0);
    const missing = await user.get(`/api/orders/${order.id}/invoice-pdf`).expect(404);
    expect(missing.body.message).toBe(`No invoice is attached to order ${order.order_id}`);
    await user.get('/api/orders/999999/invoice-pdf').expect(404);
  });
});

describe('POST /api/orders/import-from-invoice (multipart PDF)', () => {
  it('201 creates a pending order from the PDF, creates the supplier, and stores the PDF as its invoice', async () => {
    const pdf = await invoicePdf(4);
    const res = await manager.post('/api/orders/import-from-invoice').attach('invoice', pdf, 'epsilon.pdf').expect(201);
    expect(res.body).toMatchObject({
      success: true,
      supplierCreated: true,
      matchedItems: 0,
      unmatchedItems: 2,
      extractedData: INVOICE_LAYOUTS[4].expected,
    });
    expect(res.body.order).toMatchObject({
      status: 'pending',
      invoiceNumber: 'EC/2026/118',
      totalAmount: '183.00',
      hasInvoice: true,
    });
    expect(res.body.order.supplier.name).toBe('EPSILON CHEMICALS PLC');
    expect(
      res.body.order.items.map((l: { name: string; quantity: number; unitCost: string }) => [
        l.name,
        l.quantity,
        l.unitCost,
      ]),
    ).toEqual([
      ['AB-100 Ethanol absolute 2.5L', 6, '18.40'],
      ['CD-220 Acetone 1L', 12, '6.05'],
    ]);
    const stored = await t.db('order_invoices').where({ order_id: res.body.order.id }).first();
    expect(Buffer.compare(stored.data, pdf)).toBe(0);
  });

  it('the supplier field overrides the PDF; 400 for a non-PDF or a PDF with no lines, and no order is created', async () => {
    const before = (await t.db('orders').count<{ count: number }[]>('* as count'))[0].count;
    const res = await manager
      .post('/api/orders/import-from-invoice')
      .attach('invoice', await invoicePdf(3), 'd.pdf')
      .field('supplier', 'Override Ltd')
      .expect(201);
    expect(res.body.order.supplier.name).toBe('Override Ltd');

    await manager.post('/api/orders/import-from-invoice').attach('invoice', PNG_BYTES, 'x.pdf').expect(400);
    const empty = await renderPdf((doc) => doc.text('Just a letter'));
    const none = await manager
      .post('/api/orders/import-from-invoice')
      .attach('invoice', empty, 'letter.pdf')
      .expect(400);
    expect(none.body.message).toBe(
      'No order lines could be read from the invoice: send the lines as JSON parsedData instead',
    );
    expect((await t.db('orders').count<{ count: number }[]>('* as count'))[0].count).toBe(before + 1);
  });
});

describe('a buyer imports an invoice, receives it partly then fully', () => {
  it('stock and the item order history follow each step', async () => {
    const gloves = await buildItem(t.db, { name: 'Nitrile gloves (box of 100)', currentStock: 2 });
    const tips = await buildItem(t.db, { name: 'Pipette tips 200ul', currentStock: 0 });
    const imported = await manager
      .post('/api/orders/import-from-invoice')
      .attach('invoice', await invoicePdf(0), 'acme.pdf')
      .expect(201);
    const order = imported.body.order;
    expect(imported.body.matchedItems).toBe(2);
    expect(order.totalAmount).toBe('12374.00');
    const [glovesLine, tipsLine] = order.items;

    await manager
      .post(`/api/orders/${order.orderId}/receive`)
      .send({ receivedItems: [{ orderItemId: glovesLine.orderItemId, receivedQuantity: 4, addToInventory: true }] })
      .expect(200);
    expect((await user.get(`/api/items/${gloves.id}/order-history`).expect(200)).body.orders).toEqual([
      expect.objectContaining({
        orderId: order.orderId,
        quantity: 10,
        receivedQuantity: 4,
        unitCost: 1234.5,
        status: 'partially_received',
      }),
    ]);

    await manager
      .post(`/api/orders/${order.orderId}/receive`)
      .send({
        receivedItems: [
          { orderItemId: glovesLine.orderItemId, receivedQuantity: 6, addToInventory: true },
          { orderItemId: tipsLine.orderItemId, receivedQuantity: 4, addToInventory: true },
        ],
      })
      .expect(200);
    expect((await t.db('items').where({ id: gloves.id }).first()).current_stock).toBe('12.00');
    expect((await t.db('items').where({ id: tips.id }).first()).current_stock).toBe('4.00');
    expect((await user.get(`/api/items/${tips.id}/order-history`).expect(200)).body.orders[0]).toMatchObject({
      status: 'received',
      receivedQuantity: 4,
    });
    const pdf = await user.get(`/api/orders/${order.id}/invoice-pdf`).expect(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
  });

  it('every purchasing path is in the OpenAPI description, with its request forms', async () => {
    const doc = (await t.request.get('/api/docs').expect(200)).body;
    for (const path of [
      '/api/suppliers',
      '/api/suppliers/{id}',
      '/api/suppliers/{id}/items',
      '/api/suppliers/{id}/deletion-check',
      '/api/suppliers/{id}/safe',
      '/api/sources/{id}',
      '/api/orders',
      '/api/orders/{id}',
      '/api/orders/upload-invoice',
      '/api/orders/import-from-invoice',
      '/api/orders/{id}/receive',
      '/api/orders/{id}/add-to-inventory',
      '/api/orders/{id}/upload-invoice',
      '/api/orders/{id}/invoice-pdf',
      '/api/orders/import-template/json',
      '/api/orders/import-template/csv',
      '/api/upload/invoice',
      '/api/items/{id}/order-history',
    ]) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
    // the import takes JSON or a multipart form (a PDF or the CSV template); uploads take a file
    const importBody = doc.paths['/api/orders/import-from-invoice'].post.requestBody.content;
    expect(Object.keys(importBody).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(doc.components.schemas.ImportFromInvoiceForm.properties).toMatchObject({
      invoice: { format: 'binary' },
      csv: { format: 'binary' },
    });
    expect(Object.keys(doc.paths['/api/orders/upload-invoice'].post.requestBody.content)).toEqual([
      'multipart/form-data',
    ]);
  });
});

describe('invoice lines matched by the supplier part number, by name, or probably (issue 28)', () => {
  let ethanol: { id: number; name: string; sku: string };
  let acetone: { id: number; name: string; sku: string };
  let gloves: { id: number; name: string; sku: string };
  beforeAll(async () => {
    await buildSupplier(t.db, { id: 'lab-solvents', name: 'Lab Solvents Direct' });
    ethanol = await buildItem(t.db, { name: 'Ethanol, absolute (2.5 litre)', sku: 'ETH-ABS-25' });
    acetone = await buildItem(t.db, { name: 'Acetone 1 L', sku: 'ACE-1L', currentStock: 2, minimumStock: 10 });
    gloves = await buildItem(t.db, { name: 'Nitrile gloves, powder-free (box of 200)', sku: 'NG-PF-200' });
    // the supplier's own part number for ethanol is known from an earlier link
    await manager
      .post('/api/suppliers/lab-solvents/items')
      .send({ itemId: ethanol.id, price: '17.00', supplierSku: 'lsd-30010' })
      .expect(201);
  });

  const item = (row: { id: number; name: string; sku: string }) => ({ id: row.id, name: row.name, sku: row.sku });

  it('200 upload-invoice: a line by its supplier part number, one by its name without the part number, one probable by a similar name, one unmatched', async () => {
    const res = await manager
      .post('/api/orders/upload-invoice')
      .attach('invoice', await labSolventsInvoicePdf(), 'lsd.pdf')
      .expect(200);
    expect(res.body.message).toBe('Read 4 line(s) from the invoice');
    expect(res.body.extractedData).toEqual({
      supplierName: 'Lab Solvents Direct',
      invoiceNumber: 'LSD-INV-880',
      total: '121.70',
      supplierId: 'lab-solvents',
      items: [
        {
          name: 'LSD-30010 Ethanol absolute 2.5L',
          quantity: 2,
          unitPrice: '18.40',
          supplierSku: 'lsd-30010',
          match: { kind: 'exact', by: 'supplierSku', similarity: null, item: item(ethanol) },
        },
        {
          name: 'LSD-44120 Acetone 1 L',
          quantity: 4,
          unitPrice: '6.05',
          supplierSku: 'LSD-44120',
          match: { kind: 'exact', by: 'name', similarity: null, item: item(acetone) },
        },
        {
          name: 'LSD-51200 Nitrile Gloves Powder Free Box 200',
          quantity: 3,
          unitPrice: '9.90',
          supplierSku: 'LSD-51200',
          match: { kind: 'probable', by: 'similarity', similarity: 0.92, item: item(gloves) },
        },
        {
          name: 'LSD-70070 Parafilm M roll 38m',
          quantity: 1,
          unitPrice: '31.00',
          supplierSku: 'LSD-70070',
          match: null,
        },
      ],
    });
    // the other read endpoint answers the same
    const direct = await manager
      .post('/api/upload/invoice')
      .attach('invoice', await labSolventsInvoicePdf(), 'lsd.pdf')
      .expect(200);
    expect(direct.body.extractedData).toEqual(res.body.extractedData);
  });

  it('201 import-from-invoice links each exactly matched item to the supplier at the invoice price with its part number; replenishment then orders from it', async () => {
    const res = await manager
      .post('/api/orders/import-from-invoice')
      .attach('invoice', await labSolventsInvoicePdf(), 'lsd.pdf')
      .expect(201);
    // the probable line is not taken unseen: it stays free text, as does the unmatched one
    expect(res.body).toMatchObject({ supplierCreated: false, matchedItems: 2, unmatchedItems: 2 });
    expect(res.body.order.items.map((l: { itemId: number | null }) => l.itemId)).toEqual([
      ethanol.id,
      acetone.id,
      null,
      null,
    ]);
    const sources = await t
      .db('item_sources')
      .where({ supplier_id: 'lab-solvents' })
      .orderBy('item_id')
      .select('item_id', 'price', 'supplier_sku');
    expect(sources).toEqual([
      { item_id: ethanol.id, price: '18.40', supplier_sku: 'lsd-30010' },
      { item_id: acetone.id, price: '6.05', supplier_sku: 'LSD-44120' },
    ]);

    // acetone: 2 in stock, minimum 10, so a target of 20; 4 are on this order: 14 more, from Lab Solvents at the invoice price
    const suggested = (await manager.get('/api/replenishment').expect(200)).body;
    const fromLab = suggested.suppliers.find((s: { supplier: { id: string } }) => s.supplier.id === 'lab-solvents');
    expect(fromLab.lines).toEqual([
      expect.objectContaining({ item: item(acetone), onOrder: 4, quantity: 14, unitPrice: '6.05' }),
    ]);

    // the next invoice of this supplier matches acetone by the part number it learned
    const again = await manager
      .post('/api/upload/invoice')
      .attach('invoice', await labSolventsInvoicePdf(), 'lsd.pdf')
      .expect(200);
    expect(again.body.extractedData.items[1].match).toEqual({
      kind: 'exact',
      by: 'supplierSku',
      similarity: null,
      item: item(acetone),
    });
  });

  it('201 a probable line confirmed by its item SKU is linked with the part number from its name; a later price updates the source', async () => {
    const line = {
      name: 'LSD-51200 Nitrile Gloves Powder Free Box 200',
      sku: 'NG-PF-200',
      quantity: 3,
      unitCost: '9.90',
    };
    const res = await manager
      .post('/api/orders/import-from-invoice')
      .send({ parsedData: { supplier: 'lab solvents direct', items: [line] } })
      .expect(201);
    expect(res.body).toMatchObject({ supplierCreated: false, matchedItems: 1 });
    expect(
      await t
        .db('item_sources')
        .where({ supplier_id: 'lab-solvents', item_id: gloves.id })
        .first('price', 'supplier_sku'),
    ).toEqual({
      price: '9.90',
      supplier_sku: 'LSD-51200',
    });
    await manager
      .post('/api/orders/import-from-invoice')
      .send({
        parsedData: {
          supplier: 'Lab Solvents Direct',
          items: [{ name: 'LSD-51200 gloves', quantity: 1, unitCost: '10.25' }],
        },
      })
      .expect(201);
    expect(
      await t
        .db('item_sources')
        .where({ supplier_id: 'lab-solvents', item_id: gloves.id })
        .first('price', 'supplier_sku'),
    ).toEqual({
      price: '10.25',
      supplier_sku: 'LSD-51200',
    });
  });
});
