import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { ValidationErrorBody } from '../../http/openapi';
import { MovementList, MovementQuery } from './stock-movements.schemas';
import { presentMovementList } from './stock-movements.present';
import { stockMovementsService } from './stock-movements.service';

export function stockMovementsRoutes({ db, docs, reads }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Stock movements');

  api.get(
    '/stock-movements',
    {
      operationId: 'listStockMovements',
      summary: 'The stock ledger, newest first',
      description:
        'Filters: itemId, type (in/out/adjustment), startDate/endDate (inclusive; a date-only endDate covers the whole day, UTC), ' +
        'referenceType/referenceId (what caused the movement, e.g. sale). limit defaults to 50, max 100. ' +
        'Answers {movements: [...]}; each movement carries both the flat itemName/itemSku and an item {id, name, sku} object, ' +
        'and performedBy as a user id plus performer as {id, email, firstName, lastName}. The ledger is append-only: no endpoint edits or deletes movements.',
      access: 'auth',
      query: MovementQuery,
      responses: {
        200: { description: 'Movements', schema: MovementList },
        400: { description: 'Invalid filter', schema: ValidationErrorBody },
      },
    },
    async (req, res) => {
      const query = req.input.query;
      // the ledger reads a read replica when one is healthy and has the caller's own writes (issue 44)
      res.json(presentMovementList(await stockMovementsService(reads.forReports(req)).list(query)));
    },
  );

  return api.router;
}
