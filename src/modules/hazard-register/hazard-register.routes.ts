import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { CsvText } from '../../http/openapi';
import { ValidationErrorBody } from '../../http/openapi';
import { sendCsvDownload } from '../../http/send-file';
import { HAZARD_REGISTER_CSV_COLUMNS, HazardRegister, HazardRegisterQuery } from './hazard-register.schemas';
import { hazardRegisterCsvRecord, hazardRegisterService } from './hazard-register.service';

/** GET /api/reports/hazards: the hazard register (issue 43). */
export function hazardRegisterRoutes({ db, docs, reads }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Hazards');

  api.get(
    '/reports/hazards',
    {
      operationId: 'getHazardRegister',
      summary: 'The hazard register (JSON or CSV)',
      description:
        'Every hazardous item (any GHS pictogram or H statement) holding stock, active or not, by SKU: its signal word, pictograms, ' +
        'H statements with their texts, CAS and UN numbers, storage, stock, the lots holding stock with their expiry (soonest first), ' +
        "and its current safety data sheet's revision date and state (current; old: revised more than safety.sdsReviewYears years ago; " +
        'missing). ?sds=current|old|missing|due (due: old or missing) keeps only those. ' +
        `CSV (format=csv): the same rows, header \`${HAZARD_REGISTER_CSV_COLUMNS.join(',')}\`; lists within a cell joined by " | ".`,
      access: 'manager',
      query: HazardRegisterQuery,
      responses: {
        200: {
          description: 'The register (the JSON form; format=csv answers text/csv)',
          schema: HazardRegister,
          otherContent: { 'text/csv': CsvText },
        },
        400: { description: 'Validation failed', schema: ValidationErrorBody },
      },
    },
    async (req, res) => {
      const { format, sds } = req.input.query;
      // a register tolerates a little lag: a read replica when one is healthy and has the caller's own writes (issue 44)
      const register = await hazardRegisterService(reads.forReports(req)).register({ sds });
      if (format === 'json') {
        res.json(register);
        return;
      }
      const day = register.generatedAt.slice(0, 10).replace(/-/g, '');
      await sendCsvDownload(res, {
        name: `hazard-register-${day}.csv`,
        columns: HAZARD_REGISTER_CSV_COLUMNS,
        records: (async function* () {
          for (const item of register.items) yield hazardRegisterCsvRecord(item);
        })(),
      });
    },
  );

  return api.router;
}
