import { z } from 'zod';
import '../http/openapi';

/** A JSON-RPC 2.0 request or notification (a notification has no id), as POST /mcp takes it. */
export const JsonRpcMessage = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('JsonRpcMessage');

export const JsonRpcError = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).nullable(),
    error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }),
  })
  .openapi('JsonRpcError');

/** A JSON-RPC 2.0 answer: its result, or its error. */
export const JsonRpcResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).nullable(),
    result: z.unknown().optional(),
    error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
  })
  .openapi('JsonRpcResponse');

/** The most messages one POST /mcp may carry (issue 40): each is counted against the key's allowance, and a batch is answered at once. */
export const MCP_BATCH_LIMIT = 20;

export const JsonRpcBody = z.union([JsonRpcMessage, z.array(JsonRpcMessage).max(MCP_BATCH_LIMIT)]);
export const JsonRpcAnswer = z.union([JsonRpcResponse, z.array(JsonRpcResponse)]);
