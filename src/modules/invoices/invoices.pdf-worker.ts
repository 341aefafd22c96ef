// Runs in a worker thread of the PDF reader pool (invoices.pdf.ts): pdf.js is CPU- and
// memory-hungry, and so is reading an invoice's lines out of its text; here neither blocks the
// event loop that serves the counter, nor keeps its heap in the main thread once the worker
// retires. The main thread receives only what the parser read, never the text.
import type { MessagePort } from 'node:worker_threads';
import { constants, inflateSync } from 'node:zlib';
import { PDFParse } from 'pdf-parse';
import { parseInvoiceText, type ParsedInvoice } from './invoices.parser';

export type PdfReadResult =
  { extracted: ParsedInvoice } | { readable: true } | { unreadable: string } | { tooLarge: true };

/** `invoice`: read the text and parse it as an invoice; `check`: only read the text (any PDF, e.g. a safety data sheet). */
export type PdfReadTask = {
  data: Uint8Array;
  /** Told when the reading starts, so that its time limit counts the reading and not the worker's start. */
  started: MessagePort;
  maxPages: number;
  maxInflatedBytes: number;
  purpose?: 'invoice' | 'check';
};

/**
 * What the parser reads from the text of the first pages (or, to check a PDF, only that they can
 * be read); a document pdf.js refuses is a result (the file's fault), not an error, and so is one
 * whose streams inflate beyond the bound.
 */
export default async function readPdfInvoice({
  data,
  started,
  maxPages,
  maxInflatedBytes,
  purpose = 'invoice',
}: PdfReadTask): Promise<PdfReadResult> {
  started.postMessage('reading');
  started.close();
  if (inflatesBeyond(Buffer.from(data.buffer, data.byteOffset, data.byteLength), maxInflatedBytes))
    return { tooLarge: true };
  const parser = new PDFParse({ data });
  let text: string;
  try {
    text = (await parser.getText({ first: maxPages })).text;
  } catch (err) {
    return { unreadable: err instanceof Error ? err.message : String(err) };
  } finally {
    await parser.destroy().catch(() => undefined);
  }
  return purpose === 'check' ? { readable: true } : { extracted: parseInvoiceText(text) };
}

const STREAM = Buffer.from('stream');
const END_STREAM = Buffer.from('endstream');
const IMAGE = /\/Subtype\s*\/Image\b/;

/**
 * Whether the document's deflated streams (page contents, fonts, object streams: what reading
 * its text inflates) add up to more than `budget` bytes. pdf.js has no such bound, and a few
 * hundred KB of deflated zeros keep it busy for many seconds; zlib stops at the bound instead.
 * Images are skipped (reading text does not decode them), a stream deflated twice is counted
 * twice, and a stream that is not zlib data is pdf.js's to judge.
 */
function inflatesBeyond(pdf: Buffer, budget: number): boolean {
  let remaining = budget;
  let at = pdf.indexOf(STREAM);
  while (at !== -1) {
    const isEnd = at >= 3 && pdf.toString('latin1', at - 3, at) === 'end';
    const dataStart = pdf[at + STREAM.length] === 0x0d ? at + STREAM.length + 2 : at + STREAM.length + 1;
    const end = isEnd ? -1 : pdf.indexOf(END_STREAM, dataStart);
    if (!isEnd && end !== -1) {
      const dictionary = pdf.toString('latin1', Math.max(0, pdf.lastIndexOf('obj', at)), at);
      if (!IMAGE.test(dictionary)) {
        let layer = pdf.subarray(dataStart, end);
        while (isZlib(layer)) {
          try {
            layer = inflateSync(layer, { maxOutputLength: remaining + 1, finishFlush: constants.Z_SYNC_FLUSH });
          } catch (err) {
            if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return true;
            break;
          }
          remaining -= layer.length;
          if (remaining < 0) return true;
        }
      }
      at = pdf.indexOf(STREAM, end + END_STREAM.length);
    } else {
      at = pdf.indexOf(STREAM, at + STREAM.length);
    }
  }
  return false;
}

/** A zlib header: deflate (CM 8) with a check value that makes the first two bytes a multiple of 31. */
const isZlib = (bytes: Buffer) =>
  bytes.length >= 2 && (bytes[0] & 0x0f) === 8 && ((bytes[0] << 8) | bytes[1]) % 31 === 0;
