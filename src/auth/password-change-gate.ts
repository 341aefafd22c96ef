import type { RequestHandler } from 'express';
import { Forbidden } from '../http/errors';

/** Where the person changes the password the service generated for them. */
export const CHANGE_PASSWORD_PAGE = '/account/password';

/** What a caller who must change their password may still do: change it, sign in or out, and say who they are. */
const STILL_ALLOWED = new Set([
  `GET ${CHANGE_PASSWORD_PAGE}`,
  `POST ${CHANGE_PASSWORD_PAGE}`,
  'GET /login',
  'POST /login',
  'POST /logout',
  'POST /api/users/reset-password',
  'POST /api/auth/login',
  'POST /api/auth/logout',
  'POST /api/logout',
  'GET /api/auth/user',
]);

/**
 * The first admin signed in with the generated password (bootstrap-admin.ts) changes it before
 * anything else: a page opens the change-password page instead, the API answers 403 naming the
 * call that changes it. The page's styles and scripts are served meanwhile.
 */
export const passwordChangeGate: RequestHandler = (req, res, next) => {
  if (!req.user?.must_change_password) return next();
  if (STILL_ALLOWED.has(`${req.method} ${req.path}`) || req.path.startsWith('/assets/') || req.path === '/favicon.ico')
    return next();
  if (req.path === '/api' || req.path.startsWith('/api/'))
    return next(Forbidden('Change the generated password first: POST /api/users/reset-password'));
  if (req.get('HX-Request')) return res.set('HX-Redirect', CHANGE_PASSWORD_PAGE).status(403).end();
  res.redirect(303, CHANGE_PASSWORD_PAGE);
};
