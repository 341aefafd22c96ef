import { z } from 'zod';
import '../../http/openapi';

export const Liveness = z.object({ status: z.literal('healthy'), timestamp: z.string() });
export type Liveness = z.infer<typeof Liveness>;

export const ApiHealth = z
  .object({
    status: z.enum(['healthy', 'unhealthy']),
    database: z.enum(['connected', 'disconnected']),
    shuttingDown: z.boolean().openapi({ description: 'true from a SIGTERM on, while the process drains' }),
    version: z.string(),
    uptime: z.number().int(),
    timestamp: z.string(),
    primary: z
      .object({
        host: z.string().openapi({ description: "DATABASE_URL's host:port" }),
        latencyMs: z
          .number()
          .int()
          .nullable()
          .openapi({ description: 'the round trip of SHOW server_version; null when it did not answer' }),
        serverVersion: z.string().nullable().openapi({
          description: "the primary's PostgreSQL version (SHOW server_version); null when it did not answer",
        }),
      })
      .openapi({ description: 'the primary database (or the pooler in front of it)' }),
    replicas: z
      .array(
        z.object({
          host: z.string().openapi({ description: "the replica URL's host:port" }),
          state: z.enum(['unchecked', 'healthy', 'lagging', 'down']).openapi({
            description:
              'healthy: report reads go to it; lagging (over DATABASE_REPLICA_MAX_LAG_MS) or down: skipped, its reads go to the primary, alert replica_lagging',
          }),
          lagMs: z.number().int().nullable().openapi({
            description:
              'replay lag as PostgreSQL reports it (0 when it has replayed all the WAL it received, so an idle primary means no lag); null when down',
          }),
          checkedAt: z.string().nullable().openapi({ description: 'when it was last measured' }),
        }),
      )
      .openapi({ description: 'the read replicas of DATABASE_REPLICA_URLS, in its order; empty when none' }),
    poolMode: z
      .enum(['session', 'transaction'])
      .openapi({ description: 'DATABASE_POOL_MODE: how DATABASE_URL is pooled' }),
  })
  .openapi('ApiHealth');
export type ApiHealth = z.infer<typeof ApiHealth>;
