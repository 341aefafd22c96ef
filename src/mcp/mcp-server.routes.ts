import { Router, type RequestHandler, type Response } from 'express';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from 'zod';
import type { Deps } from '../deps';
import { currentMcpKey } from '../auth/guards';
import { MCP_LIMITS } from '../auth/mcp-limits';
import { ApiRouter } from '../http/api-router';
import { actorOf } from '../modules/audit/audit.actor';
import { BadRequest, Forbidden, HttpError } from '../http/errors';
import { McpRateLimited } from '../http/mcp-errors';
import { McpErrorBody } from '../http/openapi';
import { JsonRpcAnswer, JsonRpcBody, JsonRpcError, MCP_BATCH_LIMIT } from './mcp-server.schemas';

/** The MCP SDK and the tools load on the first POST /mcp: kept out of start-up, they leave some 8 MB out of an idle server. */
let mcpModules:
  | Promise<[typeof import('./mcp-tools'), typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')]>
  | undefined;
const loadMcp = () =>
  (mcpModules ??= Promise.all([import('./mcp-tools'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]));

/** The transport is stateless: no session to resume (GET) or end (DELETE). */
const postOnly: RequestHandler = (req, _res, next) => {
  next(
    new HttpError(
      405,
      `${req.method} /mcp is not supported: this MCP server is stateless, send each JSON-RPC message with POST`,
      { headers: { Allow: 'POST' } },
    ),
  );
};

/**
 * The Streamable HTTP transport asks the server to check Origin against DNS rebinding: a browser page
 * may talk to /mcp only from this service's own origin. A request without Origin is not a browser's.
 */
const ownOriginOnly = (publicUrl: string): RequestHandler => {
  const publicOrigin = new URL(publicUrl).origin;
  return (req, _res, next) => {
    const origin = req.get('origin');
    next(
      origin === undefined || origin === publicOrigin
        ? undefined
        : Forbidden(`Origin '${origin}' refused: a browser may call /mcp only from ${publicOrigin}`),
    );
  };
};

/** The JSON-RPC error code of a call refused for the key's allowance (the implementation-defined server-error range). */
const RATE_LIMITED_RPC_CODE = -32029;

/**
 * Past the first `allowed` messages of the body (in their order, the order the transport hands
 * them on), a request is answered with an MCP_RATE_LIMITED JSON-RPC error instead of reaching the
 * server, and a notification is dropped; the answer carries Retry-After.
 */
function refusePast(transport: Transport, allowed: number, refusal: HttpError, res: Response) {
  const deliver = transport.onmessage;
  let handed = 0;
  res.setHeader('Retry-After', refusal.headers!['Retry-After']);
  transport.onmessage = (message, extra) => {
    if (handed++ < allowed) return deliver?.(message, extra);
    if (!('method' in message) || !('id' in message)) return;
    const answer = {
      jsonrpc: '2.0' as const,
      id: message.id,
      error: { code: RATE_LIMITED_RPC_CODE, message: refusal.message, data: { code: refusal.code } },
    };
    transport.send(answer).catch((err: unknown) => res.req.log?.warn({ err }, 'MCP rate-limit answer not sent'));
  };
}

/**
 * POST /mcp: the Model Context Protocol server (Streamable HTTP, stateless) for MCP API keys. Each
 * request gets its own server and transport, closed when the response is; so any instance can
 * answer any request. Each JSON-RPC message of the body spends one of the key's data allowance
 * (issue 40: a batch counted once let 100 calls through as one); a batch holds at most
 * MCP_BATCH_LIMIT messages.
 */
export function mcpServerRoutes(deps: Deps): Router {
  const api = new ApiRouter(deps, '/mcp', 'MCP');
  const mcpError = (description: string) => ({ description, schema: McpErrorBody });
  const jsonRpcRefusal = (description: string) => ({ description, schema: z.union([JsonRpcError, McpErrorBody]) });

  api.post(
    '/',
    {
      operationId: 'sendMcpMessage',
      summary: 'The Model Context Protocol server (Streamable HTTP, stateless)',
      description:
        `One JSON-RPC 2.0 message (or a batch of at most ${MCP_BATCH_LIMIT}) per request: initialize, tools/list, tools/call, ... as the MCP specification defines them; ` +
        'the tools are listed by tools/list. Send `Accept: application/json, text/event-stream`; the answer is JSON. Every message spends ' +
        "one of the key's data allowance (100 a minute): a batch that runs past it has its later requests answered with a JSON-RPC error " +
        `(code ${RATE_LIMITED_RPC_CODE}, data.code MCP_RATE_LIMITED, with Retry-After), and a request with nothing left is a 429.`,
      access: 'mcp-key',
      mcpLimit: 'data',
      mcpLimitPerMessage: true,
      body: JsonRpcBody,
      responses: {
        200: {
          description: 'The JSON-RPC answer (a JSON-RPC error for an unknown method or refused arguments)',
          schema: JsonRpcAnswer,
        },
        202: 'Accepted: the body held only notifications or responses',
        400: jsonRpcRefusal(
          `Not a JSON-RPC message (a JSON-RPC error), or a NUL character, malformed JSON or a batch of more than ${MCP_BATCH_LIMIT} messages (MCP_INVALID_REQUEST)`,
        ),
        403: mcpError(
          "MCP_FORBIDDEN: an Origin header other than PUBLIC_URL's origin (a browser page elsewhere), or the key's creator is now a requester",
        ),
        406: {
          description: 'The Accept header does not take both application/json and text/event-stream',
          schema: JsonRpcError,
        },
        415: jsonRpcRefusal('The body is not JSON'),
      },
    },
    async (req, res) => {
      const key = currentMcpKey(req);
      const messages = Array.isArray(req.body) ? req.body.length : 1;
      if (messages > MCP_BATCH_LIMIT)
        throw BadRequest(`A batch may hold at most ${MCP_BATCH_LIMIT} JSON-RPC messages; this one holds ${messages}`);
      const { allowed, retryAfterSeconds } = await deps.mcpLimiters.spend('data', key.id, Math.max(1, messages), req);
      const refusal = McpRateLimited(MCP_LIMITS.data.label, retryAfterSeconds);
      if (allowed === 0) throw refusal;
      const [{ createMcpServer }, { StreamableHTTPServerTransport }] = await loadMcp();
      const server = createMcpServer(deps, key, actorOf(req));
      // JSON answers rather than an event stream: the tools send no progress, and a plain client reads JSON
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      if (allowed < messages) refusePast(transport, allowed, refusal, res);
      await transport.handleRequest(req, res, req.body);
    },
  );

  const notSupported = {
    access: 'mcp-key' as const,
    responses: { 405: mcpError('MCP_METHOD_NOT_ALLOWED, with Allow: POST') },
  };
  api.get(
    '/',
    { operationId: 'getMcpNotSupported', summary: 'Not supported: the MCP server is stateless (405)', ...notSupported },
    postOnly,
  );
  api.delete(
    '/',
    {
      operationId: 'deleteMcpNotSupported',
      summary: 'Not supported: the MCP server is stateless (405)',
      ...notSupported,
    },
    postOnly,
  );
  return Router().use('/mcp', ownOriginOnly(deps.config.publicUrl), api.router);
}
