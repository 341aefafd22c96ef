import type { Router } from 'express';
import type { Knex } from 'knex';
import { ApiRouter } from '../../http/api-router';
import type { OpenAPIRegistry } from '../../http/openapi';
import type { Lifecycle } from '../../http/lifecycle';
import { presentLiveness, presentReadiness } from './health.present';
import { ApiHealth, Liveness } from './health.schemas';
import { healthService } from './health.service';

/** Health answers before any session or authentication work. */
export function healthRoutes(db: Knex, docs: OpenAPIRegistry, lifecycle: Lifecycle): Router {
  const root = new ApiRouter({ docs, db }, '', 'Health');
  const health = healthService(db);
  root.get(
    '/health',
    {
      operationId: 'getLiveness',
      summary: 'Liveness',
      access: 'public',
      responses: { 200: { description: 'Alive', schema: Liveness } },
    },
    (_req, res) => {
      res.json(presentLiveness());
    },
  );
  root.get(
    '/api/health',
    {
      operationId: 'getReadiness',
      summary: 'Readiness, with the database',
      description:
        'Healthy while the database answers and the process is not shutting down: from a SIGTERM on it answers 503 (shuttingDown true) while requests are still served for SHUTDOWN_DRAIN_SECONDS, so a load balancer stops sending new ones first.',
      access: 'public',
      responses: {
        200: { description: 'Healthy', schema: ApiHealth },
        503: { description: 'Database unreachable, or the process is shutting down', schema: ApiHealth },
      },
    },
    async (_req, res) => {
      const readiness = await health.readiness(lifecycle);
      res.status(readiness.databaseConnected && !readiness.shuttingDown ? 200 : 503).json(presentReadiness(readiness));
    },
  );
  return root.router;
}
