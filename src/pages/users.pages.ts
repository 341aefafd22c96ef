import { Router, type Response } from 'express';
import type { Deps } from '../deps';
import { presentFailedSignIns } from '../auth/auth.present';
import { failedSignIns } from '../auth/failed-sign-ins';
import { PERMISSIONS, isPermissionKey } from '../auth/permissions';
import { BadRequest } from '../http/errors';
import { parse } from '../http/validate';
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
import { requirePage } from './page-guards';

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
  const pages = Router();
  const users = usersService(db, config);
  const failures = failedSignIns(db);
  const view = { ...ASSETS, roles: ROLES, roleLabels: ROLE_LABELS, fullName };

  pages.get('/users', requirePage('admin'), async (_req, res) => {
    const people = (await users.listWithPermissions()).map(presentUserPermissions);
    res.render('users/index', { ...view, title: 'Users', people, permissions: PERMISSIONS });
  });

  const renderNew = (
    res: Response,
    status: number,
    values: Record<string, unknown>,
    errors: FieldErrors,
    message: string | null,
  ) =>
    res.status(status).render('users/new', {
      ...view,
      title: 'New user',
      values,
      errors,
      message,
      passwordMinLength: PASSWORD_MIN_LENGTH,
    });

  pages.get('/users/new', requirePage('admin'), (_req, res) => {
    renderNew(res, 200, { email: '', firstName: '', lastName: '', role: 'user' }, {}, null);
  });

  pages.post('/users', requirePage('admin'), async (req, res) => {
    // a blank password is none (single sign-on only); the other fields go as typed, so a blank name is "is required"
    const { password, ...fields } = req.body as Record<string, unknown>;
    const result = await attempt(async () =>
      users.createUnique(parse(CreateUser, { ...fields, ...filledIn({ password }) }), actorOf(req)),
    );
    // the password typed is never sent back into the page
    if (!result.ok) return renderNew(res, result.status, { ...req.body, password: '' }, result.errors, result.message);
    flash(req, `User ${result.value.email} created`);
    res.redirect(303, `/users/${result.value.id}`);
  });

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

  pages.get('/users/:id', requirePage('admin'), async (req, res) => {
    const { id } = parse(UserIdParams, req.params);
    await renderUser(res, id);
  });

  pages.post('/users/:id/role', requirePage('admin'), async (req, res) => {
    const { id } = parse(UserIdParams, req.params);
    const result = await attempt(async () => users.setRole(id, parse(RoleBody, req.body).role, actorOf(req)));
    if (!result.ok) return renderUser(res, id, { form: 'role', ...result, values: req.body });
    flash(req, `Role changed to ${ROLE_LABELS[result.value.role]}`);
    res.redirect(303, `/users/${id}`);
  });

  pages.post('/users/:id/deactivate', requirePage('admin'), async (req, res) => {
    const { id } = parse(UserIdParams, req.params);
    const result = await attempt(() => users.deactivate(id, actorOf(req)));
    if (!result.ok) return renderUser(res, id, { form: 'status', ...result, values: {} });
    flash(req, 'User deactivated: their sessions and API tokens have ended');
    res.redirect(303, `/users/${id}`);
  });

  pages.post('/users/:id/reactivate', requirePage('admin'), async (req, res) => {
    const { id } = parse(UserIdParams, req.params);
    flash(req, presentReactivated(await users.reactivate(id, actorOf(req))).message);
    res.redirect(303, `/users/${id}`);
  });

  pages.post('/users/:id/password', requirePage('admin'), async (req, res) => {
    const { id } = parse(UserIdParams, req.params);
    const result = await attempt(async () =>
      users.resetPassword(id, parse(ResetPasswordBody, req.body).password, actorOf(req)),
    );
    if (!result.ok) return renderUser(res, id, { form: 'password', ...result, values: { password: '' } });
    flash(req, presentPasswordReset().message);
    res.redirect(303, `/users/${id}`);
  });

  /** The grid's cell: one form per user and permission, posting whether it is to be granted. */
  pages.post('/users/:userId/permissions/:permission', requirePage('admin'), async (req, res) => {
    const { userId, permission } = parse(PermissionParams, req.params);
    if (!isPermissionKey(permission)) throw BadRequest(`Unknown permission '${permission}'`);
    const { granted } = parse(GrantBody, { granted: checked(req.body.granted) });
    const user = presentUserPermissions(await users.setPermission(userId, permission, granted, actorOf(req)));
    const name = PERMISSIONS.find((p) => p.key === permission)!.name;
    flash(req, granted ? `${name} granted to ${fullName(user)}` : `${name} revoked from ${fullName(user)}`);
    res.redirect(303, '/users#permissions');
  });

  async function renderDelete(res: Response, id: string, status = 200, message: string | null = null) {
    const user = presentUser(await users.get(id));
    const check = presentDeletionCheck(await users.deletionCheck(id));
    res
      .status(status)
      .render('users/delete', { ...view, title: `Delete ${fullName(user) || user.email}`, user, check, message });
  }

  // The safe deletion's check comes first: the page says what refers to the user before offering to delete.
  pages.get('/users/:id/delete', requirePage('admin'), async (req, res) => {
    const { id } = parse(UserIdParams, req.params);
    await renderDelete(res, id);
  });

  pages.post('/users/:id/delete', requirePage('admin'), async (req, res) => {
    const { id } = parse(UserIdParams, req.params);
    const result = await attempt(() => users.safeDelete(id, actorOf(req)));
    if (!result.ok) return renderDelete(res, id, result.status, result.message);
    flash(req, 'User deleted');
    res.redirect(303, '/users');
  });

  return pages;
}
