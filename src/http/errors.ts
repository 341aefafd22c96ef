export class HttpError extends Error {
  /** extra fields merged into the response body, e.g. {reasons} for a refused delete */
  readonly details?: Record<string, unknown>;
  /** response headers that go with the error, e.g. Retry-After */
  readonly headers?: Record<string, string>;
  /** the machine-readable code of the MCP error format, where the status alone does not say it */
  readonly code?: string;

  constructor(
    readonly status: number,
    message: string,
    {
      details,
      headers,
      code,
    }: { details?: Record<string, unknown>; headers?: Record<string, string>; code?: string } = {},
  ) {
    super(message);
    this.details = details;
    this.headers = headers;
    this.code = code;
  }
}

export const BadRequest = (message: string, details?: Record<string, unknown>) =>
  new HttpError(400, message, { details });
export const Unauthorized = (message = 'Authentication required') => new HttpError(401, message);
export const Forbidden = (message = 'Insufficient permissions') => new HttpError(403, message);
export const NotFound = (message = 'Not found') => new HttpError(404, message);
export const Conflict = (message: string, details?: Record<string, unknown>) =>
  new HttpError(409, message, { details });
export const Unprocessable = (message: string) => new HttpError(422, message);
export const UnsupportedMediaType = (message = 'Content-Type must be application/json') => new HttpError(415, message);
export const TooManyRequests = (message = 'Too many requests, try again later', retryAfterSeconds?: number) =>
  new HttpError(429, message, {
    headers: retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : undefined,
  });
export const InternalError = (message: string) => new HttpError(500, message);
export const ServiceUnavailable = (message: string) => new HttpError(503, message);
