import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { describeInvoice, invoiceUpload } from './invoice-pdf';
import { InvoiceUploadBody, UploadInvoiceResult } from './invoices.schemas';

export const INVOICE_UPLOAD_ERRORS = {
  400: "No file in the field 'invoice', not a PDF (checked by content), or a damaged PDF",
  413: 'The file is larger than 10 MB',
} as const;

/** /api/upload/invoice: read an invoice PDF without attaching it to anything. */
export function invoicesRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Orders');

  api.post(
    '/upload/invoice',
    {
      summary: 'Read an invoice PDF',
      description:
        "multipart/form-data with the PDF in the field `invoice` (at most 10 MB). Nothing is stored: the answer is the same as " +
        'POST /api/orders/upload-invoice, plus the file\'s name, size and SHA-256. To keep the PDF, create the order with ' +
        'POST /api/orders/import-from-invoice or attach it with POST /api/orders/{id}/upload-invoice.',
      access: 'manager',
      formBody: InvoiceUploadBody,
      responses: { 200: { description: 'What was read', schema: UploadInvoiceResult }, ...INVOICE_UPLOAD_ERRORS },
    },
    invoiceUpload.single('invoice'),
    async (req, res) => {
      res.json(await describeInvoice(req.file));
    },
  );

  return api.router;
}
