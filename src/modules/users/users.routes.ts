import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { retireInitialAdminPassword } from '../../auth/bootstrap-admin';
import { actorOf } from '../audit/audit.actor';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import {
  presentDeletionCheck,
  presentPasswordChanged,
  presentPasswordReset,
  presentPickingList,
  presentReactivated,
  presentUser,
} from './users.present';
import {
  ChangeOwnPasswordBody,
  CreateUser,
  PickingListBody,
  PickingListResult,
  ReactivatedUser,
  ResetPasswordBody,
  RoleBody,
  User,
  UserDeletionCheck,
  UserDeletionRefused,
  UserIdParams,
  UserList,
} from './users.schemas';
import { usersService } from './users.service';

const failure = (description: string) => ({ description, schema: MessageBody });
const invalid = (description: string) => ({ description, schema: ValidationErrorBody });

export function usersRoutes({ db, docs, config, logger }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Users');
  const users = usersService(db, config);

  api.get(
    '/users',
    {
      operationId: 'listUsers',
      summary: 'List users',
      access: 'admin',
      responses: {
        200: { description: 'Users by email', schema: UserList },
        401: failure('Not signed in'),
        403: failure('Not an admin'),
      },
    },
    async (_req, res) => {
      res.json((await users.list()).map(presentUser));
    },
  );

  api.post(
    '/users',
    {
      operationId: 'createUser',
      summary: 'Create a user',
      description:
        'Without a password the user signs in with single sign-on only (matched by email on first SSO sign-in).',
      access: 'admin',
      body: CreateUser,
      responses: {
        201: { description: 'Created', schema: User },
        400: invalid('Validation failed'),
        403: failure('Not an admin'),
        409: failure('Email already in use'),
      },
    },
    async (req, res) => {
      const body = req.input.body;
      res.status(201).json(presentUser(await users.createUnique(body, actorOf(req))));
    },
  );

  api.post(
    '/users/reset-password',
    {
      operationId: 'changeOwnPassword',
      summary: 'Change your own password',
      description:
        'Requires the current password. Your other sessions and your API tokens end; this session stays signed in. ' +
        "The first admin's generated password must be changed here (or on the change-password page) before any other " +
        'call, which answers 403 until then; the change deletes DATA_DIR/initial-admin-password.',
      access: 'any-signed-in',
      body: ChangeOwnPasswordBody,
      responses: {
        200: { description: 'Changed', schema: MessageBody },
        400: failure('Validation failed, wrong current password or no local password'),
      },
    },
    async (req, res) => {
      const body = req.input.body;
      const { generatedPasswordChanged } = await users.changeOwnPassword(
        currentUser(req).id,
        body,
        actorOf(req),
        req.authMethod === 'session' ? req.sessionID : undefined,
      );
      if (generatedPasswordChanged) await retireInitialAdminPassword(config, logger);
      res.json(presentPasswordChanged());
    },
  );

  const setRole = {
    summary: "Change a user's role",
    description: 'The last active admin cannot be demoted.',
    access: 'admin' as const,
    params: UserIdParams,
    body: RoleBody,
    responses: {
      200: { description: 'Updated user', schema: User },
      400: failure('Invalid role or last admin'),
      403: failure('Not an admin'),
      404: failure('User not found'),
    },
  };
  for (const [method, operationId] of [
    ['put', 'setUserRole'],
    ['patch', 'changeUserRole'],
  ] as const) {
    api[method]('/users/:id/role', { ...setRole, operationId }, async (req, res) => {
      const { id } = req.input.params;
      const { role } = req.input.body;
      res.json(presentUser(await users.setRole(id, role, actorOf(req))));
    });
  }

  api.patch(
    '/users/:id/reset-password',
    {
      operationId: 'resetUserPassword',
      summary: "Set a user's password",
      description: "The user's sessions and API tokens end.",
      access: 'admin',
      params: UserIdParams,
      body: ResetPasswordBody,
      responses: {
        200: { description: 'Reset', schema: MessageBody },
        400: invalid('Validation failed'),
        403: failure('Not an admin'),
        404: failure('User not found'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const { password } = req.input.body;
      await users.resetPassword(id, password, actorOf(req));
      res.json(presentPasswordReset());
    },
  );

  api.patch(
    '/users/:id/preferences/picking-list',
    {
      operationId: 'setPickingListPreference',
      summary: 'Show or hide the picking list',
      access: 'auth',
      description: "Your own preference, or anyone's for an admin.",
      params: UserIdParams,
      body: PickingListBody,
      responses: {
        200: { description: 'Updated', schema: PickingListResult },
        400: invalid('showPickingList is not a boolean'),
        403: failure("Changing another user's preference as a non-admin"),
        404: failure('User not found'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      users.assertMayChangePickingList(id, currentUser(req));
      const { showPickingList } = req.input.body;
      res.json(presentPickingList(await users.setPickingList(id, showPickingList, actorOf(req))));
    },
  );

  api.get(
    '/users/:id/deletion-check',
    {
      operationId: 'checkUserDeletion',
      summary: 'Can this user be deleted outright?',
      description:
        'A user can be deleted when no record refers to them other than their own API tokens and permission grants ' +
        '(and settings they last changed). Anyone who created items, moved stock, processed sales, wrote notes, ... can only be deactivated.',
      access: 'admin',
      params: UserIdParams,
      responses: {
        200: { description: 'Check', schema: UserDeletionCheck },
        403: failure('Not an admin'),
        404: failure('User not found'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentDeletionCheck(await users.deletionCheck(id)));
    },
  );

  api.delete(
    '/users/:id/safe',
    {
      operationId: 'deleteUserSafely',
      summary: 'Delete a user who owns no records',
      access: 'admin',
      params: UserIdParams,
      responses: {
        204: 'Deleted',
        400: failure('Deleting yourself'),
        403: failure('Not an admin'),
        404: failure('User not found'),
        409: { description: 'The user owns records', schema: UserDeletionRefused },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await users.safeDelete(id, actorOf(req));
      res.status(204).end();
    },
  );

  api.patch(
    '/users/:id/reactivate',
    {
      operationId: 'reactivateUser',
      summary: 'Reactivate a deactivated user',
      description:
        'Sets isActive true so the user can sign in again; sessions and API tokens ended by the deactivation stay ended.',
      access: 'admin',
      params: UserIdParams,
      responses: {
        200: { description: 'Reactivated', schema: ReactivatedUser },
        403: failure('Not an admin'),
        404: failure('User not found'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentReactivated(await users.reactivate(id, actorOf(req))));
    },
  );

  api.delete(
    '/users/:id',
    {
      operationId: 'deactivateUser',
      summary: 'Deactivate a user',
      description:
        'Sets isActive false; their sessions and API tokens stop working at once. The record is kept. The last active admin cannot be deactivated.',
      access: 'admin',
      params: UserIdParams,
      responses: {
        204: 'Deactivated',
        400: failure('Removing yourself or the last active admin'),
        403: failure('Not an admin'),
        404: failure('User not found'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await users.deactivate(id, actorOf(req));
      res.status(204).end();
    },
  );

  return api.router;
}
