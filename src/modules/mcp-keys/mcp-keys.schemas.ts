import { z } from 'zod';
import '../../http/openapi';
import { MCP_KEY_LIMIT_DAYS } from '../settings/settings.schemas';

export const MCP_SCOPES = ['read', 'write'] as const;
export type McpScope = (typeof MCP_SCOPES)[number];

/** A key's lifetime when none is asked for, as an API token's. */
export const MCP_KEY_DEFAULT_DAYS = 90;
/** The longest lifetime unless the mcp.keyMaxLifetimeDays setting says otherwise. */
export const MCP_KEY_MAX_DAYS = 365;

export const CreateMcpKey = z.object({
  name: z.string().trim().min(1, 'is required').max(100),
  scopes: z
    .union([z.tuple([z.literal('read')]), z.tuple([z.literal('read'), z.literal('write')])], {
      error: 'must be ["read"] or ["read","write"]',
    })
    .default(['read']),
  expiresInDays: z
    .number()
    .int()
    .min(1)
    .max(MCP_KEY_LIMIT_DAYS)
    .optional()
    .openapi({
      description: `Days until the key expires (default ${MCP_KEY_DEFAULT_DAYS}, or the longest allowed if shorter; at most the mcp.keyMaxLifetimeDays setting, ${MCP_KEY_MAX_DAYS} unset)`,
    }),
});

export const McpKey = z
  .object({
    id: z.number(),
    name: z.string(),
    scopes: z.array(z.enum(MCP_SCOPES)),
    createdAt: z.string(),
    expiresAt: z.string(),
    lastUsedAt: z.string().nullable(),
  })
  .openapi('McpApiKey');
export type McpKey = z.infer<typeof McpKey>;
export const McpKeyList = z.array(McpKey);
export const CreatedMcpKey = McpKey.omit({ lastUsedAt: true }).extend({ key: z.string() }).openapi('CreatedMcpApiKey');
export type CreatedMcpKey = z.infer<typeof CreatedMcpKey>;
