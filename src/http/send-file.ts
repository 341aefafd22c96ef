import type { Response } from 'express';
import type { FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';

/** Streams an opened file as a download; a client that goes away mid-download is not an error. */
export async function sendFileDownload(res: Response, file: { handle: FileHandle; size: number; name: string; contentType: string }): Promise<void> {
  res.attachment(file.name).type(file.contentType).set('Content-Length', String(file.size));
  try {
    await pipeline(file.handle.createReadStream(), res);
  } catch (err) {
    if (!res.destroyed) throw err;
  }
}
