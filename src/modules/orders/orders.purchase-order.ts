import type { Db } from '../../db/knex';
import { allQueries } from '../../db/transaction';
import { formatDate, formatMoney, formatQuantity } from '../../lib/format';
import { presentOrderDetail } from './orders.present';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { sourcesService } from '../sources/sources.service';
import { suppliersService, type SupplierRow } from '../suppliers/suppliers.service';
import { ordersService } from './orders.service';

/** The setting with the stores' delivery address and contact, printed on a purchase order. */
export const DELIVERY_ADDRESS_SETTING = 'purchasing.deliveryAddress';

/** Printed as where to deliver when the setting is not set: the service's own name. */
const SERVICE_NAME = 'Stores';

type PurchaseOrder = ReturnType<typeof presentOrderDetail>;
/** The supplier's part numbers of the order's items, by item id. */
type PartNumbers = Map<number, string>;
type DeliverTo = { address: string; contact?: string };

const A4_MARGIN = 50;
const PAGE_BOTTOM = 842 - A4_MARGIN;
/** The lines' columns: x, width and alignment (each row is printed on one baseline, as a supplier reads it). */
const COLUMNS = {
  partNumber: { x: 50, width: 70, align: 'left' },
  sku: { x: 125, width: 75, align: 'left' },
  description: { x: 205, width: 140, align: 'left' },
  quantity: { x: 350, width: 50, align: 'right' },
  unitCost: { x: 405, width: 70, align: 'right' },
  lineTotal: { x: 480, width: 65, align: 'right' },
} as const;
type Column = keyof typeof COLUMNS;
const HEADINGS: Record<Column, string> = {
  partNumber: 'Your part no.',
  sku: 'Our SKU',
  description: 'Description',
  quantity: 'Qty',
  unitCost: 'Unit cost',
  lineTotal: 'Line total',
};

/** The purchase order of an order as a PDF to send its supplier (GET /api/orders/{id}/purchase-order.pdf). */
export function purchaseOrderService(db: Db) {
  return {
    async render(ref: string): Promise<{ filename: string; pdf: Buffer }> {
      const order = presentOrderDetail(await ordersService(db).get(ref));
      const itemIds = order.items.flatMap((line) => (line.itemId === null ? [] : [line.itemId]));
      const [supplier, setting, partNumbers] = await allQueries(db, [
        () => suppliersService(db).get(order.supplierId),
        () => settingsService(db).get(DELIVERY_ADDRESS_SETTING),
        () => sourcesService(db).supplierSkusOf(order.supplierId, itemIds),
      ]);
      const deliverTo = KNOWN_SETTINGS[DELIVERY_ADDRESS_SETTING].safeParse(setting);
      const pdf = await drawPurchaseOrder(
        order,
        supplier,
        partNumbers,
        deliverTo.success ? deliverTo.data : { address: SERVICE_NAME },
      );
      return { filename: `purchase-order-${order.orderId}.pdf`, pdf };
    },
  };
}

async function drawPurchaseOrder(
  order: PurchaseOrder,
  supplier: SupplierRow,
  partNumbers: PartNumbers,
  deliverTo: DeliverTo,
): Promise<Buffer> {
  // pdfkit (and its fonts) load on the first purchase order, not at start
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: 'A4', margin: A4_MARGIN, info: { Title: `Purchase order ${order.orderId}` } });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  doc.font('Helvetica-Bold').fontSize(18).text('Purchase order', A4_MARGIN, A4_MARGIN);
  doc.font('Helvetica').fontSize(10);
  doc.text(`Order number ${order.orderId}`, 350, A4_MARGIN + 30, { width: 195, align: 'right' });
  doc.text(`Date ${formatDate(order.createdAt)}`, 350, A4_MARGIN + 45, { width: 195, align: 'right' });

  const blockTop = 120;
  const supplierBottom = addressBlock(doc, 'Supplier', {
    lines: [supplier.name, supplier.contact, supplier.address, supplier.email, supplier.phone],
    at: { x: 50, y: blockTop },
  });
  const deliveryBottom = addressBlock(doc, 'Deliver to', {
    lines: [deliverTo.address, deliverTo.contact],
    at: { x: 310, y: blockTop },
  });

  let y = Math.max(supplierBottom, deliveryBottom) + 25;
  const headingRow = () => {
    doc.font('Helvetica-Bold');
    y = row(doc, y, HEADINGS);
    doc.font('Helvetica');
    doc.moveTo(A4_MARGIN, y).lineTo(545, y).stroke();
    y += 6;
  };
  headingRow();
  for (const line of order.items) {
    const cells: Record<Column, string> = {
      partNumber: (line.itemId !== null && partNumbers.get(line.itemId)) || '',
      sku: line.sku ?? '',
      description: line.name,
      quantity: formatQuantity(line.quantity),
      unitCost: formatMoney(line.unitCost),
      lineTotal: formatMoney(line.lineTotal),
    };
    if (y + rowHeight(doc, cells) > PAGE_BOTTOM) {
      doc.addPage();
      y = A4_MARGIN;
      headingRow();
    }
    y = row(doc, y, cells) + 4;
  }
  doc.moveTo(A4_MARGIN, y).lineTo(545, y).stroke();
  doc
    .font('Helvetica-Bold')
    .text(`Total ${formatMoney(order.totalAmount)}`, 350, y + 8, { width: 195, align: 'right' });
  doc.end();
  return finished;
}

/** A heading at `at` over the lines given (each may hold several lines; empty ones are left out); answers the y under it. */
function addressBlock(
  doc: PDFKit.PDFDocument,
  heading: string,
  { lines, at: { x, y } }: { lines: (string | null | undefined)[]; at: { x: number; y: number } },
): number {
  doc.font('Helvetica-Bold').text(heading, x, y, { width: 235 });
  doc.font('Helvetica');
  for (const text of lines
    .flatMap((value) => (value ? value.split(/\r?\n/) : []))
    .filter((text) => text.trim() !== '')) {
    doc.text(text, x, doc.y, { width: 235 });
  }
  return doc.y;
}

const rowHeight = (doc: PDFKit.PDFDocument, cells: Record<Column, string>) =>
  Math.max(
    ...(Object.keys(COLUMNS) as Column[]).map((column) =>
      doc.heightOfString(cells[column], { width: COLUMNS[column].width }),
    ),
  );

/** One row of cells on one baseline (a long description wraps in its column); answers the y under it. */
function row(doc: PDFKit.PDFDocument, y: number, cells: Record<Column, string>): number {
  const height = rowHeight(doc, cells);
  for (const column of Object.keys(COLUMNS) as Column[]) {
    const { x, width, align } = COLUMNS[column];
    doc.text(cells[column], x, y, { width, align });
  }
  return y + height;
}
