import type { Knex } from 'knex';

// Test runs started through the MCP surface. The partial unique index is how instances agree that
// only one run is in progress: a second insert while one is 'running' fails.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE mcp_test_runs (
      execution_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      test_type text NOT NULL CHECK (test_type IN ('unit', 'integration', 'e2e', 'sales', 'system')),
      options jsonb NOT NULL DEFAULT '{}',
      status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed')),
      started_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      results jsonb,
      error text,
      key_id integer REFERENCES mcp_api_keys (id) ON DELETE SET NULL
    )`);
  await knex.raw(`CREATE UNIQUE INDEX mcp_test_runs_one_running ON mcp_test_runs ((true)) WHERE status = 'running'`);
  await knex.raw(`CREATE INDEX mcp_test_runs_type_started ON mcp_test_runs (test_type, started_at DESC)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mcp_test_runs');
}
