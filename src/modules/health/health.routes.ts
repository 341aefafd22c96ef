import type { Router } from 'express';
import type { Knex } from 'knex';
import { ApiRouter } from '../../http/api-router';
import type { OpenAPIRegistry } from '../../http/openapi';
import { presentLiveness, presentReadiness } from './health.present';
import { ApiHealth, Liveness } from './health.schemas';
import { healthService } from './health.service';

/** Health answers before any session or authentication work. */
export function healthRoutes(db: Knex, docs: OpenAPIRegistry): Router {
  const root = new ApiRouter({ docs, db }, '', 'Health');
  const health = healthService(db);
  root.get(
    '/health',
    { summary: 'Liveness', access: 'public', responses: { 200: { description: 'Alive', schema: Liveness } } },
    (_req, res) => {
      res.json(presentLiveness());
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
      const readiness = await health.readiness();
      res.status(readiness.databaseConnected ? 200 : 503).json(presentReadiness(readiness));
    },
  );
  return root.router;
}
