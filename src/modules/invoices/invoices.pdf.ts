import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { BadRequest, TooManyRequests, Unprocessable } from '../../http/errors';
import { memoryUpload } from '../../http/uploads';
import type { ParsedInvoice } from './invoices.parser';
import type { PdfReadResult, PdfReadTask } from './invoices.pdf-worker';

export const MAX_INVOICE_BYTES = 10 * 1024 * 1024;
/** An invoice is a few pages; reading no more than this keeps a huge document from hogging the process. */
export const MAX_PAGES_READ = 20;

/** Multipart parsing for invoice uploads: at most 10 MB per file (a larger one is a MulterError LIMIT_FILE_SIZE: 413). */
export const invoiceUpload = memoryUpload({ fileSize: MAX_INVOICE_BYTES, files: 2, fields: 20, fieldSize: 64 * 1024 });

export type UploadedFile = { originalname: string; buffer: Buffer; size: number };

/** An uploaded file that passed the PDF checks: its safe name, size, SHA-256 and bytes. */
export type CheckedPdf = { filename: string; size: number; sha256: string; bytes: Buffer };

export type ReadInvoice = CheckedPdf & { extracted: ParsedInvoice };

const PDF_MAGIC = Buffer.from('%PDF-');
const EOF_MARKER = Buffer.from('%%EOF');

/** Who the reading is for (their readings are taken one at a time), and, for a test, a shorter time bound. */
export type ReadOptions = { readBy: string; timeLimitMs?: number };

/**
 * Accepts a file only when it really is a readable PDF: it starts with %PDF-, ends with an
 * %%EOF marker (a cut-off upload does not, though pdf.js would still half-read it) and
 * pdf-parse can extract its text. Anything else is a 400, never a 500; a document over the
 * bounds of a reading (its first pages, what its streams inflate to, its time, its heap) is a
 * 422. The text is read and parsed in a worker thread; this thread only receives what the
 * parser found.
 */
export async function readInvoicePdf(
  file: UploadedFile | undefined,
  { readBy, timeLimitMs = READ_TIME_LIMIT_MS }: ReadOptions,
): Promise<ReadInvoice> {
  if (!file) throw BadRequest("No file uploaded: send the PDF in the multipart field 'invoice'");
  const pdf = checkPdfBytes(file, 'invoice.pdf');
  const extracted = await inTurn(readBy, 'invoices', () =>
    withReaderSlot(() => readInWorker(pdf.bytes, timeLimitMs, 'invoice')),
  );
  if (!extracted) throw new Error('The PDF reader answered an invoice reading without the invoice');
  return { ...pdf, extracted };
}

/**
 * Any uploaded PDF that is not read as an invoice (a safety data sheet) passes the same checks as
 * an invoice, in the same reader pool and under the same bounds: it starts with %PDF-, ends with
 * %%EOF, its streams inflate within the bound and pdf.js can read the text of its first pages
 * (400 otherwise, 422 over the bounds, 429 for a fourth at once by one person). Nothing is parsed
 * out of it. `fallbackName` names a file uploaded without a name.
 */
export async function checkUploadedPdf(
  file: UploadedFile,
  { readBy, timeLimitMs = READ_TIME_LIMIT_MS, fallbackName }: ReadOptions & { fallbackName: string },
): Promise<CheckedPdf> {
  const pdf = checkPdfBytes(file, fallbackName);
  await inTurn(readBy, 'PDFs', () => withReaderSlot(() => readInWorker(pdf.bytes, timeLimitMs, 'check')));
  return pdf;
}

/** The checks on the bytes themselves (a PDF's header and end marker), before any reading. */
function checkPdfBytes(file: UploadedFile, fallbackName: string): CheckedPdf {
  const bytes = file.buffer;
  if (bytes.length < PDF_MAGIC.length || !bytes.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) {
    throw BadRequest('The uploaded file is not a PDF');
  }
  if (bytes.subarray(Math.max(0, bytes.length - 2048)).indexOf(EOF_MARKER) === -1) {
    throw BadRequest('The uploaded PDF is incomplete or damaged');
  }
  return {
    filename: safeFilename(file.originalname, fallbackName),
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes,
  };
}

/** At most this many PDFs are read at once per process; more wait their turn, untimed until they start. */
const MAX_CONCURRENT_READS = 2;
/** A document that needs more heap than this ends its worker, not the service (then: 422). */
const READER_HEAP_MB = 512;
/** A reading that runs longer than this is given up and its worker ended (then: 422). */
export const READ_TIME_LIMIT_MS = 10_000;
/** What a document's deflated streams may inflate to in all: an invoice's pages and fonts are a few MB (then: 422). */
const MAX_INFLATED_BYTES = 100 * 1024 * 1024;
/** A person's readings are taken one at a time; this many at once (the one being read included) and the next is 429. */
const MAX_READS_PER_READER = 3;

const TOO_LARGE = 'The PDF is too large or too complex to read';
const UNREADABLE = 'The uploaded PDF could not be read';

/**
 * The reader's module: its TypeScript source under tsx (development, tests), its compiled file
 * beside the server in the production build (scripts/build.mjs).
 */
const READER = new URL('./invoices.pdf-worker.ts', import.meta.url);
/** A TypeScript reader loads tsx by absolute URL, so that it finds it whatever the service's working directory. */
const readerExecArgv = () =>
  READER.pathname.endsWith('.ts')
    ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href]
    : [];

let readers: Promise<Piscina> | undefined;
const readsInFlight = new Set<AbortController>();

/**
 * Worker threads reading PDFs, started on the first invoice and retired after a minute idle
 * (their pdf.js heap goes with them). Piscina itself loads with the first invoice too.
 */
function pdfReaders(): Promise<Piscina> {
  readers ??= import('piscina').then(({ Piscina }) => {
    const pool = new Piscina({
      filename: READER.href,
      minThreads: 0,
      maxThreads: MAX_CONCURRENT_READS,
      idleTimeout: 60_000,
      execArgv: readerExecArgv(),
      resourceLimits: { maxOldGenerationSizeMb: READER_HEAP_MB },
    });
    // A worker that cannot start reports to the pool, not to the reads waiting for it: fail
    // those as the service's fault (500, logged) rather than leave them hanging.
    pool.on('error', (err: Error) => {
      for (const read of readsInFlight) read.abort(err);
    });
    return pool;
  });
  return readers;
}

/** The readings each person has started and not finished, and the end of the last one (the next starts after it). */
const turns = new Map<string, { count: number; last: Promise<unknown> }>();

/**
 * Runs a person's reading after the ones they already started, so one person's documents hold
 * at most one of the pool's readers and the others stay free for everyone else.
 */
function inTurn<T>(readBy: string, what: 'invoices' | 'PDFs', read: () => Promise<T>): Promise<T> {
  const turn = turns.get(readBy) ?? { count: 0, last: Promise.resolve() };
  if (turn.count >= MAX_READS_PER_READER) {
    throw TooManyRequests(`Three of your ${what} are already being read: try again when they are done`, 5);
  }
  turn.count += 1;
  turns.set(readBy, turn);
  const mine = turn.last.then(read);
  turn.last = mine.catch(() => undefined);
  return mine.finally(() => {
    turn.count -= 1;
    if (turn.count === 0) turns.delete(readBy);
  });
}

/** The pool's readers as slots: a reading's time starts when it has one, not while it waits. */
let freeSlots = MAX_CONCURRENT_READS;
const waitingForSlot: (() => void)[] = [];
async function withReaderSlot<T>(read: () => Promise<T>): Promise<T> {
  if (freeSlots > 0) freeSlots -= 1;
  else await new Promise<void>((resolve) => waitingForSlot.push(resolve));
  try {
    return await read();
  } finally {
    const next = waitingForSlot.shift();
    if (next) next();
    else freeSlots += 1;
  }
}

class ReadTimedOut extends Error {}

/** The invoice read from the bytes (purpose 'invoice'), or null once they are found readable (purpose 'check'). */
async function readInWorker(
  bytes: Buffer,
  timeLimitMs: number,
  purpose: 'invoice' | 'check',
): Promise<ParsedInvoice | null> {
  // A copy of the bytes moves to the worker; the upload's own buffer is stored afterwards.
  const data = new Uint8Array(bytes);
  const pool = await pdfReaders();
  const read = new AbortController();
  // The clock starts when the worker starts reading: a worker started for this reading first
  // loads pdf.js (and, under tsx, compiles its source), which on a busy machine takes seconds
  // that are not the document's. Aborting a running task terminates its worker thread
  // (piscina), so a reading over its time stops using CPU and memory instead of running on unheard.
  const { port1: startedReading, port2: started } = new MessageChannel();
  let timer: NodeJS.Timeout | undefined;
  startedReading.once('message', () => {
    startedReading.close();
    if (readsInFlight.has(read)) timer = setTimeout(() => read.abort(new ReadTimedOut()), timeLimitMs);
  });
  readsInFlight.add(read);
  let result: PdfReadResult;
  try {
    const task: PdfReadTask = {
      data,
      started,
      maxPages: MAX_PAGES_READ,
      maxInflatedBytes: MAX_INFLATED_BYTES,
      purpose,
    };
    result = await pool.run(task, { transferList: [data.buffer, started], signal: read.signal });
  } catch (err) {
    if (read.signal.reason instanceof ReadTimedOut) throw Unprocessable(TOO_LARGE);
    if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw Unprocessable(TOO_LARGE);
    throw read.signal.aborted ? read.signal.reason : err;
  } finally {
    clearTimeout(timer);
    startedReading.close();
    readsInFlight.delete(read);
  }
  if ('tooLarge' in result) throw Unprocessable(TOO_LARGE);
  if ('unreadable' in result) throw BadRequest(UNREADABLE);
  return 'extracted' in result ? result.extracted : null;
}

function safeFilename(name: string | undefined, fallback: string): string {
  const cleaned = (name ?? '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f/\\]/g, '_')
    .trim()
    .slice(0, 200);
  return cleaned || fallback;
}
