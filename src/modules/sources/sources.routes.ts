import type { Deps } from '../../deps';
import { MANAGER_UNDER_STRICT } from '../../auth/access-profile';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { IdParams } from '../../http/validate';
import { presentItemSource } from './sources.present';
import { ItemSource, UpdateItemSource } from './sources.schemas';
import { sourcesService } from './sources.service';

const failure = (description: string) => ({ description, schema: MessageBody });

/** /api/sources/{id}: item-supplier links (created through POST /api/suppliers/{id}/items). */
export function sourcesRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Suppliers');
  const sources = sourcesService(db);

  api.put(
    '/sources/:id',
    {
      operationId: 'updateItemSource',
      summary: "Change an item-supplier link's price, notes or preferred mark",
      description:
        "Partial. preferred: true makes this the item's one preferred source (replenishment orders from it) and unmarks the " +
        "item's other sources in the same transaction; false unmarks it (replenishment then takes the cheapest source).",
      access: MANAGER_UNDER_STRICT,
      params: IdParams,
      body: UpdateItemSource,
      responses: {
        200: { description: 'The link after the change', schema: ItemSource },
        400: { description: 'Validation failed', schema: ValidationErrorBody },
        404: failure('Item source not found'),
        409: failure('Another source of the item was marked preferred at the same time'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const input = req.input.body;
      res.json(presentItemSource(await sources.update(id, input)));
    },
  );

  api.delete(
    '/sources/:id',
    {
      operationId: 'deleteItemSource',
      summary: 'Remove an item-supplier link',
      access: 'admin',
      params: IdParams,
      responses: { 204: 'Removed', 403: failure('Not an admin'), 404: failure('Item source not found') },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await sources.remove(id);
      res.status(204).end();
    },
  );

  return api.router;
}
