import type { Response, Router } from 'express';
import { z } from 'zod';
import type { Deps } from '../deps';
import { IntId } from '../http/validate';
import { D, money } from '../lib/money';
import { actorOf } from '../modules/audit/audit.actor';
import { ordersService } from '../modules/orders/orders.service';
import { presentReplenishmentOrders, presentSuggestions } from '../modules/replenishment/replenishment.present';
import { CreateReplenishmentOrders } from '../modules/replenishment/replenishment.schemas';
import { replenishmentService } from '../modules/replenishment/replenishment.service';
import { attempt, flash, repeatedField, type FieldErrors } from './forms';
import { PageRouter } from './page-route';

/** The orders a run created, named in the address it redirects to, so the page can link to them. */
const CreatedQuery = z.object({ created: z.array(IntId).max(100).optional() });

/** The order form as typed: which items are ticked (null: the first showing, all of them) and each row's quantity. */
type OrderForm = {
  selected: number[] | null;
  quantities: Record<string, string>;
  errors: FieldErrors;
  message: string | null;
};

/**
 * The form's rows as the API's body: every suggested row sends its item (lineItemId) and quantity;
 * the ticked ones (itemIds) are ordered, each in the quantity typed beside it.
 */
function orderRequest(body: Record<string, unknown>) {
  const rows = repeatedField(body.lineItemId);
  const typed = repeatedField(body.quantity);
  const ticked = repeatedField(body.itemIds);
  const quantities = rows
    .map((itemId, i) => ({ itemId, quantity: (typed[i] ?? '').trim() }))
    .filter((row) => ticked.includes(row.itemId));
  return {
    body: {
      itemIds: ticked.map(Number),
      quantities: quantities.map((row) => ({ itemId: Number(row.itemId), quantity: row.quantity })),
    },
    quantities,
    typed: Object.fromEntries(rows.map((itemId, i) => [itemId, typed[i] ?? ''])),
  };
}

/** /replenishment: what to reorder by supplier, and Create orders (managers and admins, as the API). */
export function replenishmentPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const replenishment = replenishmentService(db);
  const orders = ordersService(db);

  async function render(res: Response, form: OrderForm, created: number[] = [], status = 200) {
    const suggestions = presentSuggestions(await replenishment.suggestions());
    // an order named in the address that is gone since is not listed
    const found = await Promise.all(created.map((id) => attempt(() => orders.listRow(id), [404])));
    res.status(status).render('replenishment/index', {
      title: 'Replenishment',
      total: money(suggestions.suppliers.reduce((sum, group) => sum.plus(group.total), new D(0))),
      stylesheets: ['/assets/css/suppliers.css'],
      scripts: ['/assets/js/replenishment.js'],
      suggestions,
      form,
      created: found.flatMap((result) => (result.ok ? [result.value] : [])),
    });
  }

  pages.get(
    '/replenishment',
    {
      access: 'manager',
      query: CreatedQuery,
      fromQuery: (query) => ({
        created: typeof query.created === 'string' ? query.created.split(',') : undefined,
      }),
    },
    async (req, res) => {
      const { created } = req.input.query;
      await render(res, { selected: null, quantities: {}, errors: {}, message: null }, created);
    },
  );

  pages.post(
    '/replenishment/orders',
    { access: 'manager', form: CreateReplenishmentOrders, fromForm: (body) => orderRequest(body).body },
    async (req, res) => {
      const { body, quantities, typed } = orderRequest(req.body);
      const result = await attempt(() => replenishment.createOrders(req.input.form, actorOf(req)));
      if (!result.ok) {
        // the API names a quantity by its place in quantities; the form by its item
        const errors = Object.fromEntries(
          Object.entries(result.errors).map(([field, message]) => {
            const row = /^quantities\.(\d+)\./.exec(field);
            return [row ? `quantity-${quantities[Number(row[1])].itemId}` : field, message];
          }),
        );
        return render(
          res,
          { selected: body.itemIds, quantities: typed, errors, message: result.message },
          [],
          result.status,
        );
      }
      flash(req, presentReplenishmentOrders(result.value).message);
      const created = result.value.orders.map((detail) => detail.order.id);
      res.redirect(303, created.length > 0 ? `/replenishment?created=${created.join(',')}` : '/replenishment');
    },
  );

  return pages.router;
}
