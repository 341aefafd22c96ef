import type { Response } from 'express';
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';

/** Streams an opened file as a download; a client that goes away mid-download is not an error. */
export async function sendFileDownload(res: Response, file: { handle: FileHandle; size: number; name: string; contentType: string }): Promise<void> {
  res.attachment(file.name).type(file.contentType).set('Content-Length', String(file.size));
  try {
    await pipeline(file.handle.createReadStream(), res);
  } catch (err) {
    if (!res.destroyed) throw err;
  }
}

/** Streams records as a CSV download with a header row, with backpressure from the socket; a client that goes away mid-download is not an error. */
export async function sendCsvDownload(res: Response, file: { name: string; columns: string[]; records: AsyncIterable<unknown[]> }): Promise<void> {
  res.status(200).set({ 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="${file.name}"`, 'Cache-Control': 'no-store' });
  try {
    await pipeline(Readable.from(file.records), stringify({ header: true, columns: file.columns }), res);
  } catch (err) {
    if (!res.destroyed) throw err;
  }
}
