import type { Request, RequestHandler } from 'express';
import type { Knex } from 'knex';
import { Forbidden } from '../http/errors';
import { hasRole } from '../auth/guards';
import { admitsUnderProfile, profileRefusal, type ProfileAccess } from '../auth/access-profile';
import type { PermissionKey } from '../auth/permissions';
import { usersService } from '../modules/users/users.service';
import type { Role } from '../auth/roles';

/** Where to go after signing in: only a path on this site (not //host or /\host). */
export const safeNext = (next: unknown): string => (typeof next === 'string' && /^\/(?![/\\])/.test(next) ? next : '/');

function signInUrl(req: Request): string {
  const next =
    req.method === 'GET'
      ? req.originalUrl
      : req.get('HX-Current-URL')
        ? new URL(req.get('HX-Current-URL')!).pathname
        : '/';
  const params = new URLSearchParams({ next: safeNext(next) });
  // single sign-on lands on / and reports a refusal there; the sign-in page shows it
  if (typeof req.query.ssoError === 'string') params.set('ssoError', req.query.ssoError);
  return `/login?${params}`;
}

/** Who a page guard lets through: a role and up, the holders of a permission, or a role under access.profile strict. */
export type PageAccess = { role: Role } | { permission: PermissionKey } | ProfileAccess;

const pageAccess = new WeakMap<RequestHandler, PageAccess>();

/** The access a page route's guard enforces, read from its handler (the authorization matrix walks the page routes by it). */
export function pageAccessOf(handler: unknown): PageAccess | undefined {
  return typeof handler === 'function' ? pageAccess.get(handler as RequestHandler) : undefined;
}

/**
 * A page for signed-in people holding at least `role`: without a session the browser is sent
 * to the sign-in page (htmx follows HX-Redirect), and a role too low answers the 403 page.
 */
export function requirePage(role: Role = 'user'): RequestHandler {
  const guard: RequestHandler = (req, res, next) => {
    if (!req.user) {
      const url = signInUrl(req);
      if (req.get('HX-Request')) return res.set('HX-Redirect', url).status(401).end();
      return res.redirect(302, url);
    }
    next(hasRole(req.user, role) ? undefined : Forbidden(`This page is for the ${role} role`));
  };
  pageAccess.set(guard, { role });
  return guard;
}

/** As requirePage, for actions behind a permission (refunds): the API's permission check. */
export function requirePagePermission(db: Knex, permission: PermissionKey): RequestHandler[] {
  const users = usersService(db);
  const check: RequestHandler = async (req, _res, next) => {
    const allowed = await users.hasPermission(req.user!, permission);
    next(allowed ? undefined : Forbidden(`This action requires the ${permission} permission`));
  };
  pageAccess.set(check, { permission });
  return [requirePage(), check];
}

/** As requirePage, for the actions the setting access.profile strict keeps to a role: the API's guard of the same actions. */
export function requirePageUnderProfile(db: Knex, access: ProfileAccess): RequestHandler[] {
  const check: RequestHandler = async (req, _res, next) => {
    next((await admitsUnderProfile(db, req.user!, access)) ? undefined : profileRefusal(access));
  };
  pageAccess.set(check, access);
  return [requirePage(), check];
}
