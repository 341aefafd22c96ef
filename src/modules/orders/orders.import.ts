import { parse as parseCsv } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { BadRequest } from '../../http/errors';

/** The JSON template: exactly the body POST /api/orders/import-from-invoice accepts. */
export const JSON_TEMPLATE = {
  parsedData: {
    supplier: 'Example Supplies Ltd',
    invoiceNumber: 'INV-0001',
    notes: 'Optional notes for the order',
    items: [
      { name: 'Nitrile gloves (box of 100)', sku: 'GLV-100', quantity: 10, unitCost: 4.5 },
      { name: 'Pipette tips 200ul', sku: '', quantity: 5, unitCost: 12.25 },
    ],
  },
};

export const CSV_COLUMNS = ['supplier', 'invoiceNumber', 'notes', 'name', 'sku', 'quantity', 'unitCost'] as const;

/** The CSV template: one row per order line; supplier, invoiceNumber and notes are read from the first row that has them. */
export function csvTemplate(): string {
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
export function parsedDataFromCsv(bytes: Buffer): Record<string, unknown> {
  let rows: Record<string, string>[];
  try {
    rows = parseCsv(bytes, { columns: (h: string[]) => h.map((c) => c.trim()), bom: true, trim: true, skip_empty_lines: true, relax_column_count: true });
  } catch (err) {
    throw BadRequest(`The CSV file could not be read: ${(err as Error).message}`);
  }
  if (rows.length > 0 && (!('name' in rows[0]) || !('quantity' in rows[0]) || !('unitCost' in rows[0]))) {
    throw BadRequest(`The CSV file needs the columns ${CSV_COLUMNS.join(', ')} (download GET /api/orders/import-template/csv)`);
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
