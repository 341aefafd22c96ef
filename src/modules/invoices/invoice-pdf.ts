import { createHash } from 'node:crypto';
import multer from 'multer';
import { BadRequest } from '../../http/errors';
import { parseInvoiceText, type ParsedInvoice } from './invoice-parser';

export const MAX_INVOICE_BYTES = 10 * 1024 * 1024;
/** An invoice is a few pages; reading no more than this keeps a huge document from hogging the process. */
export const MAX_PAGES_READ = 20;

/**
 * Multipart parsing for invoice uploads: in memory (the bytes go to PostgreSQL, never to
 * local disk), at most 10 MB per file (a larger one is a MulterError LIMIT_FILE_SIZE: 413).
 */
export const invoiceUpload = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: MAX_INVOICE_BYTES, files: 2, fields: 20, fieldSize: 64 * 1024 },
});

export type UploadedFile = { originalname: string; buffer: Buffer; size: number };

export type ReadInvoice = { filename: string; size: number; sha256: string; bytes: Buffer; text: string; extracted: ParsedInvoice };

const PDF_MAGIC = Buffer.from('%PDF-');
const EOF_MARKER = Buffer.from('%%EOF');

/**
 * Accepts a file only when it really is a readable PDF: it starts with %PDF-, ends with an
 * %%EOF marker (a cut-off upload does not, though pdf.js would still half-read it) and
 * pdf-parse can extract its text. Anything else is a 400, never a 500.
 */
export async function readInvoicePdf(file: UploadedFile | undefined): Promise<ReadInvoice> {
  if (!file) throw BadRequest("No file uploaded: send the PDF in the multipart field 'invoice'");
  const bytes = file.buffer;
  if (bytes.length < PDF_MAGIC.length || !bytes.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) {
    throw BadRequest('The uploaded file is not a PDF');
  }
  if (bytes.subarray(Math.max(0, bytes.length - 2048)).indexOf(EOF_MARKER) === -1) {
    throw BadRequest('The uploaded PDF is incomplete or damaged');
  }
  const text = await extractText(bytes);
  return {
    filename: safeFilename(file.originalname),
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes,
    text,
    extracted: parseInvoiceText(text),
  };
}

/** At most this many PDFs are read at once per process; pdf.js is CPU- and memory-hungry. */
export const MAX_CONCURRENT_READS = 2;
let reading = 0;
const waiting: (() => void)[] = [];

async function withReadSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (reading >= MAX_CONCURRENT_READS) await new Promise<void>((resolve) => waiting.push(resolve));
  else reading += 1;
  try {
    return await fn();
  } finally {
    // hand the slot straight to the next waiter, or free it
    const next = waiting.shift();
    if (next) next();
    else reading -= 1;
  }
}

function extractText(bytes: Buffer): Promise<string> {
  return withReadSlot(() => extractTextNow(bytes));
}

async function extractTextNow(bytes: Buffer): Promise<string> {
  // pdf-parse brings pdf.js (over 100 MB resident); load it on the first invoice, not at start-up.
  const { PDFParse } = await import('pdf-parse');
  // pdf.js may take ownership of the array it is given, so it gets a copy.
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    return (await parser.getText({ first: MAX_PAGES_READ })).text;
  } catch {
    throw BadRequest('The uploaded PDF could not be read');
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

function safeFilename(name: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = (name ?? '').replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim().slice(0, 200);
  return cleaned || 'invoice.pdf';
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
export async function describeInvoice(file: UploadedFile | undefined) {
  const pdf = await readInvoicePdf(file);
  return {
    success: true,
    message: `Read ${pdf.extracted.items.length} line(s) from the invoice`,
    extractedData: presentExtracted(pdf.extracted),
    file: { filename: pdf.filename, size: pdf.size, sha256: pdf.sha256 },
  };
}
