import type { Knex } from 'knex';
import type { Passport } from 'passport';
import type { Config } from './config';
import type { Maintenance } from './db/maintenance';
import type { OpenAPIRegistry } from './http/openapi';
import type { Logger } from './logger';
import type { McpLimiters } from './auth/mcp-limits';

/** What every route module receives. */
export type Deps = {
  db: Knex;
  /**
   * a session connection to the primary (DATABASE_DIRECT_URL; db itself when that is one): migrations,
   * e.g. a restore's, need it behind PgBouncer in transaction mode (issue 44)
   */
  directDb: Knex;
  /** DATABASE_DIRECT_URL (default DATABASE_URL), for the tools run beside the service (pg_dump, pg_restore) */
  databaseUrl: string;
  maintenance: Maintenance;
  config: Config;
  logger: Logger;
  docs: OpenAPIRegistry;
  passport: InstanceType<typeof Passport>;
  /** the MCP surface's per-key limits, shared by every route that spends them */
  mcpLimiters: McpLimiters;
};
