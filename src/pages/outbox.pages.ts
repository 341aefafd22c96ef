import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import type { Deps } from '../deps';
import { actorOf } from '../modules/audit/audit.actor';
import {
  presentCreatedOutboundWebhook,
  presentDeliveryPage,
  presentOutboundWebhook,
  presentRotatedSecret,
} from '../modules/outbound-webhooks/outbound-webhooks.present';
import {
  CreateOutboundWebhook,
  DeliveriesQuery,
  DeliveryParams,
  WebhookIdParams,
} from '../modules/outbound-webhooks/outbound-webhooks.schemas';
import { outboundWebhooksService } from '../modules/outbound-webhooks/outbound-webhooks.service';
import { presentOutboxPage } from '../modules/outbox/outbox.present';
import { OutboxIdParams, OutboxQuery } from '../modules/outbox/outbox.schemas';
import { isRetryable, outboxService } from '../modules/outbox/outbox.service';
import { WEBHOOK_EVENTS } from '../modules/outbound-webhooks/outbound-webhooks.schemas';
import { attempt, filledIn, flash, formState, textField, type ReturnedForm } from './forms';
import { PageRouter, type PageRequest } from './page-route';

const FILTERS = ['status', 'kind', 'channel'] as const;

/** The filter as query parameters: only the fields in use. */
function filterParams(filter: Partial<Record<(typeof FILTERS)[number], string>>, extra: Record<string, string> = {}) {
  const params = new URLSearchParams();
  for (const key of FILTERS) if (filter[key]) params.set(key, filter[key]);
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  return params;
}

/** An endpoint's page: its id, and the page of its deliveries. */
type WebhookPageRequest = PageRequest<{
  readonly params: z.output<typeof WebhookIdParams>;
  readonly query: z.output<typeof DeliveriesQuery>;
}>;

const eventsOf = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).map((v) => textField(v));

/** The new-endpoint form as typed. */
const typedWebhook = (body: Record<string, unknown>) => ({
  url: textField(body.url),
  events: eventsOf(body.events),
  description: textField(body.description),
});

/**
 * Admin pages of issue 32: /outbox (what the service sends: pending, held, sent, failed, with
 * attempts, the last error and Retry now) and /outbound-webhooks (the endpoints, their secrets
 * shown once, and their deliveries).
 */
export function outboxPages({ db, config }: Deps): Router {
  const pages = new PageRouter(db);
  const outbox = outboxService(db);
  const webhooks = outboundWebhooksService(db, config.outboundWebhooksAllowPrivate);
  pages.use(['/outbox', '/outbound-webhooks'], (_req, res, next) => {
    res.locals.stylesheets = ['/assets/css/operations.css'];
    next();
  });

  // ---- the outbox -----------------------------------------------------------------------------

  pages.get('/outbox', { access: 'admin', query: OutboxQuery, fromQuery: filledIn }, async (req, res) => {
    const values = Object.fromEntries(FILTERS.map((k) => [k, typeof req.query[k] === 'string' ? req.query[k] : '']));
    const query = await attempt(() => req.input.query);
    if (!query.ok) {
      res.status(query.status).render('outbox/index', {
        title: 'Outbox',
        values,
        errors: query.errors,
        message: query.message,
        messages: [],
        isRetryable,
        pagination: null,
      });
      return;
    }
    const { page, limit, ...filter } = query.value;
    const presented = presentOutboxPage(await outbox.page(filter, page, limit), page, limit);
    const { totalPages, total } = presented.pagination;
    const href = (n: number) => `/outbox?${filterParams(values, { page: String(n) })}`;
    res.render('outbox/index', {
      title: 'Outbox',
      values,
      errors: {},
      message: null,
      messages: presented.messages,
      isRetryable,
      returnTo: `/outbox?${filterParams(values, { page: String(page) })}`,
      pagination: {
        page,
        totalPages,
        total,
        previous: page > 1 ? href(page - 1) : null,
        next: page < totalPages ? href(page + 1) : null,
      },
    });
  });

  pages.post('/outbox/:id/retry', { access: 'admin', params: OutboxIdParams }, async (req, res) => {
    const { id } = req.input.params;
    const result = await attempt(() => outbox.retry(id));
    flash(req, result.ok ? 'Sent again now' : result.message);
    const back = textField(req.body.returnTo);
    res.redirect(303, back.startsWith('/outbox') ? back : '/outbox');
  });

  // ---- outbound webhooks ----------------------------------------------------------------------

  async function renderWebhooks(res: Response, returned: ReturnedForm | null = null) {
    res.status(returned?.status ?? 200).render('outbound-webhooks/index', {
      title: 'Outbound webhooks',
      webhooks: (await webhooks.list()).map(presentOutboundWebhook),
      events: WEBHOOK_EVENTS,
      createForm: formState(returned, 'create', { url: '', events: [], description: '' }),
    });
  }

  function renderSecret(res: Response, view: { id: string; url: string; secret: string; created: boolean }) {
    // the secret is shown in this answer only: never stored, in the session or any cache
    res.set('Cache-Control', 'no-store');
    res.locals.scripts = ['/assets/js/settings.js'];
    res.status(view.created ? 201 : 200).render('outbound-webhooks/secret', {
      title: view.created ? 'Outbound webhook created' : 'New secret',
      ...view,
    });
  }

  pages.get('/outbound-webhooks', { access: 'admin' }, (_req, res) => renderWebhooks(res));

  pages.post(
    '/outbound-webhooks',
    {
      access: 'admin',
      form: CreateOutboundWebhook,
      fromForm: (body) => {
        const typed = typedWebhook(body);
        return { ...typed, description: typed.description || undefined };
      },
    },
    async (req, res) => {
      const typed = typedWebhook(req.body);
      const result = await attempt(async () => webhooks.create(actorOf(req), req.input.form));
      if (!result.ok) return renderWebhooks(res, { form: 'create', ...result, values: typed });
      const created = presentCreatedOutboundWebhook(result.value);
      renderSecret(res, { id: created.id, url: created.url, secret: created.secret, created: true });
    },
  );

  async function renderWebhook(req: WebhookPageRequest, res: Response) {
    const { id } = req.input.params;
    const { page, limit } = req.input.query;
    const webhook = presentOutboundWebhook(await webhooks.get(id));
    const presented = presentDeliveryPage(await webhooks.deliveries(id, page, limit), page, limit);
    const { totalPages, total } = presented.pagination;
    const href = (n: number) => `/outbound-webhooks/${id}?page=${n}`;
    res.render('outbound-webhooks/show', {
      title: `Outbound webhook ${webhook.url}`,
      webhook,
      deliveries: presented.deliveries,
      pagination: {
        page,
        totalPages,
        total,
        previous: page > 1 ? href(page - 1) : null,
        next: page < totalPages ? href(page + 1) : null,
      },
    });
  }

  pages.get(
    '/outbound-webhooks/:id',
    { access: 'admin', params: WebhookIdParams, query: DeliveriesQuery, fromQuery: filledIn },
    renderWebhook,
  );

  /** A button's action on the endpoint, then back to its page with what came of it. */
  const action = (path: string, run: (req: Request, id: string) => Promise<string>) =>
    pages.post(`/outbound-webhooks/:id/${path}`, { access: 'admin', params: WebhookIdParams }, async (req, res) => {
      const { id } = req.input.params;
      const result = await attempt(() => run(req, id));
      flash(req, result.ok ? result.value : result.message);
      res.redirect(303, `/outbound-webhooks/${id}`);
    });

  action('ping', async (_req, id) => {
    await webhooks.ping(id);
    return 'Ping queued';
  });
  action('active', async (req, id) => {
    const active = textField(req.body.active) === 'true';
    await webhooks.update(actorOf(req), id, { active });
    return active ? 'Turned on' : 'Turned off';
  });

  pages.post(
    '/outbound-webhooks/:id/deliveries/:deliveryId/redeliver',
    { access: 'admin', params: DeliveryParams },
    async (req, res) => {
      const { id, deliveryId } = req.input.params;
      const result = await attempt(() => webhooks.redeliver(actorOf(req), id, deliveryId));
      flash(req, result.ok ? 'Redelivery queued' : result.message);
      res.redirect(303, `/outbound-webhooks/${id}`);
    },
  );

  pages.post('/outbound-webhooks/:id/rotate-secret', { access: 'admin', params: WebhookIdParams }, async (req, res) => {
    const { id } = req.input.params;
    const rotated = presentRotatedSecret(await webhooks.rotateSecret(actorOf(req), id));
    const webhook = await webhooks.get(id);
    renderSecret(res, { id, url: webhook.url, secret: rotated.secret, created: false });
  });

  pages.post('/outbound-webhooks/:id/delete', { access: 'admin', params: WebhookIdParams }, async (req, res) => {
    const { id } = req.input.params;
    await webhooks.delete(actorOf(req), id);
    flash(req, 'Outbound webhook deleted');
    res.redirect(303, '/outbound-webhooks');
  });

  return pages.router;
}
