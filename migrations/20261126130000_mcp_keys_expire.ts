import type { Knex } from 'knex';

// Every MCP key expires (issue 29). A key made without an expiry gets the default lifetime from
// now, so no client stops working the day this is deployed.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE mcp_api_keys SET expires_at = now() + interval '90 days' WHERE expires_at IS NULL`);
  await knex.raw(`ALTER TABLE mcp_api_keys ALTER COLUMN expires_at SET NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE mcp_api_keys ALTER COLUMN expires_at DROP NOT NULL`);
}
