import type { Knex } from 'knex';

// Keys of the machine-client (MCP) surface. Only a digest of each key is kept; a deleted row is a
// revoked key. A key acts for the admin who created it, and goes with that account.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE mcp_api_keys (
      id serial PRIMARY KEY,
      name text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      scopes text[] NOT NULL CHECK (scopes <@ ARRAY['read', 'write'] AND 'read' = ANY (scopes)),
      created_by uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      last_used_at timestamptz
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mcp_api_keys');
}
