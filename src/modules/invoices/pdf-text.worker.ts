// Runs in a worker thread of the PDF reader pool (invoice-pdf.ts): pdf.js is CPU- and
// memory-hungry, and here it neither blocks the event loop that serves the counter nor keeps
// its heap in the main thread once the worker retires.
import { PDFParse } from 'pdf-parse';

export default async function extractPdfText({ data, maxPages }: { data: Uint8Array; maxPages: number }): Promise<string> {
  const parser = new PDFParse({ data });
  try {
    return (await parser.getText({ first: maxPages })).text;
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}
