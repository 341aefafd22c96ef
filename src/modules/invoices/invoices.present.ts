import type { InvoiceLineMatch, MatchedInvoice } from './invoices.matching';
import type { ParsedInvoice } from './invoices.parser';
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

export function presentLineMatch({ match }: InvoiceLineMatch) {
  if (!match) return null;
  const similarity = match.similarity === null ? null : Math.round(match.similarity * 100) / 100;
  return {
    kind: match.kind,
    by: match.by,
    similarity,
    item: { id: match.item.id, name: match.item.name, sku: match.item.sku },
  };
}

/** The answer of both "read an invoice" endpoints: what was read with each line's match, and which file it was. */
export function presentInvoiceRead({ pdf, supplierId, lines }: MatchedInvoice) {
  const extracted = presentExtracted(pdf.extracted);
  return {
    success: true,
    message: `Read ${pdf.extracted.items.length} line(s) from the invoice`,
    extractedData: {
      ...extracted,
      supplierId,
      items: extracted.items.map((item, i) => ({
        ...item,
        supplierSku: lines[i].supplierSku,
        match: presentLineMatch(lines[i]),
      })),
    },
    file: { filename: pdf.filename, size: pdf.size, sha256: pdf.sha256 },
  };
}
