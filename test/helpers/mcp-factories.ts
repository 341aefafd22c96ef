import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../../src/modules/audit/audit.actor';
import { mcpKeysService } from '../../src/modules/mcp-keys/mcp-keys.service';
import type { McpScope } from '../../src/modules/mcp-keys/mcp-keys.schemas';
import { buildUser } from './factories';

/** A live MCP API key, created by a new admin unless told otherwise: its id, secret and creator's id. */
export async function buildMcpKey(
  db: Knex,
  overrides: Partial<{ name: string; scopes: McpScope[]; createdBy: string; expiresInDays: number }> = {},
): Promise<{ id: number; key: string; createdBy: string }> {
  const createdBy = overrides.createdBy ?? (await buildUser(db, { role: 'admin' })).id;
  const { row, key } = await mcpKeysService(db).create(
    { ...SYSTEM_ACTOR, userId: createdBy },
    {
      name: overrides.name ?? 'Test assistant',
      scopes: overrides.scopes ?? ['read'],
      expiresInDays: overrides.expiresInDays,
    },
  );
  return { id: row.id, key, createdBy };
}

export const withKey = (key: string) => ({ Authorization: `Bearer ${key}` });
