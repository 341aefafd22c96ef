import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { ZodError } from 'zod';
import type { Logger } from '../logger';
import { HttpError, NotFound } from './errors';
import { mcpErrorBody, usesMcpErrors } from './mcp-errors';
import { validationErrors } from './validate';
import { isUploadError } from './uploads';
import { BUSY_PG_CODES } from '../db/transaction';

type PgError = Error & { code?: string; detail?: string; constraint?: string };

const PG_CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  '23505': { status: 409, message: 'A record with these values already exists' },
  '23503': { status: 409, message: 'The record is referenced by other records or references a missing one' },
  '23514': { status: 400, message: 'The values break a data rule' },
  '22P02': { status: 400, message: 'Invalid value in request' },
  '22003': { status: 400, message: 'A number in the request is out of range' },
  '22001': { status: 400, message: 'A value in the request is too long' },
  '22007': { status: 400, message: 'Invalid date in request' },
  '22008': { status: 400, message: 'Date out of range in request' },
  // a NUL character in text (22021) or jsonb (22P05) that reached the database another way than a JSON body
  '22021': { status: 400, message: 'Text in the request must not contain a NUL character' },
  '22P05': { status: 400, message: 'Text in the request must not contain a NUL character' },
};
/**
 * The database cannot be reached or is going away: a refused, reset or timed-out connection; a
 * host name that does not resolve, for good or for now (a DNS name being moved in a failover); an
 * administrator's shutdown or a server not yet accepting connections (57P01-57P03); a connection
 * failure (08xxx), PgBouncer's own errors included: it answers every one of them with 08P01 ("server
 * login has been failing", "query_wait_timeout", "no more connections allowed", issue 44); and too
 * many connections (53300); a write that reached a read-only server (25006): a standby, or a primary
 * demoted in a failover before PgBouncer is re-pointed, where the same request succeeds once it is.
 */
const DB_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08P01',
  '53300',
  '25006',
]);
/**
 * How long a client is asked to wait before trying again after the database was unavailable (s):
 * short enough that a client obeying it is back within issue 44's 5 s of a new primary accepting
 * writes after a failover (5 s had counters that got their 503 just before the promotion come
 * back only after those 5 s).
 */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;
/** The answer while the database cannot be reached (the words the operations guide and clients already know). */
export const DATABASE_UNAVAILABLE_MESSAGE = 'Service temporarily unavailable';
/**
 * A lost connection reported by node-postgres without a code, as it is or as knex's failed
 * ROLLBACK of a transaction whose connection is gone ("ROLLBACK - Connection terminated
 * unexpectedly", "... Client has encountered a connection error and is not queryable"), a pool
 * that found no connection in time: knex's, and pg-pool's (the session store's), and a connection
 * not opened within its connect timeout, which knex's pool passes on as node-postgres words it
 * ("timeout expired": e.g. PgBouncer holding a login until it has a server connection, issue 44).
 */
const DB_UNAVAILABLE_MESSAGE =
  /Knex: Timeout acquiring a connection|timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|^timeout expired$/;

/** Whether the error says the database could not be reached or the connection was lost (503), rather than what the request did. */
export const isDatabaseUnavailable = (err: unknown): boolean => {
  const e = err as { code?: string; message?: string } | null;
  return Boolean(e && ((e.code && DB_UNAVAILABLE.has(e.code)) || DB_UNAVAILABLE_MESSAGE.test(e.message ?? '')));
};

/**
 * The database errors this middleware answers 503 (unreachable, connection lost, busy): a route that
 * turns other failures into its own documented 500 lets these through.
 */
export const isTransientDatabaseError = (err: unknown): boolean =>
  isDatabaseUnavailable(err) || BUSY_PG_CODES.has((err as { code?: string } | null)?.code ?? '');

/** The one place that turns any thrown error into the spec's error format, or into a page for the pages. */
export function errorMiddleware(logger: Logger, exposeDetail: boolean): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    const { status, body, headers } = describeError(err, req, logger, exposeDetail);
    if (err instanceof HttpError && err.headers) res.set(err.headers);
    if (headers) res.set(headers);
    if (status === 401) res.set('WWW-Authenticate', bearerChallenge(req));
    if (usesMcpErrors(req)) return res.status(status).json(mcpErrorBody(err, status, body));
    if (!res.locals.isPage) return res.status(status).json(body);
    const message = String(body.message);
    // htmx: the message goes into the page's alert region, the rest of the page stays as it was
    if (req.get('HX-Request') === 'true') {
      return res
        .status(status)
        .set({ 'HX-Retarget': '#alerts', 'HX-Reswap': 'innerHTML' })
        .render('partials/_alert', { message });
    }
    // an error before the page's own locals were set (the session store could not reach the database) still gets the layout
    const { locals } = res;
    res.status(status).render('error', {
      currentUser: locals.currentUser ?? null,
      currentPath: locals.currentPath ?? req.path,
      nav: locals.nav ?? [],
      csrfToken: locals.csrfToken ?? '',
      flash: locals.flash ?? null,
      title: ERROR_TITLES[status] ?? 'Something went wrong',
      status,
      message,
    });
  };
}

/**
 * The challenge of a 401 (RFC 6750): a client reads that a bearer credential is expected here, with no
 * OAuth to discover, and that a credential it sent was refused (invalid_token) rather than missing.
 */
const bearerChallenge = (req: Request) =>
  /^Bearer\s/i.test(req.get('authorization') ?? '')
    ? 'Bearer realm="stores", error="invalid_token"'
    : 'Bearer realm="stores"';

const ERROR_TITLES: Record<number, string> = { 403: 'Not allowed', 404: 'Not found', 503: 'Temporarily unavailable' };

/** A deadlock, serialization failure, lock timeout or statement timeout that reached here (retries spent, or a path without them). */
export const DATABASE_BUSY_MESSAGE = 'The database was busy; nothing was saved — try again';

function describeError(
  err: unknown,
  req: Request,
  logger: Logger,
  exposeDetail: boolean,
): { status: number; body: Record<string, unknown>; headers?: Record<string, string> } {
  const answer = (status: number, body: Record<string, unknown>) => ({ status, body });
  if (err instanceof HttpError) return answer(err.status, { message: err.message, ...err.details });
  if (err instanceof ZodError) return answer(400, { message: 'Validation failed', errors: validationErrors(err) });
  if (isUploadError(err)) {
    if (err.code === 'LIMIT_FILE_SIZE') return answer(413, { message: 'File too large' });
    return answer(400, { message: `Invalid upload: ${err.message}` });
  }
  const e = err as PgError & { type?: string; status?: number; expose?: boolean };
  // the router could not decode a path parameter (%ED%A0%80 is no UTF-8): it marks the URIError 400 but not for exposure
  if (err instanceof URIError && e.status === 400) {
    return answer(400, {
      message: 'Validation failed',
      errors: [{ field: '(path)', message: 'must be valid percent-encoded UTF-8' }],
    });
  }
  if (e.type === 'entity.parse.failed') return answer(400, { message: 'Malformed JSON in request body' });
  if (e.type === 'entity.too.large') return answer(413, { message: 'Request body too large' });
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    // a library's unexposed 4xx keeps its status in our words: serve-static's missing file is a 404 whose message is the file's path
    return answer(e.status, { message: e.expose ? e.message : e.status === 404 ? 'Not found' : 'Request refused' });
  }
  if (e.code && PG_CLIENT_ERRORS[e.code]) {
    const known = PG_CLIENT_ERRORS[e.code];
    return answer(
      known.status,
      exposeDetail && e.detail ? { message: known.message, error: e.detail } : { message: known.message },
    );
  }
  if (e.code && BUSY_PG_CODES.has(e.code)) {
    // the transaction was rolled back whole: nothing of this request is saved
    logger.warn({ err: e, method: req.method, path: req.path, code: e.code }, 'database busy');
    return { status: 503, body: { message: DATABASE_BUSY_MESSAGE }, headers: { 'Retry-After': '1' } };
  }
  if (isDatabaseUnavailable(e)) {
    logger.warn({ err: e, method: req.method, path: req.path, code: e.code }, 'database unavailable');
    return {
      status: 503,
      body: { message: DATABASE_UNAVAILABLE_MESSAGE },
      headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
    };
  }
  logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
  return answer(
    500,
    exposeDetail ? { message: 'Internal server error', error: e.message } : { message: 'Internal server error' },
  );
}

export const apiNotFound: RequestHandler = (req, _res, next) => {
  next(NotFound(`No route for ${req.method} ${req.baseUrl}${req.path}`));
};
