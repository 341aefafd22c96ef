import { currentUser } from '../../auth/guards';
import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { readMatchedInvoice } from './invoices.matching';
import { invoiceUpload } from './invoices.pdf';
import { presentInvoiceRead } from './invoices.present';
import { INVOICE_UPLOAD_ERRORS, InvoiceUploadBody, UploadInvoiceResult } from './invoices.schemas';

/** /api/upload/invoice: read an invoice PDF without attaching it to anything. */
export function invoicesRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Orders');

  api.post(
    '/upload/invoice',
    {
      operationId: 'readInvoice',
      summary: 'Read an invoice PDF',
      description:
        'multipart/form-data with the PDF in the field `invoice` (at most 10 MB). Nothing is stored: the answer is the same as ' +
        "POST /api/orders/upload-invoice (each line with its part number and matched item), plus the file's name, size and SHA-256. To keep the PDF, create the order with " +
        'POST /api/orders/import-from-invoice or attach it with POST /api/orders/{id}/upload-invoice.',
      access: 'manager',
      formBody: InvoiceUploadBody,
      responses: { 200: { description: 'What was read', schema: UploadInvoiceResult }, ...INVOICE_UPLOAD_ERRORS },
    },
    invoiceUpload.single('invoice'),
    async (req, res) => {
      res.json(presentInvoiceRead(await readMatchedInvoice(db, req.file, currentUser(req).id)));
    },
  );

  return api.router;
}
