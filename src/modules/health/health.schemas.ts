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
  })
  .openapi('ApiHealth');
export type ApiHealth = z.infer<typeof ApiHealth>;
