import type { RequestHandler } from 'express';
import typeis from 'type-is';
import { Forbidden, UnsupportedMediaType } from '../http/errors';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const ACCEPTED_BODIES = ['application/json', 'multipart/form-data'];

/**
 * A state-changing request carried by the session cookie must come from our own origin.
 * Browsers send Sec-Fetch-Site and Origin on such requests; a bearer token is not ambient
 * authority, so bearer requests are exempt.
 */
export function crossSiteGuard(publicUrl: string): RequestHandler {
  const publicOrigin = new URL(publicUrl).origin;
  return (req, _res, next) => {
    if (!STATE_CHANGING.has(req.method) || req.authMethod !== 'session') return next();
    if (req.get('sec-fetch-site') === 'cross-site') return next(Forbidden('Cross-site request refused'));
    const origin = req.get('origin');
    if (origin && origin !== 'null') {
      const requestOrigin = `${req.protocol}://${req.get('host')}`;
      if (origin !== publicOrigin && origin !== requestOrigin) return next(Forbidden('Cross-site request refused'));
    } else if (origin === 'null') {
      return next(Forbidden('Cross-site request refused'));
    }
    next();
  };
}

// type-is counts "Content-Length: 0" as a body; an empty POST (e.g. /paid) is not one.
const hasBody = (req: Parameters<RequestHandler>[0]) => {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
};

/** The API takes JSON (and multipart uploads where documented); anything else is a 415. */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  if (!STATE_CHANGING.has(req.method) || !hasBody(req)) return next();
  if (typeis(req, ACCEPTED_BODIES)) return next();
  next(UnsupportedMediaType());
};
