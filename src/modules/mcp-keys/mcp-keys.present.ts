import type { CreatedMcpKey, McpKey } from './mcp-keys.schemas';
import type { CreatedMcpKeyRecord, McpKeyRow } from './mcp-keys.service';

export function presentMcpKey(row: McpKeyRow): McpKey {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

/** A new key: shown with its secret, this once. */
export function presentCreatedMcpKey({ row, key }: CreatedMcpKeyRecord): CreatedMcpKey {
  const { lastUsedAt: _unused, ...created } = presentMcpKey(row);
  return { ...created, key };
}
