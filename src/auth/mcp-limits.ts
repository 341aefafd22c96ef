import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceUnavailable } from '../http/errors';
import { McpRateLimited } from '../http/mcp-errors';

/** The spec's limits per key: status reads, test starts, data retrieval. */
export const MCP_LIMITS = {
  status: { points: 60, duration: 60, label: '60 status requests per minute' },
  test: { points: 10, duration: 3600, label: '10 test runs per hour' },
  data: { points: 100, duration: 60, label: '100 data requests per minute' },
} as const;
export type McpLimit = keyof typeof MCP_LIMITS;

export type McpLimiters = Record<McpLimit, RequestHandler>;

/**
 * Counted in PostgreSQL (the shared rate_limits table), so every instance spends the same
 * allowance. A request without a key (a session on the analytics routes) is not counted here.
 * When the counter cannot be read the request is refused with a 503: a broken store must not
 * lift the limit.
 */
export function mcpLimiters(db: Knex): McpLimiters {
  const limiter = (limit: McpLimit): RequestHandler => {
    const { points, duration, label } = MCP_LIMITS[limit];
    const counter = new RateLimiterPostgres({
      storeClient: db,
      storeType: 'knex',
      tableName: 'rate_limits',
      tableCreated: true,
      keyPrefix: `mcp_${limit}`,
      points,
      duration,
    });
    return async (req, _res, next) => {
      if (!req.mcpKey) return next();
      try {
        await counter.consume(String(req.mcpKey.id));
        next();
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes)
          return next(McpRateLimited(label, Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
        req.log?.warn({ err: rejection }, 'MCP rate limit store unavailable');
        next(ServiceUnavailable('Rate limit store unavailable; try again shortly'));
      }
    };
  };
  return { status: limiter('status'), test: limiter('test'), data: limiter('data') };
}
