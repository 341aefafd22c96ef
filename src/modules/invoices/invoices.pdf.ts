import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { BadRequest } from '../../http/errors';
import { memoryUpload } from '../../http/uploads';
import type { ParsedInvoice } from './invoices.parser';
import type { PdfReadResult } from './invoices.pdf-worker';

export const MAX_INVOICE_BYTES = 10 * 1024 * 1024;
/** An invoice is a few pages; reading no more than this keeps a huge document from hogging the process. */
export const MAX_PAGES_READ = 20;

/** Multipart parsing for invoice uploads: at most 10 MB per file (a larger one is a MulterError LIMIT_FILE_SIZE: 413). */
export const invoiceUpload = memoryUpload({ fileSize: MAX_INVOICE_BYTES, files: 2, fields: 20, fieldSize: 64 * 1024 });

export type UploadedFile = { originalname: string; buffer: Buffer; size: number };

export type ReadInvoice = { filename: string; size: number; sha256: string; bytes: Buffer; extracted: ParsedInvoice };

const PDF_MAGIC = Buffer.from('%PDF-');
const EOF_MARKER = Buffer.from('%%EOF');

/**
 * Accepts a file only when it really is a readable PDF: it starts with %PDF-, ends with an
 * %%EOF marker (a cut-off upload does not, though pdf.js would still half-read it) and
 * pdf-parse can extract its text. Anything else is a 400, never a 500. The text is read and
 * parsed in a worker thread; this thread only receives what the parser found.
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
  const extracted = await readInWorker(bytes);
  return {
    filename: safeFilename(file.originalname),
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes,
    extracted,
  };
}

/** At most this many PDFs are read at once per process; more wait in the pool's queue. */
const MAX_CONCURRENT_READS = 2;
/** A document that needs more heap than this ends its worker, not the service (then: 400). */
const READER_HEAP_MB = 512;
/** A document that keeps a reader busy longer than this (waiting included) is given up (then: 400). */
const READ_TIMEOUT_MS = 30_000;

/**
 * The reader's module: its TypeScript source under tsx (development, tests), its compiled file
 * beside the server in the production build (scripts/build.mjs).
 */
const READER = new URL('./invoices.pdf-worker.ts', import.meta.url);
/** A TypeScript reader loads tsx by absolute URL, so that it finds it whatever the service's working directory. */
const readerExecArgv = () =>
  READER.pathname.endsWith('.ts') ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];

let readers: Piscina | undefined;
const readsInFlight = new Set<AbortController>();

/**
 * Worker threads reading PDFs, started on the first invoice and retired after a minute idle
 * (their pdf.js heap goes with them).
 */
function pdfReaders(): Piscina {
  if (!readers) {
    readers = new Piscina({
      filename: READER.href,
      minThreads: 0,
      maxThreads: MAX_CONCURRENT_READS,
      idleTimeout: 60_000,
      execArgv: readerExecArgv(),
      resourceLimits: { maxOldGenerationSizeMb: READER_HEAP_MB },
    });
    // A worker that cannot start reports to the pool, not to the reads waiting for it: fail
    // those as the service's fault (500, logged) rather than leave them hanging.
    readers.on('error', (err: Error) => {
      for (const read of readsInFlight) read.abort(err);
    });
  }
  return readers;
}

class ReadTimedOut extends Error {}

async function readInWorker(bytes: Buffer): Promise<ParsedInvoice> {
  // A copy of the bytes moves to the worker; the upload's own buffer is stored afterwards.
  const data = new Uint8Array(bytes);
  const read = new AbortController();
  const timer = setTimeout(() => read.abort(new ReadTimedOut()), READ_TIMEOUT_MS);
  readsInFlight.add(read);
  let result: PdfReadResult;
  try {
    result = await pdfReaders().run({ data, maxPages: MAX_PAGES_READ }, { transferList: [data.buffer], signal: read.signal });
  } catch (err) {
    if (read.signal.reason instanceof ReadTimedOut) throw BadRequest('The uploaded PDF could not be read in time');
    if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw BadRequest('The uploaded PDF could not be read');
    throw read.signal.aborted ? read.signal.reason : err;
  } finally {
    clearTimeout(timer);
    readsInFlight.delete(read);
  }
  if ('unreadable' in result) throw BadRequest('The uploaded PDF could not be read');
  return result.extracted;
}

function safeFilename(name: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = (name ?? '').replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim().slice(0, 200);
  return cleaned || 'invoice.pdf';
}
