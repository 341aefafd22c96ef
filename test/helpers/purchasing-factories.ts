import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import PDFDocument from 'pdfkit';

const unique = () => randomBytes(4).toString('hex');

export async function buildSupplier(
  db: Knex,
  overrides: Partial<{ id: string; name: string; contact: string; email: string; phone: string; address: string }> = {},
) {
  const [row] = await db('suppliers')
    .insert({
      id: overrides.id ?? `sup-${unique()}`,
      name: overrides.name ?? `Supplier ${unique()}`,
      contact: overrides.contact ?? 'Pat Buyer',
      email: overrides.email ?? 'sales@example.com',
      phone: overrides.phone ?? '01234 567890',
      address: overrides.address ?? '1 High Street',
    })
    .returning('*');
  return row as { id: string; name: string };
}

export async function buildItemSource(db: Knex, supplierId: string, itemId: number, price = '5.00') {
  const [row] = await db('item_sources')
    .insert({ supplier_id: supplierId, item_id: itemId, price, notes: null })
    .returning('*');
  return row as { id: number };
}

/** An order straight in the database: lines [{itemId?, name, quantity, unitCost, receivedQuantity?}]. */
export async function buildOrder(
  db: Knex,
  supplierId: string,
  lines: { itemId?: number | null; name: string; quantity: string; unitCost: string; receivedQuantity?: string }[],
  overrides: Partial<{ status: string; createdBy: string; createdAt: Date }> = {},
) {
  const [order] = await db('orders')
    .insert({
      supplier_id: supplierId,
      status: overrides.status ?? 'pending',
      total_amount: '0.00',
      created_by: overrides.createdBy ?? null,
      ...(overrides.createdAt ? { created_at: overrides.createdAt } : {}),
    })
    .returning('*');
  const rows = await db('order_items')
    .insert(
      lines.map((l) => ({
        order_id: order.id,
        item_id: l.itemId ?? null,
        name: l.name,
        quantity: l.quantity,
        unit_cost: l.unitCost,
        received_quantity: l.receivedQuantity ?? '0',
      })),
    )
    .returning('*');
  return {
    order: order as { id: number; order_id: string },
    lines: (rows as { id: number }[]).sort((a, b) => a.id - b.id),
  };
}

type Draw = (doc: PDFKit.PDFDocument) => void;

/** Renders a PDF with pdfkit; positions matter because text on one baseline becomes one line. */
export function renderPdf(draw: Draw): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: 'A4', margin: 50 });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.fontSize(10);
    draw(doc);
    doc.end();
  });
}

/** Writes cells on one row at the given x positions. */
function row(doc: PDFKit.PDFDocument, y: number, cells: [number, string][]) {
  for (const [x, text] of cells) doc.text(text, x, y, { lineBreak: false });
}

export type InvoiceLayout = {
  name: string;
  draw: Draw;
  expected: {
    supplierName: string;
    invoiceNumber: string;
    total: string;
    items: { name: string; quantity: number; unitPrice: string }[];
  };
};

/** Five invoice layouts as different suppliers print them, with what the parser must read. */
export const INVOICE_LAYOUTS: InvoiceLayout[] = [
  {
    name: 'UK letterhead, "Invoice No", description-qty-unit-amount table, £ with thousands, Total',
    draw: (doc) => {
      doc.fontSize(16).text('Acme Lab Supplies Ltd', 50, 50);
      doc.fontSize(10).text('12 Science Park, Cambridge CB4 0WS', 50, 72);
      doc.text('INVOICE', 400, 50);
      doc.text('Invoice No: INV-1001', 400, 90);
      doc.text('Date: 03/11/2026', 400, 105);
      row(doc, 180, [
        [50, 'Description'],
        [300, 'Qty'],
        [360, 'Unit Price'],
        [460, 'Amount'],
      ]);
      row(doc, 200, [
        [50, 'Nitrile gloves (box of 100)'],
        [300, '10'],
        [360, '£1,234.50'],
        [460, '£12,345.00'],
      ]);
      row(doc, 215, [
        [50, 'Pipette tips 200ul'],
        [300, '4'],
        [360, '£7.25'],
        [460, '£29.00'],
      ]);
      row(doc, 260, [
        [360, 'Subtotal'],
        [460, '£12,374.00'],
      ]);
      row(doc, 275, [
        [360, 'VAT 20%'],
        [460, '£2,474.80'],
      ]);
      row(doc, 290, [
        [360, 'Total'],
        [460, '£14,848.80'],
      ]);
    },
    expected: {
      supplierName: 'Acme Lab Supplies Ltd',
      invoiceNumber: 'INV-1001',
      total: '14848.80',
      items: [
        { name: 'Nitrile gloves (box of 100)', quantity: 10, unitPrice: '1234.50' },
        { name: 'Pipette tips 200ul', quantity: 4, unitPrice: '7.25' },
      ],
    },
  },
  {
    name: 'US "From:" label, "Invoice #", "qty x item @ price" lines, $ amounts, Amount due',
    draw: (doc) => {
      doc.fontSize(20).text('INVOICE', 50, 50);
      doc.fontSize(10).text('From: Beta Scientific Inc.', 50, 90);
      doc.text('Invoice #: 2026-0042', 50, 105);
      doc.text('Bill to: University Stores', 50, 120);
      doc.text('2 x Centrifuge tubes 50ml @ $1,250.00 $2,500.00', 50, 170);
      doc.text('5 x Lab coat, size M @ $32.99 $164.95', 50, 185);
      doc.text('Amount due: $2,664.95', 50, 230);
    },
    expected: {
      supplierName: 'Beta Scientific Inc.',
      invoiceNumber: '2026-0042',
      total: '2664.95',
      items: [
        { name: 'Centrifuge tubes 50ml', quantity: 2, unitPrice: '1250.00' },
        { name: 'Lab coat, size M', quantity: 5, unitPrice: '32.99' },
      ],
    },
  },
  {
    name: 'European "Vendor:" label, "Invoice Number", "item qty x price" lines, € with 1.234,56, Grand Total',
    draw: (doc) => {
      doc.text('Vendor: Gamma Labor GmbH', 50, 50);
      doc.text('Invoice Number: RE-77', 50, 65);
      doc.text('Rechnungsdatum 01.11.2026', 50, 80);
      doc.text('Microscope slides 20 x €1,25', 50, 130);
      doc.text('Benchtop centrifuge 1 x €1.499,00', 50, 145);
      row(doc, 190, [
        [50, 'Grand Total'],
        [300, '€1.524,00'],
      ]);
    },
    expected: {
      supplierName: 'Gamma Labor GmbH',
      invoiceNumber: 'RE-77',
      total: '1524.00',
      items: [
        { name: 'Microscope slides', quantity: 20, unitPrice: '1.25' },
        { name: 'Benchtop centrifuge', quantity: 1, unitPrice: '1499.00' },
      ],
    },
  },
  {
    name: 'qty-first table without currency symbols, "Inv #", Balance due with a currency code',
    draw: (doc) => {
      doc.fontSize(14).text('Delta Glassware Co', 50, 50);
      doc.fontSize(10).text('Tax Invoice', 50, 70);
      doc.text('Inv # 5589', 50, 85);
      row(doc, 140, [
        [50, 'Qty'],
        [100, 'Item'],
        [350, 'Unit'],
        [450, 'Total'],
      ]);
      row(doc, 160, [
        [50, '3'],
        [100, 'Safety goggles'],
        [350, '4.50'],
        [450, '13.50'],
      ]);
      row(doc, 175, [
        [50, '1000'],
        [100, 'Glass beaker 250ml'],
        [350, '1.00'],
        [450, '1,000.00'],
      ]);
      row(doc, 220, [
        [300, 'Balance due'],
        [450, 'GBP 1,013.50'],
      ]);
    },
    expected: {
      supplierName: 'Delta Glassware Co',
      invoiceNumber: '5589',
      total: '1013.50',
      items: [
        { name: 'Safety goggles', quantity: 3, unitPrice: '4.50' },
        { name: 'Glass beaker 250ml', quantity: 1000, unitPrice: '1.00' },
      ],
    },
  },
  {
    name: 'code column, label and value on separate lines ("Invoice No." / "Grand Total"), subtotal trap',
    draw: (doc) => {
      doc.fontSize(18).text('EPSILON CHEMICALS PLC', 50, 50);
      doc.fontSize(10).text('Invoice No.', 400, 90);
      doc.text('EC/2026/118', 400, 105);
      row(doc, 150, [
        [50, 'Code'],
        [110, 'Description'],
        [320, 'Quantity'],
        [390, 'Price'],
        [470, 'Line Total'],
      ]);
      row(doc, 170, [
        [50, 'AB-100'],
        [110, 'Ethanol absolute 2.5L'],
        [320, '6'],
        [390, '£18.40'],
        [470, '£110.40'],
      ]);
      row(doc, 185, [
        [50, 'CD-220'],
        [110, 'Acetone 1L'],
        [320, '12'],
        [390, '£6.05'],
        [470, '£72.60'],
      ]);
      row(doc, 230, [
        [390, 'Sub Total'],
        [470, '£183.00'],
      ]);
      doc.text('Grand Total', 390, 260);
      doc.text('£219.60', 390, 275);
    },
    expected: {
      supplierName: 'EPSILON CHEMICALS PLC',
      invoiceNumber: 'EC/2026/118',
      total: '219.60',
      items: [
        { name: 'AB-100 Ethanol absolute 2.5L', quantity: 6, unitPrice: '18.40' },
        { name: 'CD-220 Acetone 1L', quantity: 12, unitPrice: '6.05' },
      ],
    },
  },
];

export const invoicePdf = (layout = 0) => renderPdf(INVOICE_LAYOUTS[layout].draw);

/**
 * An invoice from Lab Solvents Direct whose catalogue numbers are glued to the names (issue 28):
 * 'LSD-30010 Ethanol absolute 2.5L' 2 x £18.40, 'LSD-44120 Acetone 1 L' 4 x £6.05,
 * 'LSD-51200 Nitrile Gloves Powder Free Box 200' 3 x £9.90, 'LSD-70070 Parafilm M roll 38m' 1 x £31.00.
 */
export const labSolventsInvoicePdf = () =>
  renderPdf((doc) => {
    doc.fontSize(16).text('Lab Solvents Direct', 50, 50);
    doc.fontSize(10).text('Invoice No: LSD-INV-880', 400, 90);
    row(doc, 180, [
      [50, 'Description'],
      [330, 'Qty'],
      [380, 'Unit Price'],
      [470, 'Amount'],
    ]);
    row(doc, 200, [
      [50, 'LSD-30010 Ethanol absolute 2.5L'],
      [330, '2'],
      [380, '£18.40'],
      [470, '£36.80'],
    ]);
    row(doc, 215, [
      [50, 'LSD-44120 Acetone 1 L'],
      [330, '4'],
      [380, '£6.05'],
      [470, '£24.20'],
    ]);
    row(doc, 230, [
      [50, 'LSD-51200 Nitrile Gloves Powder Free Box 200'],
      [330, '3'],
      [380, '£9.90'],
      [470, '£29.70'],
    ]);
    row(doc, 245, [
      [50, 'LSD-70070 Parafilm M roll 38m'],
      [330, '1'],
      [380, '£31.00'],
      [470, '£31.00'],
    ]);
    row(doc, 290, [
      [380, 'Total'],
      [470, '£121.70'],
    ]);
  });

export const PNG_BYTES = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);
