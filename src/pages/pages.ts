import express, { Router, type RequestHandler } from 'express';
import type { Deps } from '../deps';
import { hasRole } from '../auth/guards';
import { crossSiteGuard } from '../auth/csrf';
import { NotFound } from '../http/errors';
import { refuseNulCharacters } from '../http/validate';
import { csrfToken, pageCsrf } from './page-csrf';
import { storeFlashBeforeRedirect } from './forms';
import { signInPages } from './sign-in.pages';
import { dashboardPages } from './dashboard.pages';
import { itemsPages } from './items.pages';
import { counterPages } from './counter.pages';
import { salesPages } from './sales.pages';
import { docsPages } from './docs.pages';

/** The page areas, each a router of its own paths and views/<area>/ templates. */
const PAGE_AREAS: ((deps: Deps) => Router)[] = [dashboardPages, itemsPages, counterPages, salesPages, docsPages];

const NAV = [
  { href: '/', label: 'Dashboard' },
  { href: '/counter', label: 'Counter' },
  { href: '/items', label: 'Items' },
  { href: '/sales', label: 'Sales' },
  { href: '/sales/report', label: 'Report' },
  { href: '/docs', label: 'API' },
];

/** The header's links, the one for this page's area (the longest matching path: /items/7 is Items) marked current. */
function navFor(path: string) {
  const inArea = (href: string) => path === href || (href !== '/' && path.startsWith(`${href}/`));
  const current = NAV.filter((link) => inArea(link.href)).sort((a, b) => b.href.length - a.href.length)[0];
  // aria-current: "page" on the page itself, "true" on its area's link from a page within it
  return NAV.map((link) => ({ ...link, current: link !== current ? null : link.href === path ? 'page' : 'true' }));
}

/** What every template may use: who is signed in, what they may do, the form token, a flash message. */
const pageLocals: RequestHandler = (req, res, next) => {
  const user = req.user;
  res.locals.currentUser = user ?? null;
  res.locals.isManager = user ? hasRole(user, 'manager') : false;
  res.locals.isAdmin = user ? hasRole(user, 'admin') : false;
  res.locals.nav = navFor(req.path);
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
  pages.use(pageLocals);
  pages.use(storeFlashBeforeRedirect);
  pages.use(signInPages(deps));
  for (const area of PAGE_AREAS) pages.use(area(deps));
  pages.use(() => {
    throw NotFound('Page not found');
  });
  return pages;
}
