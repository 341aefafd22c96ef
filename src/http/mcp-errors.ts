import type { Request } from 'express';
import { HttpError } from './errors';

/** The MCP surface's error codes: the spec's four, and one per other status it can answer. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'MCP_INVALID_REQUEST',
  401: 'MCP_AUTH_REQUIRED',
  403: 'MCP_FORBIDDEN',
  404: 'MCP_NOT_FOUND',
  405: 'MCP_METHOD_NOT_ALLOWED',
  409: 'MCP_CONFLICT',
  413: 'MCP_INVALID_REQUEST',
  415: 'MCP_INVALID_REQUEST',
  429: 'MCP_RATE_LIMITED',
  503: 'MCP_UNAVAILABLE',
};

export const McpAuthRequired = () =>
  new HttpError(401, 'An MCP API key is required: send Authorization: Bearer <MCP_API_KEY>', {
    code: 'MCP_AUTH_REQUIRED',
  });
export const McpAuthInvalid = (message = 'The MCP API key is unknown, revoked or expired') =>
  new HttpError(401, message, { code: 'MCP_AUTH_INVALID' });
export const McpRateLimited = (limit: string, retryAfterSeconds: number) =>
  new HttpError(429, `Rate limit exceeded: ${limit}. Retry in ${retryAfterSeconds} s`, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
    code: 'MCP_RATE_LIMITED',
  });
export const McpTestRunning = (executionId: string) =>
  new HttpError(409, `A test run is already in progress (execution ${executionId})`, { code: 'MCP_TEST_RUNNING' });

const MCP_CLIENT_PATH = /^\/(api\/mcp\/(status|test|sales|inventory)(\/|$)|mcp(\/|$))/;

/** Whether the request is for a route that only an MCP key opens (the MCP client routes and /mcp), wherever the middleware asking is mounted. */
export const isMcpClientRoute = (req: Request): boolean => MCP_CLIENT_PATH.test(`${req.baseUrl}${req.path}`);

/**
 * Errors take the MCP format on the MCP client routes and /mcp, and wherever a request came with
 * an MCP key: a machine client always reads one format. Everything else keeps the API's format.
 */
export function usesMcpErrors(req: Request): boolean {
  return isMcpClientRoute(req) || /^Bearer\s+mcp_/i.test(req.get('authorization') ?? '') || req.mcpKey !== undefined;
}

/** {error: {code, message, timestamp}}; a refused field's messages make the message. */
export function mcpErrorBody(
  err: unknown,
  status: number,
  body: { message?: unknown; errors?: { field: string; message: string }[] },
) {
  const code = (err instanceof HttpError && err.code) || CODE_BY_STATUS[status] || 'MCP_INTERNAL_ERROR';
  const fields = body.errors?.map((e) => `${e.field} ${e.message}`).join('; ');
  const message = fields ? `${String(body.message)}: ${fields}` : String(body.message);
  return { error: { code, message, timestamp: new Date().toISOString() } };
}
