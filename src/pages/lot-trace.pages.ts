import type { Request, Response, Router } from 'express';
import type { Deps } from '../deps';
import { actorOf } from '../modules/audit/audit.actor';
import { presentLotTrace } from '../modules/lot-control/lot-control.present';
import { LotIdParams, RecallBody } from '../modules/lot-control/lot-control.schemas';
import { LOT_MANAGERS, lotControlService } from '../modules/lot-control/lot-control.service';
import { attempt, flash, formState, textField, type ReturnedForm } from './forms';
import { PageRouter } from './page-route';

/** The recall form as typed. */
const typedRecall = (body: Record<string, unknown>) => ({ message: textField(body.message) });

/**
 * Issue 42: a lot's trace page (managers, as GET /api/lots/{id}/trace): the lot, the orders it came
 * in on, the sales that took it and who they went to, its movements, the trace's CSV, and Recall:
 * a message, then a confirmation page, then the recall (quarantine and one email per person).
 */
export function lotTracePages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const lots = lotControlService(db);

  async function renderTrace(req: Request, res: Response, id: number, returned: ReturnedForm<'recall'> | null = null) {
    const trace = presentLotTrace(await lots.trace(id));
    res.status(returned?.status ?? 200).render('lots/trace', {
      title: `Trace of lot ${trace.lot.lotNumber}`,
      trace,
      recallForm: formState(returned, 'recall', { message: '' }),
    });
  }

  pages.get('/lots/:id/trace', { access: LOT_MANAGERS, params: LotIdParams }, async (req, res) => {
    await renderTrace(req, res, req.input.params.id);
  });

  // Recall: the form on the trace page asks for the message; the confirmation page shows it and recalls.
  pages.post(
    '/lots/:id/recall',
    { access: LOT_MANAGERS, params: LotIdParams, form: RecallBody, fromForm: typedRecall },
    async (req, res) => {
      const { id } = req.input.params;
      const values = typedRecall(req.body as Record<string, unknown>);
      const form = await attempt(() => req.input.form);
      if (!form.ok) return renderTrace(req, res, id, { form: 'recall', ...form, values });
      if (textField(req.body.confirmed) !== 'yes') {
        const trace = presentLotTrace(await lots.trace(id));
        return res.render('lots/recall', {
          title: `Recall lot ${trace.lot.lotNumber}?`,
          trace,
          message: form.value.message,
        });
      }
      const result = await attempt(() => lots.recall(id, form.value, actorOf(req)));
      if (!result.ok) return renderTrace(req, res, id, { form: 'recall', ...result, values });
      const trace = presentLotTrace(await lots.trace(id));
      flash(
        req,
        `Lot ${trace.lot.lotNumber} recalled: ${result.value.notified} ${result.value.notified === 1 ? 'person' : 'people'} emailed`,
      );
      res.redirect(303, `/lots/${id}/trace`);
    },
  );

  return pages.router;
}
