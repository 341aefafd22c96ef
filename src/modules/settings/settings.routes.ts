import type { Deps } from '../../deps';
import { PERMISSIONS, isPermissionKey } from '../../auth/permissions';
import { ApiRouter } from '../../http/api-router';
import { BadRequest } from '../../http/errors';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { parse } from '../../http/validate';
import { usersService } from '../users/users.service';
import { presentPermission, presentSetting, presentUserPermissions } from './settings.present';
import {
  GrantBody,
  PermissionList,
  PermissionParams,
  Setting,
  SettingBody,
  settingBodyFor,
  SettingKeyParams,
  SettingList,
  UserPermissions,
  UserPermissionsList,
} from './settings.schemas';
import { settingsService } from './settings.service';
import { actorOf } from '../audit/audit.actor';

/** /api/settings: permission definitions and grants, and the system settings (VAT rates live in vat-rates). */

const failure = (description: string) => ({ description, schema: MessageBody });
const invalid = (description: string) => ({ description, schema: ValidationErrorBody });

export function settingsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Settings');
  const users = usersService(db);
  const settings = settingsService(db);

  api.get(
    '/settings/permissions',
    {
      operationId: 'listPermissions',
      summary: 'Permission definitions',
      access: 'auth',
      responses: { 200: { description: 'Permissions', schema: PermissionList } },
    },
    (_req, res) => {
      res.json(PERMISSIONS.map(presentPermission));
    },
  );

  api.get(
    '/settings/users',
    {
      operationId: 'listUserPermissions',
      summary: 'Users with their permissions',
      description: 'Admins hold every permission implicitly (effectivePermissions).',
      access: 'admin',
      responses: { 200: { description: 'Users', schema: UserPermissionsList }, 403: failure('Not an admin') },
    },
    async (_req, res) => {
      res.json((await users.listWithPermissions()).map(presentUserPermissions));
    },
  );

  api.put(
    '/settings/users/:userId/permissions/:permission',
    {
      operationId: 'setUserPermission',
      summary: 'Grant or revoke a permission',
      access: 'admin',
      params: PermissionParams,
      body: GrantBody,
      responses: {
        200: { description: 'The user with their permissions', schema: UserPermissions },
        400: failure('Unknown permission or invalid body'),
        403: failure('Not an admin'),
        404: failure('User not found'),
      },
    },
    async (req, res) => {
      const { userId, permission } = req.input.params;
      if (!isPermissionKey(permission)) throw BadRequest(`Unknown permission '${permission}'`);
      const { granted } = req.input.body;
      res.json(presentUserPermissions(await users.setPermission(userId, permission, granted, actorOf(req))));
    },
  );

  api.get(
    '/settings',
    {
      operationId: 'listSettings',
      summary: 'All system settings',
      access: 'admin',
      responses: { 200: { description: 'Settings by key', schema: SettingList }, 403: failure('Not an admin') },
    },
    async (_req, res) => {
      res.json((await settings.list()).map(presentSetting));
    },
  );

  api.put(
    '/settings/:key',
    {
      operationId: 'updateSetting',
      summary: 'Set a system setting',
      description:
        'Settings the service reads have their own value: chargeCodes.holdRole {role: user|manager|admin} (default user: the lowest role ' +
        "that may place or lift a hold and change a code's exclusions); chargeCodes.requirePin {enabled} (default false: when on, " +
        'processing a sale against a code with a PIN needs the PIN); chargeCodes.requireAuthorisedUser {enabled} (default false: when on, ' +
        "a sale's recipient email must be one of the code's authorised users); finance.accountCodes {default, byCategory?: {<category id or name>: code}} " +
        "(the ledger account code of a recharge journal line: its item's category's, else the default; unset, the journal's Account code is empty); " +
        'access.profile {profile: spec|strict} (default spec: ' +
        'the access the interface gives; strict: importing items, creating and editing suppliers and item sources, exporting the ' +
        "catalogue and reading invoice PDFs need a manager, a sale's recipient its processor or a manager, and supplier prices and " +
        'order costs are null for users). Any other key takes any JSON object.',
      access: 'admin',
      params: SettingKeyParams,
      body: SettingBody,
      responses: {
        200: { description: 'Saved', schema: Setting },
        400: invalid('Invalid key or value'),
        403: failure('Not an admin'),
      },
    },
    async (req, res) => {
      const { key } = req.input.params;
      const { value } = parse(settingBodyFor(key), req.body);
      res.json(presentSetting(await settings.put(key, value, actorOf(req))));
    },
  );

  return api.router;
}
