import { Router } from 'express';
import type { Deps } from '../deps';

/** GET /docs: the human-readable, interactive API reference, for anyone (as /api/docs is). */
export function docsPages(_deps: Deps): Router {
  const router = Router();
  router.get('/docs', (_req, res) => {
    res.render('docs/index', {
      title: 'API reference',
      stylesheets: ['/assets/swagger-ui/swagger-ui.css'],
      scripts: ['/assets/swagger-ui/swagger-ui-bundle.js', '/assets/js/api-docs.js'],
    });
  });
  return router;
}
