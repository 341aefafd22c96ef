import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger';

/** A caller's X-Request-Id is kept when it is a plain token; anything else (spaces, control characters, too long) is replaced. */
const ACCEPTED_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** Query parameters that carry a secret: the OIDC callback's code and state, and tokens or keys a client puts in a URL. */
const SECRET_QUERY_PARAMS = /^(code|state|token|access_token|id_token|key|api_key|password|secret)$/i;

function requestId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && ACCEPTED_REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

function urlWithoutSecrets(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) return url;
  const params = new URLSearchParams(url.slice(query + 1));
  let changed = false;
  for (const name of new Set(params.keys())) {
    if (SECRET_QUERY_PARAMS.test(name)) {
      params.set(name, '[redacted]');
      changed = true;
    }
  }
  return changed ? `${url.slice(0, query)}?${params}` : url;
}

/**
 * The request log: one line per answered request (not /health), each with the request's id,
 * which is also the X-Request-Id answer header and is bound to `req.log` as `requestId`, so what
 * a handler or the error middleware logs for a request can be found with it.
 */
export function requestLogger(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: requestId,
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'requestId' },
    autoLogging: { ignore: (req) => req.url === '/health' },
    serializers: {
      req: (req: { url: string; query?: unknown }) => {
        req.url = urlWithoutSecrets(req.url);
        delete req.query;
        return req;
      },
    },
  });
}
