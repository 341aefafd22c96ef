import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import {
  AuthorisedUser,
  AuthorisedUserBody,
  AuthorisedUsers,
  ChargeCode,
  ChargeCodeList,
  ChargeCodeSummary,
  CodeCategoryParams,
  CodeParams,
  CodeUserParams,
  CreateChargeCode,
  ExcludedCategories,
  ExclusionBody,
  ExpiringChargeCodes,
  HoldBody,
  UpdateChargeCode,
} from './chargecodes.schemas';
import {
  presentAuthorisedUser,
  presentAuthorisedUsers,
  presentChargeCode,
  presentChargeCodeSummary,
  presentExcludedCategory,
  presentExpiringChargeCode,
} from './chargecodes.present';
import { chargeCodesService, type SalesOnChargeCode } from './chargecodes.service';
import { CHARGE_CODE_ADMINS, requireHoldRole } from './chargecodes.policy';
import { actorOf } from '../audit/audit.actor';
import { currentUser } from '../../auth/guards';

const notFound = { description: 'Charge code not found', schema: MessageBody };
const invalid = { description: 'Validation failed', schema: ValidationErrorBody };

export function chargeCodesRoutes({ db, docs, config }: Deps, salesOnChargeCode: SalesOnChargeCode) {
  const api = new ApiRouter({ docs, db }, '/api', 'Charge codes');
  const codes = chargeCodesService(db, config);
  const holdRole = requireHoldRole(db);

  api.get(
    '/chargecodes',
    {
      operationId: 'listChargeCodes',
      summary: 'List charge codes',
      access: 'auth',
      responses: { 200: { description: 'Charge codes by code', schema: ChargeCodeList } },
    },
    async (_req, res) => {
      res.json((await codes.list()).map(presentChargeCodeSummary));
    },
  );

  api.get(
    '/chargecodes/expiring/soon',
    {
      operationId: 'listChargeCodesExpiringSoon',
      summary: 'Charge codes expiring within 30 days',
      description:
        'Codes whose validUntil lies between now and 30 days from now, soonest first, each with daysUntilExpiry.',
      access: 'auth',
      responses: { 200: { description: 'Expiring codes', schema: ExpiringChargeCodes } },
    },
    async (_req, res) => {
      res.json((await codes.expiringSoon()).map(presentExpiringChargeCode));
    },
  );

  api.get(
    '/chargecodes/:code',
    {
      operationId: 'getChargeCode',
      summary: 'Read a charge code',
      access: 'auth',
      params: CodeParams,
      responses: {
        200: {
          description: 'Charge code (the pin is never returned; hasPin says whether one is set)',
          schema: ChargeCode,
        },
        404: notFound,
      },
    },
    async (req, res) => {
      const { code } = req.input.params;
      res.json(presentChargeCode(await codes.get(code)));
    },
  );

  api.post(
    '/chargecodes',
    {
      operationId: 'createChargeCode',
      summary: 'Create a charge code',
      description:
        'The pin is stored hashed. authorisedBy defaults to the creating admin. A plain date validUntil covers that whole day (UTC). ' +
        'approverEmail (null: only admins approve) and approvalThreshold (a decimal string; null: no approval needed) decide which requests on the code wait for approval.',
      access: CHARGE_CODE_ADMINS,
      body: CreateChargeCode,
      responses: {
        201: { description: 'Created', schema: ChargeCode },
        400: invalid,
        403: 'Not an admin',
        409: { description: 'Code already exists', schema: MessageBody },
      },
    },
    async (req, res) => {
      const body = req.input.body;
      res.status(201).json(presentChargeCode(await codes.create(body, actorOf(req))));
    },
  );

  api.put(
    '/chargecodes/:code',
    {
      operationId: 'updateChargeCode',
      summary: 'Update a charge code',
      description:
        'Partial update of title, validFrom, validUntil, costCentre, authorisedBy, pin (null removes the pin), approverEmail and approvalThreshold (null removes either). The code itself cannot change.',
      access: CHARGE_CODE_ADMINS,
      params: CodeParams,
      body: UpdateChargeCode,
      responses: {
        200: { description: 'Updated', schema: ChargeCode },
        400: invalid,
        403: 'Not an admin',
        404: notFound,
      },
    },
    async (req, res) => {
      const { code } = req.input.params;
      const body = req.input.body;
      res.json(presentChargeCode(await codes.update(code, body, actorOf(req))));
    },
  );

  api.delete(
    '/chargecodes/:code',
    {
      operationId: 'deleteChargeCode',
      summary: 'Delete a charge code',
      description:
        'Refused with 409 while any sale uses the code (sales history keeps its charge code). Exclusions and authorised users go with it.',
      access: CHARGE_CODE_ADMINS,
      params: CodeParams,
      responses: {
        204: 'Deleted',
        403: 'Not an admin',
        404: notFound,
        409: { description: 'Used by sales', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { code } = req.input.params;
      await codes.remove(code, actorOf(req), salesOnChargeCode);
      res.status(204).end();
    },
  );

  api.patch(
    '/chargecodes/:code/hold',
    {
      operationId: 'setChargeCodeHold',
      summary: 'Put a charge code on hold or release it',
      description:
        'holdReason is required when onHold is true and cleared when false; on a release, a holdReason given is the reason for releasing, kept in the audit trail. ' +
        'A code on hold is refused by draft save and processing. Placing a hold records who placed it and at what role (holdPlacedBy, holdPlacedAt). ' +
        'Open to the role the setting chargeCodes.holdRole names (default user) and above; on top of that, a hold is changed or released only by ' +
        'its placer\'s role or above (403 "This hold was placed by an admin; only an admin can release it").',
      access: 'auth',
      params: CodeParams,
      body: HoldBody,
      responses: {
        200: { description: 'The code with its hold state', schema: ChargeCodeSummary },
        400: invalid,
        403: {
          description: "Below the chargeCodes.holdRole role, or less senior than the hold's placer",
          schema: MessageBody,
        },
        404: notFound,
      },
    },
    holdRole,
    async (req, res) => {
      const { code } = req.input.params;
      const body = req.input.body;
      const hold = await codes.setHold(
        code,
        { onHold: body.onHold, reason: body.holdReason },
        { actor: actorOf(req), user: currentUser(req) },
      );
      res.json(presentChargeCodeSummary(hold));
    },
  );

  api.get(
    '/chargecodes/:code/exclusions',
    {
      operationId: 'listChargeCodeExclusions',
      summary: 'Categories excluded from a charge code',
      access: 'auth',
      params: CodeParams,
      responses: { 200: { description: 'Excluded categories', schema: ExcludedCategories }, 404: notFound },
    },
    async (req, res) => {
      const { code } = req.input.params;
      res.json((await codes.listExclusions(code)).map(presentExcludedCategory));
    },
  );

  api.post(
    '/chargecodes/:code/exclusions',
    {
      operationId: 'addChargeCodeExclusion',
      summary: 'Exclude a category from a charge code',
      description:
        'Idempotent: 201 when newly excluded, 200 when it already was. Answers with the full exclusion list. ' +
        'Open to the role the setting chargeCodes.holdRole names (default user) and above; 403 below it.',
      access: 'auth',
      params: CodeParams,
      body: ExclusionBody,
      responses: {
        201: { description: 'Excluded', schema: ExcludedCategories },
        200: { description: 'Already excluded', schema: ExcludedCategories },
        400: invalid,
        403: 'Below the chargeCodes.holdRole role',
        404: { description: 'Charge code or category not found', schema: MessageBody },
      },
    },
    holdRole,
    async (req, res) => {
      const { code } = req.input.params;
      const { categoryId } = req.input.body;
      const added = await codes.addExclusion(code, categoryId, actorOf(req));
      res.status(added ? 201 : 200).json((await codes.listExclusions(code)).map(presentExcludedCategory));
    },
  );

  api.delete(
    '/chargecodes/:code/exclusions/:categoryId',
    {
      operationId: 'removeChargeCodeExclusion',
      summary: 'Remove a category exclusion',
      description: 'Open to the role the setting chargeCodes.holdRole names (default user) and above; 403 below it.',
      access: 'auth',
      params: CodeCategoryParams,
      responses: {
        204: 'Removed',
        403: 'Below the chargeCodes.holdRole role',
        404: { description: 'Charge code or exclusion not found', schema: MessageBody },
      },
    },
    holdRole,
    async (req, res) => {
      const { code, categoryId } = req.input.params;
      await codes.removeExclusion(code, categoryId, actorOf(req));
      res.status(204).end();
    },
  );

  api.get(
    '/chargecodes/:code/authorized-users',
    {
      operationId: 'listChargeCodeAuthorisedUsers',
      summary: 'People authorised to use a charge code',
      access: 'auth',
      params: CodeParams,
      responses: { 200: { description: 'Authorised users', schema: AuthorisedUsers }, 404: notFound },
    },
    async (req, res) => {
      const { code } = req.input.params;
      res.json(presentAuthorisedUsers(await codes.listUsers(code)));
    },
  );

  api.post(
    '/chargecodes/:code/authorized-users',
    {
      operationId: 'addChargeCodeAuthorisedUser',
      summary: 'Authorise a person to use a charge code',
      description: 'Body {userName, email, department?, notes?}. One entry per email per code (409 on a repeat).',
      access: CHARGE_CODE_ADMINS,
      params: CodeParams,
      body: AuthorisedUserBody,
      responses: {
        201: { description: 'Added', schema: AuthorisedUser },
        400: invalid,
        403: 'Not an admin',
        404: notFound,
        409: { description: 'Already authorised', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { code } = req.input.params;
      const body = req.input.body;
      res.status(201).json(presentAuthorisedUser(await codes.addUser(code, body, actorOf(req))));
    },
  );

  api.delete(
    '/chargecodes/:code/authorized-users/:id',
    {
      operationId: 'removeChargeCodeAuthorisedUser',
      summary: 'Remove an authorised person from a charge code',
      access: CHARGE_CODE_ADMINS,
      params: CodeUserParams,
      responses: {
        204: 'Removed',
        403: 'Not an admin',
        404: { description: 'Charge code or entry not found', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { code, id } = req.input.params;
      await codes.removeUser(code, id, actorOf(req));
      res.status(204).end();
    },
  );

  return api.router;
}
