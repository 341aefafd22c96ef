import type { Request, Router } from 'express';
import type { Deps } from '../deps';
import { presentAuditPage } from '../modules/audit/audit.present';
import { AuditQuery } from '../modules/audit/audit.schemas';
import { auditTrail } from '../modules/audit/audit.service';
import { usersService } from '../modules/users/users.service';
import { attempt, filledIn, type FieldErrors } from './forms';
import { PageRouter } from './page-route';
import { wantsPartial } from './page-render';

/** The API's audit query without its format: the page shows a page of rows, the CSV link asks the API for the file. */
const AuditPageQuery = AuditQuery.omit({ format: true });
const FILTERS = ['entityType', 'entityId', 'action', 'userId', 'from', 'to'] as const;
type Filter = Partial<Record<(typeof FILTERS)[number], string>>;

/** The filter as query parameters, for page links and the CSV link: only the fields in use. */
function filterParams(filter: Filter, extra: Record<string, string> = {}): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of FILTERS) if (filter[key]) params.set(key, filter[key]);
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  return params;
}

/** The filter form's values as typed, for showing them again. */
const typedFilter = (query: Request['query']): Filter =>
  Object.fromEntries(FILTERS.map((key) => [key, typeof query[key] === 'string' ? query[key] : '']));

/** /audit (admin, as the API): the trail filtered and paged, and its CSV from the API. */
export function auditPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const trail = auditTrail(db);
  const users = usersService(db);

  pages.get('/audit', { access: 'admin', query: AuditPageQuery, fromQuery: filledIn }, async (req, res) => {
    const values = typedFilter(req.query);
    const query = await attempt(() => req.input.query);
    const view = wantsPartial(req) ? 'operations/_audit-list' : 'operations/audit';
    // the actor filter offers the people by name; the query takes their id
    const people = wantsPartial(req)
      ? []
      : (await users.list()).map((u) => ({ id: u.id, name: `${u.first_name} ${u.last_name} (${u.email})` }));
    const common = { title: 'Audit trail', values, people };
    if (!query.ok) {
      res.status(query.status).render(view, {
        ...common,
        errors: query.errors,
        message: query.message,
        events: [],
        pagination: null,
        csvHref: null,
      });
      return;
    }
    const { page, limit, ...filter } = query.value;
    const { rows, total } = await trail.page(filter, { page, limit });
    const presented = presentAuditPage(rows, page, limit, total);
    const totalPages = presented.pagination.totalPages;
    const href = (n: number) => `/audit?${filterParams(filter, { limit: String(limit), page: String(n) })}`;
    res.render(view, {
      ...common,
      errors: {} as FieldErrors,
      message: null,
      events: presented.events,
      pagination: {
        page,
        totalPages,
        total,
        previous: page > 1 ? href(page - 1) : null,
        next: page < totalPages ? href(page + 1) : null,
      },
      // the API's own CSV of every matching row: the session cookie signs the download in
      csvHref: `/api/audit?${filterParams(filter, { format: 'csv' })}`,
    });
  });

  return pages.router;
}
