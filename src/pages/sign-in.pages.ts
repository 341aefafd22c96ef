import { Router } from 'express';
import type { Deps } from '../deps';
import { endSession, SESSION_COOKIE, startSession } from '../auth/session';
import { signInService } from '../auth/sign-in.service';
import { actorOf } from '../modules/audit/audit.actor';
import { attempt } from './forms';
import { safeNext } from './page-guards';

/** GET/POST /login and POST /logout: the API's sign-in (same rules, same limits, same message) as a form. */
export function signInPages({ db, config }: Deps): Router {
  const pages = Router();
  const signIns = signInService(db, config);
  const view = (overrides: Record<string, unknown>) => ({
    title: 'Sign in',
    description:
      'Sign in to the stores service: the counter, stock, quotes and sales on charge codes, purchasing and finance.',
    localSignIn: config.localAuthEnabled,
    ssoName: config.oidc ? config.oidc.providerName : null,
    values: { email: '' },
    errors: {},
    message: null,
    ...overrides,
  });

  pages.get('/login', (req, res) => {
    if (req.user) return res.redirect(302, safeNext(req.query.next));
    const ssoError = typeof req.query.ssoError === 'string' ? req.query.ssoError : null;
    res
      .status(ssoError ? 401 : 200)
      .render('sign-in/index', view({ next: safeNext(req.query.next), message: ssoError }));
  });

  pages.post('/login', async (req, res) => {
    const next = safeNext(req.body.next);
    const values = { email: typeof req.body.email === 'string' ? req.body.email : '' };
    const result = await attempt(
      () => signIns.withPassword(req.body, actorOf(req), req.get('user-agent') ?? null),
      [401, 403, 429],
    );
    if (!result.ok)
      return res
        .status(result.status)
        .render('sign-in/index', view({ next, values, errors: result.errors, message: result.message }));
    await startSession(req, result.value);
    res.redirect(303, next);
  });

  pages.post('/logout', async (req, res) => {
    await endSession(req);
    res.clearCookie(SESSION_COOKIE).redirect(303, '/login');
  });

  return pages;
}
