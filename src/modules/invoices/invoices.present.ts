import type { ParsedInvoice } from './invoices.parser';
import type { ReadInvoice } from './invoices.pdf';
import type { InvoiceMeta } from './invoices.service';

export function presentStoredInvoice(orderId: string, row: InvoiceMeta) {
  return {
    orderId,
    filename: row.filename,
    size: row.size_bytes,
    sha256: row.sha256,
    uploadedBy: row.uploaded_by,
    uploadedAt: row.uploaded_at.toISOString(),
  };
}

/** The spec's extractedData: total and unit prices are decimal strings. */
export function presentExtracted(parsed: ParsedInvoice) {
  return {
    supplierName: parsed.supplierName,
    invoiceNumber: parsed.invoiceNumber,
    total: parsed.total,
    items: parsed.items.map((i) => ({ name: i.name, quantity: i.quantity, unitPrice: i.unitPrice })),
  };
}

/** The answer of both "read an invoice" endpoints: what was read, and which file it was. */
export function presentInvoiceRead(pdf: ReadInvoice) {
  return {
    success: true,
    message: `Read ${pdf.extracted.items.length} line(s) from the invoice`,
    extractedData: presentExtracted(pdf.extracted),
    file: { filename: pdf.filename, size: pdf.size, sha256: pdf.sha256 },
  };
}
