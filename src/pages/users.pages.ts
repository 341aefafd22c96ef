import type { Response, Router } from 'express';
import type { Deps } from '../deps';
import { presentFailedSignIns } from '../auth/auth.present';
import { failedSignIns } from '../auth/failed-sign-ins';
import { PERMISSIONS, isPermissionKey } from '../auth/permissions';
import { BadRequest } from '../http/errors';
import { actorOf } from '../modules/audit/audit.actor';
import { presentUserPermissions } from '../modules/settings/settings.present';
import { GrantBody, PermissionParams } from '../modules/settings/settings.schemas';
import {
  presentDeletionCheck,
  presentPasswordReset,
  presentReactivated,
  presentUser,
} from '../modules/users/users.present';
import { PASSWORD_MIN_LENGTH } from '../auth/password-rule';
import { ROLES } from '../auth/roles';
import { CreateUser, ResetPasswordBody, RoleBody, UserIdParams, type User } from '../modules/users/users.schemas';
import { usersService } from '../modules/users/users.service';
import { attempt, checked, filledIn, flash, formState, type FieldErrors, type ReturnedForm } from './forms';
import { PageRouter } from './page-route';

const ASSETS = { stylesheets: ['/assets/css/users.css'] };
export const ROLE_LABELS: Record<User['role'], string> = {
  requester: 'Requester',
  user: 'User',
  manager: 'Manager',
  admin: 'Admin',
};
const fullName = (user: Pick<User, 'firstName' | 'lastName'>) => `${user.firstName} ${user.lastName}`.trim();

/** The page's forms: the one a refused post re-renders is named in its ReturnedForm. */
type UserFormName = 'role' | 'status' | 'password';

/** The users' admin pages: every route is the API's admin-only users and permission routes, as pages. */
export function usersPages({ db, config }: Deps): Router {
  const pages = new PageRouter(db);
  const users = usersService(db, config);
  const failures = failedSignIns(db);
  const view = { ...ASSETS, roles: ROLES, roleLabels: ROLE_LABELS, fullName };

  pages.get('/users', { access: 'admin' }, async (_req, res) => {
    const people = (await users.listWithPermissions()).map(presentUserPermissions);
    res.render('users/index', { ...view, title: 'Users', people, permissions: PERMISSIONS });
  });

  const renderNew = (
    res: Response,
    {
      values,
      errors = {},
      message = null,
      status = 200,
    }: { values: Record<string, unknown>; errors?: FieldErrors; message?: string | null; status?: number },
  ) =>
    res.status(status).render('users/new', {
      ...view,
      title: 'New user',
      values,
      errors,
      message,
      passwordMinLength: PASSWORD_MIN_LENGTH,
    });

  pages.get('/users/new', { access: 'admin' }, (_req, res) => {
    renderNew(res, { values: { email: '', firstName: '', lastName: '', role: 'user' } });
  });

  pages.post(
    '/users',
    {
      access: 'admin',
      form: CreateUser,
      // a blank password is none (single sign-on only); the other fields go as typed, so a blank name is "is required"
      fromForm: ({ password, ...fields }) => ({ ...fields, ...filledIn({ password }) }),
    },
    async (req, res) => {
      const result = await attempt(async () => users.createUnique(req.input.form, actorOf(req)));
      // the password typed is never sent back into the page
      if (!result.ok)
        return renderNew(res, {
          values: { ...req.body, password: '' },
          errors: result.errors,
          message: result.message,
          status: result.status,
        });
      flash(req, `User ${result.value.email} created`);
      res.redirect(303, `/users/${result.value.id}`);
    },
  );

  async function renderUser(res: Response, id: string, returned: ReturnedForm<UserFormName> | null = null) {
    const user = presentUser(await users.get(id));
    res.status(returned?.status ?? 200).render('users/show', {
      ...view,
      title: fullName(user) || user.email,
      user,
      passwordMinLength: PASSWORD_MIN_LENGTH,
      roleForm: formState(returned, 'role', { role: user.role }),
      statusForm: formState(returned, 'status', {}),
      passwordForm: formState(returned, 'password', { password: '' }),
      ...presentFailedSignIns(await failures.recent(id)),
    });
  }

  pages.get('/users/:id', { access: 'admin', params: UserIdParams }, async (req, res) => {
    const { id } = req.input.params;
    await renderUser(res, id);
  });

  pages.post('/users/:id/role', { access: 'admin', params: UserIdParams, form: RoleBody }, async (req, res) => {
    const { id } = req.input.params;
    const result = await attempt(async () => users.setRole(id, req.input.form.role, actorOf(req)));
    if (!result.ok) return renderUser(res, id, { form: 'role', ...result, values: req.body });
    flash(req, `Role changed to ${ROLE_LABELS[result.value.role]}`);
    res.redirect(303, `/users/${id}`);
  });

  pages.post('/users/:id/deactivate', { access: 'admin', params: UserIdParams }, async (req, res) => {
    const { id } = req.input.params;
    const result = await attempt(() => users.deactivate(id, actorOf(req)));
    if (!result.ok) return renderUser(res, id, { form: 'status', ...result, values: {} });
    flash(req, 'User deactivated: their sessions and API tokens have ended');
    res.redirect(303, `/users/${id}`);
  });

  pages.post('/users/:id/reactivate', { access: 'admin', params: UserIdParams }, async (req, res) => {
    const { id } = req.input.params;
    flash(req, presentReactivated(await users.reactivate(id, actorOf(req))).message);
    res.redirect(303, `/users/${id}`);
  });

  pages.post(
    '/users/:id/password',
    { access: 'admin', params: UserIdParams, form: ResetPasswordBody },
    async (req, res) => {
      const { id } = req.input.params;
      const result = await attempt(async () => users.resetPassword(id, req.input.form.password, actorOf(req)));
      if (!result.ok) return renderUser(res, id, { form: 'password', ...result, values: { password: '' } });
      flash(req, presentPasswordReset().message);
      res.redirect(303, `/users/${id}`);
    },
  );

  /** The grid's cell: one form per user and permission, posting whether it is to be granted. */
  pages.post(
    '/users/:userId/permissions/:permission',
    {
      access: 'admin',
      params: PermissionParams,
      form: GrantBody,
      fromForm: (body) => ({ granted: checked(body.granted) }),
    },
    async (req, res) => {
      const { userId, permission } = req.input.params;
      if (!isPermissionKey(permission)) throw BadRequest(`Unknown permission '${permission}'`);
      const { granted } = req.input.form;
      const user = presentUserPermissions(await users.setPermission(userId, permission, granted, actorOf(req)));
      const name = PERMISSIONS.find((p) => p.key === permission)!.name;
      flash(req, granted ? `${name} granted to ${fullName(user)}` : `${name} revoked from ${fullName(user)}`);
      res.redirect(303, '/users#permissions');
    },
  );

  async function renderDelete(res: Response, id: string, status = 200, message: string | null = null) {
    const user = presentUser(await users.get(id));
    const check = presentDeletionCheck(await users.deletionCheck(id));
    res
      .status(status)
      .render('users/delete', { ...view, title: `Delete ${fullName(user) || user.email}`, user, check, message });
  }

  // The safe deletion's check comes first: the page says what refers to the user before offering to delete.
  pages.get('/users/:id/delete', { access: 'admin', params: UserIdParams }, async (req, res) => {
    const { id } = req.input.params;
    await renderDelete(res, id);
  });

  pages.post('/users/:id/delete', { access: 'admin', params: UserIdParams }, async (req, res) => {
    const { id } = req.input.params;
    const result = await attempt(() => users.safeDelete(id, actorOf(req)));
    if (!result.ok) return renderDelete(res, id, result.status, result.message);
    flash(req, 'User deleted');
    res.redirect(303, '/users');
  });

  return pages.router;
}
