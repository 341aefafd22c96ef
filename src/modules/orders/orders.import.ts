import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { BadRequest } from '../../http/errors';
import { parse } from '../../http/validate';
import type { ParsedInvoice } from '../invoices/invoices.parser';
import { readInvoicePdf, type ReadInvoice, type UploadedFile } from '../invoices/invoices.pdf';
import { invoicesService } from '../invoices/invoices.service';
import { invoiceMatcher } from '../invoices/invoices.matching';
import { sourcesService } from '../sources/sources.service';
import { suppliersService } from '../suppliers/suppliers.service';
import { ParsedData, type ImportMultipartFields } from './orders.schemas';
import { ordersService, type NewLine, type OrderDetail } from './orders.service';

/**
 * Orders created from an invoice: typed in as JSON, read from a PDF, or from the filled-in CSV
 * template (both templates are here too).
 */

/** The JSON template: exactly the body POST /api/orders/import-from-invoice accepts. */
export const JSON_TEMPLATE = {
  parsedData: {
    supplier: 'Example Supplies Ltd',
    invoiceNumber: 'INV-0001',
    notes: 'Optional notes for the order',
    items: [
      { name: 'Nitrile gloves (box of 100)', sku: 'GLV-100', quantity: '10', unitCost: '4.50' },
      { name: 'Pipette tips 200ul', sku: '', quantity: '5', unitCost: '12.25' },
    ],
  },
};

export const CSV_COLUMNS = ['supplier', 'invoiceNumber', 'notes', 'name', 'sku', 'quantity', 'unitCost'] as const;

/** The CSV template: one row per order line; supplier, invoiceNumber and notes are read from the first row that has them. */
export async function csvTemplate(): Promise<string> {
  const { stringify } = await import('csv-stringify/sync');
  return stringify(
    JSON_TEMPLATE.parsedData.items.map((item, i) => ({
      supplier: i === 0 ? JSON_TEMPLATE.parsedData.supplier : '',
      invoiceNumber: i === 0 ? JSON_TEMPLATE.parsedData.invoiceNumber : '',
      notes: i === 0 ? JSON_TEMPLATE.parsedData.notes : '',
      name: item.name,
      sku: item.sku,
      quantity: item.quantity,
      unitCost: item.unitCost,
    })),
    { header: true, columns: [...CSV_COLUMNS] },
  );
}

/**
 * Reads a filled-in CSV template into the parsedData shape (validated afterwards by the same
 * schema as the JSON form). Blank rows are skipped.
 */
export async function parsedDataFromCsv(bytes: Buffer): Promise<Record<string, unknown>> {
  const { parse: parseCsv } = await import('csv-parse/sync');
  let rows: Record<string, string>[];
  try {
    rows = parseCsv(bytes, {
      columns: (h: string[]) => h.map((c) => c.trim()),
      bom: true,
      trim: true,
      skip_empty_lines: true,
      relax_column_count: true,
    });
  } catch (err) {
    throw BadRequest(`The CSV file could not be read: ${(err as Error).message}`);
  }
  if (rows.length > 0 && (!('name' in rows[0]) || !('quantity' in rows[0]) || !('unitCost' in rows[0]))) {
    throw BadRequest(
      `The CSV file needs the columns ${CSV_COLUMNS.join(', ')} (download GET /api/orders/import-template/csv)`,
    );
  }
  const lines = rows.filter((r) => Object.values(r).some((v) => v !== ''));
  const first = (key: string) => lines.find((r) => r[key])?.[key];
  return {
    supplier: first('supplier'),
    invoiceNumber: first('invoiceNumber') || undefined,
    notes: first('notes') || undefined,
    items: lines.map((r) => ({ name: r.name, sku: r.sku || undefined, quantity: r.quantity, unitCost: r.unitCost })),
  };
}

/** The files of a multipart import, by field. */
export type ImportFiles = { invoice?: UploadedFile[]; csv?: UploadedFile[] } | undefined;

export type ImportOutcome = {
  detail: OrderDetail;
  supplierCreated: boolean;
  matchedItems: number;
  unmatchedItems: number;
  /** what was read from the invoice PDF, when the order came from one */
  extracted?: ParsedInvoice;
};

export function orderImportService(db: Db) {
  /**
   * A pending order from an invoice: the supplier is matched by name case-insensitively or
   * created; lines are matched to items as invoiceMatcher says (exact matches only), and each
   * matched item gets the supplier as a source at the line's price. An invoice PDF it was read
   * from is stored as the order's invoice, in the same transaction.
   */
  function fromParsedData(data: ParsedData, userId: string | null, pdf?: ReadInvoice): Promise<ImportOutcome> {
    return transaction(db, async (trx) => {
      const suppliers = suppliersService(trx);
      const existing = await suppliers.findByName(data.supplier);
      const supplier = existing ?? (await suppliers.createFromName(data.supplier));
      const matches = await invoiceMatcher(trx).matchLines(existing?.id ?? null, data.items);
      // a probable match is for a person to confirm (the page's preview, or a sku sent with the line), never taken unseen
      const items = matches.map(({ match }) => (match?.kind === 'exact' ? match.item : undefined));
      const lines: NewLine[] = data.items.map((l, i) => ({
        itemId: items[i]?.id ?? null,
        name: l.name,
        sku: l.sku ?? items[i]?.sku ?? null,
        quantity: l.quantity,
        unitCost: l.unitCost,
      }));
      const matched = lines.filter((l) => l.itemId !== null).length;
      const orders = ordersService(trx);
      const id = await orders.insert(
        {
          supplierId: supplier.id,
          notes: data.notes ?? null,
          invoiceNumber: data.invoiceNumber ?? null,
          createdBy: userId,
        },
        lines,
      );
      // so replenishment knows the supplier sells these items, at the invoice's price and under its part numbers
      await sourcesService(trx).recordInvoicePrices(
        supplier.id,
        data.items.flatMap((l, i) =>
          items[i] ? [{ itemId: items[i].id, price: l.unitCost, supplierSku: matches[i].supplierSku }] : [],
        ),
      );
      if (pdf) await invoicesService(trx).attach(id, pdf, userId);
      return {
        detail: await orders.detail(id),
        supplierCreated: !existing,
        matchedItems: matched,
        unmatchedItems: lines.length - matched,
        ...(pdf ? { extracted: pdf.extracted } : {}),
      };
    });
  }

  return {
    fromParsedData,

    /**
     * A multipart import: the parsedData comes from the invoice PDF in `invoice` (which is then
     * stored with the order) or from the CSV template in `csv`; the text fields supplier,
     * invoiceNumber and notes override what the file says.
     */
    async fromUpload(fields: ImportMultipartFields, files: ImportFiles, userId: string | null): Promise<ImportOutcome> {
      const pdfFile = files?.invoice?.[0];
      const csvFile = files?.csv?.[0];
      if (pdfFile && csvFile)
        throw BadRequest("Send either an invoice PDF ('invoice') or a CSV file ('csv'), not both");
      if (csvFile) {
        const fromCsv = await parsedDataFromCsv(csvFile.buffer);
        return fromParsedData(parse(ParsedData, { ...fromCsv, ...defined(fields) }), userId);
      }
      if (!pdfFile)
        throw BadRequest(
          "No file uploaded: send an invoice PDF in the field 'invoice' or a CSV file in the field 'csv'",
        );
      const pdf = await readInvoicePdf(pdfFile, { readBy: userId ?? 'system' });
      const supplier = fields.supplier ?? pdf.extracted.supplierName;
      if (!supplier)
        throw BadRequest("The supplier could not be read from the invoice: send its name in the field 'supplier'");
      if (pdf.extracted.items.length === 0) {
        throw BadRequest('No order lines could be read from the invoice: send the lines as JSON parsedData instead');
      }
      const data = parse(ParsedData, {
        supplier,
        invoiceNumber: fields.invoiceNumber ?? pdf.extracted.invoiceNumber ?? undefined,
        notes: fields.notes,
        items: pdf.extracted.items.map((i) => ({ name: i.name, quantity: i.quantity, unitCost: i.unitPrice })),
      });
      return fromParsedData(data, userId, pdf);
    },
  };
}

function defined<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}
