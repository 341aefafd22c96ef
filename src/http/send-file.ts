import { once } from 'node:events';
import type { Worksheet } from 'exceljs';
import type { Writable } from 'node:stream';
import type { Response } from 'express';
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Streams an opened file as a download; a client that goes away mid-download is not an error. */
export async function sendFileDownload(
  res: Response,
  file: { handle: FileHandle; size: number; name: string; contentType: string },
): Promise<void> {
  res.attachment(file.name).type(file.contentType).set('Content-Length', String(file.size));
  try {
    await pipeline(file.handle.createReadStream(), res);
  } catch (err) {
    if (!res.destroyed) throw err;
  }
}

/**
 * Streams records as a CSV download with a header row, with backpressure from the socket; a client
 * that goes away mid-download is not an error. UTF-8 with a byte order mark: without it Excel reads
 * the file in the machine's legacy code page ("Âµl" for "µl").
 */
export async function sendCsvDownload(
  res: Response,
  file: { name: string; columns: string[]; records: AsyncIterable<unknown[]> },
): Promise<void> {
  const { stringify } = await import('csv-stringify');
  res.status(200).set({
    'Content-Type': 'text/csv; charset=utf-8',
    'Content-Disposition': `attachment; filename="${file.name}"`,
    'Cache-Control': 'no-store',
  });
  try {
    await pipeline(Readable.from(file.records), stringify({ bom: true, header: true, columns: file.columns }), res);
  } catch (err) {
    if (!res.destroyed) throw err;
  }
}

/**
 * exceljs hands the sheet XML to its zip without backpressure, so rows written faster than
 * they are deflated would pile up in memory. Its sheet stream pipes into one PassThrough (the
 * zip entry's input); waiting for that to drain gives the chain backpressure from the socket.
 */
export async function xlsxCaughtUp(sheet: Worksheet, res: Response): Promise<void> {
  // the PassThrough comes from readable-stream 2 (archiver), hence _writableState
  const input = (
    sheet as unknown as { _stream?: { pipes?: (Writable & { _writableState?: { needDrain: boolean } })[] } }
  )._stream?.pipes?.[0];
  if (!input?._writableState?.needDrain || res.destroyed) return;
  const stop = new AbortController();
  try {
    await Promise.race([once(input, 'drain', { signal: stop.signal }), once(res, 'close', { signal: stop.signal })]);
  } finally {
    stop.abort();
  }
}
