import type { RequestHandler } from 'express';
import type multer from 'multer';

type Multer = typeof multer;

let loading: Promise<Multer> | undefined;
let loaded: Multer | undefined;
const loadMulter = () => (loading ??= import('multer').then(({ default: module }) => (loaded = module)));

/**
 * Multipart bodies read into memory by multer (the bytes go to PostgreSQL, never to local disk).
 * multer loads on the first upload, so the idle server does not hold it (ARCHITECTURE: a heavy
 * library used by a few routes).
 */
export function memoryUpload(limits: multer.Options['limits']) {
  const middleware = (pick: (upload: multer.Multer) => RequestHandler): RequestHandler => {
    let handler: Promise<RequestHandler> | undefined;
    return (req, res, next) => {
      handler ??= loadMulter().then((load) => pick(load({ storage: load.memoryStorage(), limits })));
      handler.then((handle) => handle(req, res, next), next);
    };
  };
  return {
    single: (field: string) => middleware((upload) => upload.single(field)),
    fields: (fields: readonly multer.Field[]) => middleware((upload) => upload.fields(fields)),
  };
}

/** An upload refused by multer (too large, too many files or fields, an unexpected field); only an upload can raise one. */
export const isUploadError = (err: unknown): err is multer.MulterError =>
  loaded !== undefined && err instanceof loaded.MulterError;
