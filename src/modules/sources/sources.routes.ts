import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody } from '../../http/openapi';
import { IdParams, parse } from '../../http/validate';
import { sourcesService } from './sources.service';

const failure = (description: string) => ({ description, schema: MessageBody });

/** /api/sources/{id}: item-supplier links (created through POST /api/suppliers/{id}/items). */
export function sourcesRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Suppliers');
  const sources = sourcesService(db);

  api.delete(
    '/sources/:id',
    {
      summary: 'Remove an item-supplier link',
      access: 'admin',
      params: IdParams,
      responses: { 204: 'Removed', 403: failure('Not an admin'), 404: failure('Item source not found') },
    },
    async (req, res) => {
      const { id } = parse(IdParams, req.params);
      await sources.remove(id);
      res.status(204).end();
    },
  );

  return api.router;
}
