import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { HazardStatements } from './hazards.schemas';
import { hazardStatements } from './hazards.service';

/** GET /api/hazards/statements: the standard texts of the GHS/CLP codes (issue 43). */
export function hazardsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Hazards');
  const statements = hazardStatements();

  api.get(
    '/hazards/statements',
    {
      operationId: 'listHazardStatements',
      summary: 'The texts of the hazard and precautionary statements',
      description:
        'Every H code (with the combinations CLP and GHS list, such as H300+H310), every EUH code and every P code with its ' +
        'official combinations (P303+P361+P353), each with its standard English text, from Regulation (EC) No 1272/2008 (CLP) ' +
        'Annexes III and IV as amended and UN GHS Rev. 10 Annex 3; and the nine pictograms with their meaning and SVG. ' +
        "These are the codes an item's hazard accepts.",
      access: 'any-signed-in',
      responses: { 200: { description: 'The statements', schema: HazardStatements } },
    },
    (_req, res) => {
      res.set('Cache-Control', 'private, max-age=3600');
      res.json(statements);
    },
  );

  return api.router;
}
