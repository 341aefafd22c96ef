import type { Db } from '../../db/knex';
import type { ReadInvoice } from './invoices.pdf';

export type OrderInvoiceRow = {
  id: number;
  order_id: number;
  filename: string;
  size_bytes: number;
  sha256: string;
  data: Buffer;
  uploaded_by: string | null;
  uploaded_at: Date;
};

export type InvoiceMeta = Omit<OrderInvoiceRow, 'data'>;

/** Invoice PDFs stored in PostgreSQL, one per order (a new upload replaces the old). */
export function invoicesService(db: Db) {
  return {
    async attach(orderPk: number, pdf: ReadInvoice, uploadedBy: string | null): Promise<InvoiceMeta> {
      const [row] = await db('order_invoices')
        .insert({
          order_id: orderPk,
          filename: pdf.filename,
          size_bytes: pdf.size,
          sha256: pdf.sha256,
          data: pdf.bytes,
          uploaded_by: uploadedBy,
          uploaded_at: db.fn.now(),
        })
        .onConflict('order_id')
        .merge()
        .returning(['id', 'order_id', 'filename', 'size_bytes', 'sha256', 'uploaded_by', 'uploaded_at']);
      return row as InvoiceMeta;
    },

    find(orderPk: number): Promise<OrderInvoiceRow | undefined> {
      return db<OrderInvoiceRow>('order_invoices').where({ order_id: orderPk }).first();
    },
  };
}
