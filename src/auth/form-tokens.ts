import type { RequestHandler } from 'express';
import { csrfSync } from 'csrf-sync';
import typeis from 'type-is';

// The synchroniser token lives in the PostgreSQL session; forms send it as _csrf, htmx as a header.
const { csrfSynchronisedProtection, generateToken } = csrfSync({
  getTokenFromRequest: (req) =>
    (req.body?._csrf as string | undefined) ?? (req.headers['x-csrf-token'] as string | undefined),
  errorConfig: {
    statusCode: 403,
    message: 'The form has expired or did not come from this site; reload the page and try again',
    code: 'EBADCSRFTOKEN',
  },
});

export const csrfProtection: RequestHandler = csrfSynchronisedProtection;

/** Every page's token check, except multipart bodies: pageUpload checks those once multer has read them. */
export const pageCsrf: RequestHandler = (req, res, next) =>
  typeis(req, ['multipart']) ? next() : csrfSynchronisedProtection(req, res, next);

export { generateToken as csrfToken };
