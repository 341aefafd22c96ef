import express, { Router, type Request, type RequestHandler } from 'express';
import type { Deps } from '../deps';
import { hasRole } from '../auth/guards';
import type { PermissionKey } from '../auth/permissions';
import type { Role } from '../auth/roles';
import { usersService } from '../modules/users/users.service';
import type { PageAccess } from './page-guards';
import { wantsPartial } from './page-render';
import { crossSiteGuard } from '../auth/csrf';
import { NotFound } from '../http/errors';
import { refuseNulCharacters } from '../http/validate';
import { csrfToken, pageCsrf } from '../auth/form-tokens';
import { storeFlashBeforeRedirect } from './forms';
import { signInPages } from './sign-in.pages';
import { dashboardPages } from './dashboard.pages';
import { itemsPages } from './items.pages';
import { counterPages } from './counter.pages';
import { salesPages } from './sales.pages';
import { docsPages } from './docs.pages';
import { suppliersPages } from './suppliers.pages';
import { ordersPages } from './orders.pages';
import { labelsPages } from './labels.pages';
import { replenishmentPages } from './replenishment.pages';
import { stockMovementsPages } from './stock-movements.pages';
import { stocktakesPages } from './stocktakes.pages';
import { lotsPages } from './lots.pages';
import { chargecodesPages } from './chargecodes.pages';
import { usersPages } from './users.pages';
import { accountPages } from './account.pages';
import { settingsPages } from './settings.pages';
import { operationsPages } from './operations.pages';
import { financePages } from './finance.pages';
import { outboxPages } from './outbox.pages';
import { cataloguePages } from './catalogue.pages';
import { requestsPages } from './requests.pages';
import { lotTracePages } from './lot-trace.pages';
import { safetyDataSheetsPages } from './safety-data-sheets.pages';
import { hazardRegisterPages } from './hazard-register.pages';

/** The page areas, each a router of its own paths and views/<area>/ templates. */
const PAGE_AREAS: ((deps: Deps) => Router)[] = [
  dashboardPages,
  safetyDataSheetsPages,
  hazardRegisterPages,
  itemsPages,
  cataloguePages,
  requestsPages,
  counterPages,
  salesPages,
  stockMovementsPages,
  lotTracePages,
  stocktakesPages,
  lotsPages,
  suppliersPages,
  ordersPages,
  labelsPages,
  replenishmentPages,
  chargecodesPages,
  financePages,
  usersPages,
  accountPages,
  settingsPages,
  operationsPages,
  outboxPages,
  docsPages,
];

type NavLink = { href: string; label: string; access: PageAccess };
/**
 * A top-level link, or a menu of links (shown only when the person may use one of them); a menu
 * with `flatBelow` is shown as plain links to a person below that role (a requester, whose header
 * holds nothing else).
 */
type NavEntry = NavLink | { label: string; links: NavLink[]; flatBelow?: Role };

/** Everyone signed in, a requester (a researcher with a budget code) included. */
const SIGNED_IN: PageAccess = { role: 'requester' };
/** The stores' staff: the `user` role and above. */
const EVERYONE: PageAccess = { role: 'user' };
const MANAGERS: PageAccess = { role: 'manager' };
const ADMINS: PageAccess = { role: 'admin' };

/** The header's links, each with the access its page's guard enforces: a person sees only what they may open. */
const NAV: NavEntry[] = [
  { href: '/', label: 'Dashboard', access: EVERYONE },
  {
    label: 'Requests',
    links: [
      { href: '/catalogue', label: 'Catalogue', access: SIGNED_IN },
      { href: '/requests', label: 'Requests', access: SIGNED_IN },
    ],
    flatBelow: 'user',
  },
  { href: '/counter', label: 'Counter', access: EVERYONE },
  { href: '/items', label: 'Items', access: EVERYONE },
  { href: '/sales', label: 'Sales', access: EVERYONE },
  {
    label: 'Reports',
    links: [
      { href: '/sales/report', label: 'Sales report', access: EVERYONE },
      { href: '/reports/sds', label: 'Safety data sheets due', access: EVERYONE },
      { href: '/reports/hazards', label: 'Hazard register', access: MANAGERS },
    ],
  },
  { href: '/chargecodes', label: 'Charge codes', access: EVERYONE },
  {
    label: 'Purchasing',
    links: [
      { href: '/orders', label: 'Orders', access: EVERYONE },
      { href: '/suppliers', label: 'Suppliers', access: EVERYONE },
      { href: '/replenishment', label: 'Replenishment', access: MANAGERS },
      { href: '/stock-movements', label: 'Stock movements', access: EVERYONE },
      { href: '/stocktakes', label: 'Stocktakes', access: EVERYONE },
      { href: '/lots', label: 'Lots', access: EVERYONE },
    ],
  },
  { href: '/finance', label: 'Finance', access: { permission: 'finance.export' } },
  {
    label: 'Admin',
    links: [
      { href: '/users', label: 'Users', access: ADMINS },
      { href: '/settings', label: 'Settings', access: ADMINS },
      { href: '/notifications', label: 'Notifications', access: MANAGERS },
      { href: '/backups', label: 'Backups', access: ADMINS },
      { href: '/archives', label: 'Archives', access: ADMINS },
      { href: '/audit', label: 'Audit', access: ADMINS },
      { href: '/outbox', label: 'Outbox', access: ADMINS },
      { href: '/outbound-webhooks', label: 'Webhooks', access: ADMINS },
    ],
  },
  { href: '/docs', label: 'API', access: EVERYONE },
];

const NAV_PERMISSIONS = [
  ...new Set(
    NAV.flatMap((entry) => ('links' in entry ? entry.links : [entry])).flatMap((link) =>
      'permission' in link.access ? [link.access.permission] : [],
    ),
  ),
];

/**
 * The header's links this person may open, the one for this page's area (the longest matching
 * path: /items/7 is Items) marked current: aria-current "page" on the page itself, "true" on its
 * area's link from a page within it; a menu holding it is marked open-worthy with `current`.
 */
function navFor(path: string, user: Express.User, permissions: Set<PermissionKey>) {
  const mayOpen = (link: NavLink) =>
    'role' in link.access ? hasRole(user, link.access.role) : permissions.has(link.access.permission);
  const visible = NAV.flatMap((entry): NavEntry[] => {
    if (!('links' in entry)) return mayOpen(entry) ? [entry] : [];
    const links = entry.links.filter(mayOpen);
    if (entry.flatBelow && !hasRole(user, entry.flatBelow)) return links;
    return links.length > 0 ? [{ ...entry, links }] : [];
  });
  const allLinks = visible.flatMap((entry) => ('links' in entry ? entry.links : [entry]));
  const inArea = (href: string) => path === href || (href !== '/' && path.startsWith(`${href}/`));
  const current = allLinks.filter((link) => inArea(link.href)).sort((a, b) => b.href.length - a.href.length)[0];
  const mark = (link: NavLink) => ({
    href: link.href,
    label: link.label,
    current: link !== current ? null : link.href === path ? 'page' : 'true',
  });
  return visible.map((entry) =>
    'links' in entry
      ? { label: entry.label, links: entry.links.map(mark), current: entry.links.includes(current!) }
      : mark(entry),
  );
}

/** The permissions among NAV_PERMISSIONS this person holds (admins hold every one), read only for a whole page, which shows the header. */
async function navPermissions(users: ReturnType<typeof usersService>, req: Request): Promise<Set<PermissionKey>> {
  if (!req.user || req.method !== 'GET' || wantsPartial(req)) return new Set();
  const held = await Promise.all(
    NAV_PERMISSIONS.map(async (permission) => ((await users.hasPermission(req.user!, permission)) ? [permission] : [])),
  );
  return new Set(held.flat());
}

/** What every template may use: who is signed in, what they may do, the form token, a flash message. */
const pageLocals =
  (users: ReturnType<typeof usersService>): RequestHandler =>
  async (req, res, next) => {
    const user = req.user;
    res.locals.currentUser = user ?? null;
    res.locals.currentPath = req.path;
    res.locals.nav = user ? navFor(req.path, user, await navPermissions(users, req)) : [];
    // A token (and so a stored session) only where a form can be shown: not for a visitor being sent to /login.
    res.locals.csrfToken = user || req.path === '/login' ? csrfToken(req) : '';
    res.locals.flash = null;
    if (req.method === 'GET' && req.get('HX-Request') !== 'true' && req.session?.flash) {
      res.locals.flash = req.session.flash;
      delete req.session.flash;
    }
    next();
  };

/**
 * Everything outside /api is a page: its errors (a restore's 503 included, which comes before
 * the session is read) are answered by the error middleware with a page or an htmx alert, not JSON.
 */
export const markPageRequests: RequestHandler = (req, res, next) => {
  res.locals.isPage = req.path !== '/api' && !req.path.startsWith('/api/');
  next();
};

/** The server-rendered pages: mounted after the API, on the same session, services and schemas. */
export function pageRoutes(deps: Deps): Router {
  const pages = Router();
  pages.use(express.urlencoded({ extended: false, limit: '1mb', parameterLimit: 2000 }));
  pages.use(refuseNulCharacters);
  pages.use(crossSiteGuard(deps.config.publicUrl));
  pages.use(pageCsrf);
  pages.use(pageLocals(usersService(deps.db)));
  pages.use(storeFlashBeforeRedirect);
  pages.use(signInPages(deps));
  for (const area of PAGE_AREAS) pages.use(area(deps));
  pages.use(() => {
    throw NotFound('Page not found');
  });
  return pages;
}
