import { z } from 'zod';
import { MessageBody } from '../../http/openapi';

const ExtractedLine = z.object({ name: z.string(), quantity: z.number(), unitPrice: z.string() });

export const ExtractedData = z
  .object({
    supplierName: z.string().nullable(),
    invoiceNumber: z.string().nullable(),
    total: z
      .string()
      .nullable()
      .openapi({ description: 'decimal string, e.g. "1234.50"; null when no total was found' }),
    items: z.array(ExtractedLine),
  })
  .openapi('InvoiceExtractedData');

export const InvoiceLineMatch = z
  .object({
    kind: z.enum(['exact', 'probable']).openapi({
      description:
        "exact: the line names the item (the supplier's part number, the item's name with or without the part number, or the item's SKU); " +
        'probable: only a similar name (pg_trgm similarity at least 0.55), for a person to confirm or change: an order made from the ' +
        'extracted lines without their sku does not use it',
    }),
    by: z.enum(['supplierSku', 'name', 'sku', 'similarity']).openapi({ description: 'what matched' }),
    similarity: z
      .number()
      .nullable()
      .openapi({ description: 'the name similarity (0-1, two decimals) of a probable match; null for an exact one' }),
    item: z.object({ id: z.number().int(), name: z.string(), sku: z.string() }),
  })
  .openapi('InvoiceLineMatch');

/** What an invoice read answers: the spec's extractedData, each line with its part number and match, and the supplier matched. */
export const MatchedExtractedData = ExtractedData.extend({
  supplierId: z.string().nullable().openapi({
    description:
      'the existing supplier whose name (any case) is supplierName, whose part numbers the lines were matched by; null when there is none',
  }),
  items: z.array(
    ExtractedLine.extend({
      supplierSku: z.string().nullable().openapi({
        description:
          "the supplier's part number read from the line (one its item sources know, else a catalogue number leading the name); null when none",
      }),
      match: InvoiceLineMatch.nullable().openapi({ description: 'the item the line names; null when none' }),
    }),
  ),
}).openapi('InvoiceExtractedDataMatched');

export const InvoiceFile = z
  .object({ filename: z.string(), size: z.number().int(), sha256: z.string() })
  .openapi('InvoiceFile');

export const UploadInvoiceResult = z
  .object({ success: z.boolean(), message: z.string(), extractedData: MatchedExtractedData, file: InvoiceFile })
  .openapi('UploadInvoiceResult');

/** Documents a multipart body with one PDF in the field `invoice`. */
export const InvoiceUploadBody = z
  .object({
    invoice: z.string().openapi({ type: 'string', format: 'binary', description: 'the invoice PDF, at most 10 MB' }),
  })
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
  400: {
    description: "No file in the field 'invoice', not a PDF (checked by content), or a damaged PDF",
    schema: MessageBody,
  },
  413: { description: 'The file is larger than 10 MB', schema: MessageBody },
  422: {
    description:
      'The PDF is too large or too complex to read: its streams inflate to over 100 MB, or reading it takes over 10 s or its memory',
    schema: MessageBody,
  },
  429: {
    description:
      'Three of your invoices are already being read (one at a time per person): try again when they are done',
    schema: MessageBody,
  },
};
