import { z } from 'zod';
import { MessageBody } from '../../http/openapi';

export const ExtractedData = z
  .object({
    supplierName: z.string().nullable(),
    invoiceNumber: z.string().nullable(),
    total: z.string().nullable().openapi({ description: 'decimal string, e.g. "1234.50"; null when no total was found' }),
    items: z.array(z.object({ name: z.string(), quantity: z.number(), unitPrice: z.string() })),
  })
  .openapi('InvoiceExtractedData');

export const InvoiceFile = z
  .object({ filename: z.string(), size: z.number().int(), sha256: z.string() })
  .openapi('InvoiceFile');

export const UploadInvoiceResult = z
  .object({ success: z.boolean(), message: z.string(), extractedData: ExtractedData, file: InvoiceFile })
  .openapi('UploadInvoiceResult');

/** Documents a multipart body with one PDF in the field `invoice`. */
export const InvoiceUploadBody = z
  .object({ invoice: z.string().openapi({ type: 'string', format: 'binary', description: 'the invoice PDF, at most 10 MB' }) })
  .openapi('InvoiceUpload');

export const StoredInvoice = z
  .object({
    orderId: z.string(),
    filename: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    uploadedBy: z.string().nullable(),
    uploadedAt: z.string(),
  })
  .openapi('StoredInvoice');

/** The error answers every invoice upload documents. */
export const INVOICE_UPLOAD_ERRORS = {
  400: { description: "No file in the field 'invoice', not a PDF (checked by content), or a damaged PDF", schema: MessageBody },
  413: { description: 'The file is larger than 10 MB', schema: MessageBody },
};
