import { Router } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import { ApiRouter } from '../../http/api-router';
import type { OpenAPIRegistry } from '../../http/openapi';
import { APP_VERSION } from '../../lib/version';

const startedAt = Date.now();
const DB_CHECK_TIMEOUT_MS = 2000;

const ApiHealth = z
  .object({
    status: z.enum(['healthy', 'unhealthy']),
    database: z.enum(['connected', 'disconnected']),
    version: z.string(),
    uptime: z.number().int(),
    timestamp: z.string(),
  })
  .openapi('ApiHealth');

async function databaseReachable(db: Knex): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), DB_CHECK_TIMEOUT_MS);
  });
  const check = db.raw('select 1').then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Health answers before any session or authentication work. */
export function healthRoutes(db: Knex, docs: OpenAPIRegistry): Router {
  const root = new ApiRouter({ docs, db }, '', 'Health');
  root.get(
    '/health',
    { summary: 'Liveness', access: 'public', responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('healthy'), timestamp: z.string() }) } } },
    (_req, res) => {
      res.json({ status: 'healthy', timestamp: new Date().toISOString() });
    },
  );
  root.get(
    '/api/health',
    {
      summary: 'Readiness, with the database',
      access: 'public',
      responses: { 200: { description: 'Healthy', schema: ApiHealth }, 503: { description: 'Database unreachable', schema: ApiHealth } },
    },
    async (_req, res) => {
      const connected = await databaseReachable(db);
      res.status(connected ? 200 : 503).json({
        status: connected ? 'healthy' : 'unhealthy',
        database: connected ? 'connected' : 'disconnected',
        version: APP_VERSION,
        uptime: Math.floor((Date.now() - startedAt) / 1000),
        timestamp: new Date().toISOString(),
      });
    },
  );
  return root.router;
}
