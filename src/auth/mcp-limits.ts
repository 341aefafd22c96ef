import type { Request, RequestHandler } from 'express';
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

/** How many of the units asked for the key's allowance had left (the rest are refused), and when to retry the refused. */
export type Spent = { allowed: number; retryAfterSeconds: number };

export type McpLimiters = Record<McpLimit, RequestHandler> & {
  /**
   * Spends `count` units of a key's allowance at once (POST /mcp spends one per JSON-RPC message of
   * a batch): answers how many of them were left. Throws a 503 when the counter cannot be read.
   */
  spend(limit: McpLimit, keyId: number, count: number, req: Request): Promise<Spent>;
};

/**
 * Counted in PostgreSQL (the shared rate_limits table), so every instance spends the same
 * allowance. A request without a key (a session on the analytics routes) is not counted here.
 * When the counter cannot be read the request is refused with a 503: a broken store must not
 * lift the limit.
 */
export function mcpLimiters(db: Knex): McpLimiters {
  const counters = Object.fromEntries(
    Object.entries(MCP_LIMITS).map(([limit, { points, duration }]) => [
      limit,
      new RateLimiterPostgres({
        storeClient: db,
        storeType: 'knex',
        tableName: 'rate_limits',
        tableCreated: true,
        keyPrefix: `mcp_${limit}`,
        points,
        duration,
      }),
    ]),
  ) as Record<McpLimit, RateLimiterPostgres>;

  const spend = async (limit: McpLimit, keyId: number, count: number, req: Request): Promise<Spent> => {
    try {
      const spent = await counters[limit].consume(String(keyId), count);
      return { allowed: count, retryAfterSeconds: Math.max(1, Math.ceil(spent.msBeforeNext / 1000)) };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        // the counter took all `count` (the refused too, as a refused request always counted); what it held before them was left
        const leftBefore = MCP_LIMITS[limit].points - (rejection.consumedPoints - count);
        return {
          allowed: Math.min(count, Math.max(0, leftBefore)),
          retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
        };
      }
      req.log?.warn({ err: rejection }, 'MCP rate limit store unavailable');
      throw ServiceUnavailable('Rate limit store unavailable; try again shortly');
    }
  };

  const limiter =
    (limit: McpLimit): RequestHandler =>
    async (req, _res, next) => {
      if (!req.mcpKey) return next();
      const { allowed, retryAfterSeconds } = await spend(limit, req.mcpKey.id, 1, req);
      next(allowed === 1 ? undefined : McpRateLimited(MCP_LIMITS[limit].label, retryAfterSeconds));
    };
  return { status: limiter('status'), test: limiter('test'), data: limiter('data'), spend };
}
