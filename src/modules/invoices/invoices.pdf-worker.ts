// Runs in a worker thread of the PDF reader pool (invoices.pdf.ts): pdf.js is CPU- and
// memory-hungry, and here it neither blocks the event loop that serves the counter nor keeps
// its heap in the main thread once the worker retires.
import { PDFParse } from 'pdf-parse';

export type PdfTextResult = { text: string } | { unreadable: string };

/** The text of the first pages; a document pdf.js refuses is a result (the file's fault), not an error. */
export default async function extractPdfText({ data, maxPages }: { data: Uint8Array; maxPages: number }): Promise<PdfTextResult> {
  const parser = new PDFParse({ data });
  try {
    return { text: (await parser.getText({ first: maxPages })).text };
  } catch (err) {
    return { unreadable: err instanceof Error ? err.message : String(err) };
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}
