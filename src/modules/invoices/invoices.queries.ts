import { sql, type Sql } from '../../db/sql';
import type { ReferenceCounters } from '../../db/references';

/** The owner's fragment for a cross-module statement: whether the order whose id is `orderId` has an invoice PDF. */
export const hasInvoice = (orderId: Sql): Sql =>
  sql`EXISTS (SELECT 1 FROM order_invoices oi WHERE oi.order_id = ${orderId})`;

/**
 * The owner's fragment for a cross-module statement: the metadata of the invoice of the order whose
 * id is `orderId` (filename, size, sha256, who uploaded it and when; never the PDF's bytes) as
 * jsonb, NULL when it has none.
 */
export const invoiceMetadataJson = (orderId: Sql): Sql =>
  sql`(SELECT jsonb_build_object('filename', i.filename, 'size_bytes', i.size_bytes, 'sha256', i.sha256,
                                            'uploaded_by', i.uploaded_by, 'uploaded_at', i.uploaded_at)
                    FROM order_invoices i WHERE i.order_id = ${orderId})`;

/** The rows of order invoices that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const invoicesReferences: ReferenceCounters = {
  users: [
    {
      table: 'order_invoices',
      column: 'uploaded_by',
      count: (id) => sql`SELECT count(*) FROM order_invoices WHERE uploaded_by = ${id}`,
    },
  ],
};
