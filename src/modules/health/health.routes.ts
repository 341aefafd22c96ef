import type { Router } from 'express';
import type { Knex } from 'knex';
import { ApiRouter } from '../../http/api-router';
import type { OpenAPIRegistry } from '../../http/openapi';
import type { Lifecycle } from '../../http/lifecycle';
import { presentLiveness, presentReadiness } from './health.present';
import { ApiHealth, Liveness } from './health.schemas';
import { healthService, type Topology } from './health.service';

/** Health answers before any session or authentication work. */
export function healthRoutes(db: Knex, docs: OpenAPIRegistry, lifecycle: Lifecycle, topology: Topology): Router {
  const root = new ApiRouter({ docs, db }, '', 'Health');
  const health = healthService(db, topology);
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
        'Healthy while the database answers and the process is not shutting down: from a SIGTERM on it answers 503 (shuttingDown true) while requests are still served for SHUTDOWN_DRAIN_SECONDS, so a load balancer stops sending new ones first. ' +
        'It also reports the primary (host:port, round trip), each read replica of DATABASE_REPLICA_URLS by host:port with its replay lag and state ' +
        '(measured every 2 s; a replica down or lagging does not make this unhealthy: its reads go to the primary), and the pool mode. ' +
        'GET /health is the cheap check for a load balancer.',
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
