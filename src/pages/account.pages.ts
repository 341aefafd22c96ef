import type { Request, Response, Router } from 'express';
import type { Deps } from '../deps';
import { currentUser, isStaff } from '../auth/guards';
import { presentCreatedToken, presentFailedSignIns, presentToken } from '../auth/auth.present';
import {
  CreateToken,
  TOKEN_DEFAULT_DAYS,
  TOKEN_MAX_DAYS,
  TokenIdParams,
  type CreatedToken,
} from '../auth/auth.schemas';
import { failedSignIns } from '../auth/failed-sign-ins';
import { retireInitialAdminPassword } from '../auth/bootstrap-admin';
import { CHANGE_PASSWORD_PAGE } from '../auth/password-change-gate';
import { tokensService } from '../auth/tokens.service';
import { actorOf } from '../modules/audit/audit.actor';
import { presentPasswordChanged, presentPickingList, presentUser } from '../modules/users/users.present';
import { PASSWORD_MIN_LENGTH } from '../auth/password-rule';
import { ChangeOwnPasswordBody, PickingListBody } from '../modules/users/users.schemas';
import { usersService } from '../modules/users/users.service';
import { EmailPreferencesBody } from '../modules/emails/emails.schemas';
import { emailPreferencesService } from '../modules/emails/emails.service';
import { attempt, checked, flash, formState, type ReturnedForm } from './forms';
import { PageRouter } from './page-route';
import { ROLE_LABELS } from './users.pages';

const ASSETS = { stylesheets: ['/assets/css/users.css'], scripts: ['/assets/js/account.js'] };

/** The page's forms: the one a refused post re-renders is named in its ReturnedForm. */
type AccountFormName = 'password' | 'token';

/** The token form's fields as the API's body: the number of days is a number there, typed text here. */
const tokenRequest = (body: Record<string, unknown>) => ({
  name: body.name,
  expiresInDays: body.expiresInDays === undefined || body.expiresInDays === '' ? undefined : Number(body.expiresInDays),
});

/** My account: everyone's own password, picking-list preference, API tokens and recent failed sign-ins, through the API's services. */
export function accountPages({ db, config, logger }: Deps): Router {
  const pages = new PageRouter(db);
  const users = usersService(db, config);
  const tokens = tokensService(db);
  const failures = failedSignIns(db);
  const emailPreferences = emailPreferencesService(db);

  async function renderAccount(
    req: Request,
    res: Response,
    {
      returned = null,
      created = null,
      status = 200,
    }: { returned?: ReturnedForm<AccountFormName> | null; created?: CreatedToken | null; status?: number } = {},
  ) {
    const row = await users.get(currentUser(req).id);
    res.status(returned?.status ?? status).render('account/index', {
      ...ASSETS,
      title: 'My account',
      user: presentUser(row),
      roleLabel: ROLE_LABELS[row.role],
      // the picking list is the counter's: a requester has no counter (the API's guard of the preference)
      staff: isStaff(row),
      // a single sign-on account has no password here to change
      hasPassword: row.password_hash !== null,
      passwordMinLength: PASSWORD_MIN_LENGTH,
      tokens: (await tokens.list(row.id)).map(presentToken),
      tokenMaxDays: TOKEN_MAX_DAYS,
      created,
      passwordForm: formState(returned, 'password', {}),
      tokenForm: formState(returned, 'token', { name: '', expiresInDays: String(TOKEN_DEFAULT_DAYS) }),
      ...presentFailedSignIns(await failures.recent(row.id)),
      emailSwitches: await emailPreferences.choices(row),
    });
  }

  /** The change-password page alone: where the first admin lands until the generated password is changed. */
  function renderChangePassword(res: Response, returned: ReturnedForm<AccountFormName> | null = null) {
    res.status(returned?.status ?? 200).render('account/password', {
      ...ASSETS,
      title: 'Change your password',
      passwordMinLength: PASSWORD_MIN_LENGTH,
      passwordForm: formState(returned, 'password', {}),
    });
  }

  pages.get('/account', { access: 'requester' }, async (req, res) => {
    await renderAccount(req, res);
  });

  pages.get(CHANGE_PASSWORD_PAGE, { access: 'requester' }, (req, res) => {
    if (!currentUser(req).must_change_password) return res.redirect(303, '/account');
    renderChangePassword(res);
  });

  pages.post(CHANGE_PASSWORD_PAGE, { access: 'requester', form: ChangeOwnPasswordBody }, async (req, res) => {
    const mustChange = currentUser(req).must_change_password;
    const result = await attempt(async () => {
      const body = req.input.form;
      // this session stays signed in; the others and every API token end
      return users.changeOwnPassword(currentUser(req).id, body, actorOf(req), req.sessionID);
    });
    if (!result.ok) {
      const returned = { form: 'password' as const, ...result, values: {} };
      return mustChange ? renderChangePassword(res, returned) : renderAccount(req, res, { returned });
    }
    if (result.value.generatedPasswordChanged) {
      await retireInitialAdminPassword(config, logger);
      flash(req, `${presentPasswordChanged().message}. The file that held the generated one is deleted.`);
      return res.redirect(303, '/');
    }
    flash(req, `${presentPasswordChanged().message}. Your other sessions and your API tokens have ended.`);
    res.redirect(303, '/account');
  });

  pages.post(
    '/account/picking-list',
    {
      access: 'user',
      form: PickingListBody,
      fromForm: (body) => ({ showPickingList: checked(body.showPickingList) }),
    },
    async (req, res) => {
      const user = currentUser(req);
      users.assertMayChangePickingList(user.id, user);
      const { showPickingList } = req.input.form;
      flash(req, presentPickingList(await users.setPickingList(user.id, showPickingList, actorOf(req))).message);
      res.redirect(303, '/account');
    },
  );

  pages.post(
    '/account/emails',
    {
      access: 'user',
      form: EmailPreferencesBody,
      // the switches of this person's role, each a checkbox
      fromForm: (body, req) =>
        Object.fromEntries(
          emailPreferences.switchesOf(currentUser(req).role).map((name) => [name, checked(body[name])]),
        ),
    },
    async (req, res) => {
      const user = currentUser(req);
      await emailPreferences.set(user, req.input.form);
      flash(req, 'Email preferences saved');
      res.redirect(303, '/account#emails');
    },
  );

  // The new token's secret is shown in this answer only (it is stored nowhere but as a hash), so no redirect carries it.
  pages.post(
    '/account/tokens',
    { access: 'requester', form: CreateToken, fromForm: tokenRequest },
    async (req, res) => {
      tokens.assertMayCreate(req.authMethod);
      const result = await attempt(async () => {
        const body = req.input.form;
        return tokens.create(currentUser(req).id, body.name, body.expiresInDays, actorOf(req));
      });
      if (!result.ok) return renderAccount(req, res, { returned: { form: 'token', ...result, values: req.body } });
      // nor does the browser keep a copy of the page that shows it
      res.set('Cache-Control', 'no-store');
      res.locals.flash = `API token "${result.value.row.name}" created`;
      await renderAccount(req, res, { created: presentCreatedToken(result.value), status: 201 });
    },
  );

  pages.post('/account/tokens/:id/revoke', { access: 'requester', params: TokenIdParams }, async (req, res) => {
    const { id } = req.input.params;
    await tokens.revoke(currentUser(req).id, id, actorOf(req));
    flash(req, 'API token revoked: it no longer works');
    res.redirect(303, '/account#tokens');
  });

  return pages.router;
}
