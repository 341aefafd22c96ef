import type { Deps } from '../deps';
import { ApiRouter } from '../http/api-router';
import { MessageBody, ValidationErrorBody } from '../http/openapi';
import { actorOf } from '../modules/audit/audit.actor';
import { presentUser } from '../modules/users/users.present';
import { User, UserIdParams } from '../modules/users/users.schemas';
import { usersService } from '../modules/users/users.service';
import { presentCreatedToken, presentFailedSignIns, presentSsoStatus, presentToken } from './auth.present';
import {
  CreateToken,
  CreatedToken,
  FailedSignInList,
  LoginBody,
  SignOutPage,
  SsoStatus,
  TokenIdParams,
  TokenList,
} from './auth.schemas';
import { failedSignIns } from './failed-sign-ins';
import { currentUser } from './guards';
import { csrfToken } from './form-tokens';
import { endSession, SESSION_COOKIE, startSession } from './session';
import { INVALID_CREDENTIALS, signInService } from './sign-in.service';
import { tokensService } from './tokens.service';

const failure = (description: string) => ({ description, schema: MessageBody });
const invalid = (description: string) => ({ description, schema: ValidationErrorBody });

export function authRoutes({ db, config, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Authentication');
  const signIns = signInService(db, config);
  const tokens = tokensService(db);
  const failures = failedSignIns(db);
  const users = usersService(db, config);

  api.post(
    '/auth/login',
    {
      operationId: 'signIn',
      summary: 'Sign in with email and password',
      description:
        'Sets the connect.sid session cookie. Failed attempts are limited (by default) per account and address together (10 in 15 minutes), ' +
        'per address (100 in 15 minutes) and per account from addresses it has not signed in from in 30 days (100 a day): 429 with Retry-After. ' +
        'After 3 consecutive failures of an account, each answer waits longer (doubling, at most 5 s).',
      access: 'public',
      body: LoginBody,
      responses: {
        200: { description: 'Signed in', schema: User },
        401: failure(INVALID_CREDENTIALS),
        403: failure('Local sign-in disabled'),
        429: failure('Too many failed attempts'),
      },
    },
    async (req, res) => {
      const user = await signIns.withPassword(req.body, actorOf(req), req.get('user-agent') ?? null);
      await startSession(req, user);
      res.json(presentUser(user));
    },
  );

  api.post(
    '/auth/logout',
    { operationId: 'signOut', summary: 'Sign out (API)', access: 'public', responses: { 204: 'Session ended' } },
    async (req, res) => {
      await endSession(req);
      res.clearCookie(SESSION_COOKIE).status(204).end();
    },
  );

  api.get(
    '/logout',
    {
      operationId: 'signOutInBrowser',
      summary: 'Sign out (browser)',
      description:
        'Ends the session and redirects to /. Followed from another site (Sec-Fetch-Site: cross-site) while signed in, it ends nothing and ' +
        'answers a page with a Sign out button instead, so a link or image elsewhere cannot sign a person out.',
      access: 'public',
      responses: {
        200: { description: 'Cross-site: the page asking to sign out', contentType: 'text/html', schema: SignOutPage },
        302: 'Redirect to /',
      },
    },
    async (req, res) => {
      if (req.user && req.get('Sec-Fetch-Site') === 'cross-site') {
        // an API route, so the page's locals are given here: a bare header (no navigation) and the form's token
        return res.set('Cache-Control', 'no-store').render('sign-in/sign-out', {
          title: 'Sign out',
          currentUser: null,
          nav: [],
          flash: null,
          currentPath: req.path,
          csrfToken: csrfToken(req),
        });
      }
      await endSession(req);
      res.clearCookie(SESSION_COOKIE).redirect(302, '/');
    },
  );

  api.get(
    '/auth/user',
    {
      operationId: 'getCurrentUser',
      summary: 'The signed-in user',
      access: 'any-signed-in',
      responses: { 200: { description: 'User', schema: User }, 401: failure('Not signed in') },
    },
    (req, res) => {
      res.json(presentUser(currentUser(req)));
    },
  );

  api.get(
    '/auth/me/failed-sign-ins',
    {
      operationId: 'listOwnFailedSignIns',
      summary: "The caller's failed password sign-ins of the last 30 days",
      description:
        'Newest first: when, from which address and user agent, and why (a wrong password, or refused by the sign-in limits).',
      access: 'any-signed-in',
      responses: { 200: { description: 'Failed sign-ins', schema: FailedSignInList } },
    },
    async (req, res) => {
      res.json(presentFailedSignIns(await failures.recent(currentUser(req).id)));
    },
  );

  api.get(
    '/users/:id/failed-sign-ins',
    {
      operationId: 'listUserFailedSignIns',
      summary: "A user's failed password sign-ins of the last 30 days",
      description: 'Newest first, as the user sees their own at /api/auth/me/failed-sign-ins.',
      access: 'admin',
      params: UserIdParams,
      responses: {
        200: { description: 'Failed sign-ins', schema: FailedSignInList },
        403: failure('Not an admin'),
        404: failure('User not found'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const user = await users.get(id);
      res.json(presentFailedSignIns(await failures.recent(user.id)));
    },
  );

  api.get(
    '/auth/sso-status',
    {
      operationId: 'getSsoStatus',
      summary: 'Which sign-in methods are enabled',
      access: 'public',
      responses: { 200: { description: 'Status', schema: SsoStatus } },
    },
    (_req, res) => {
      res.json(presentSsoStatus(config));
    },
  );

  api.post(
    '/auth/tokens',
    {
      operationId: 'createApiToken',
      summary: 'Create a bearer token',
      description:
        'The token is shown once; only its hash is stored. Send it as `Authorization: Bearer <token>`. ' +
        'It expires after `expiresInDays` (default 90, at most 365); a password change or reset revokes it. Only a session can create one.',
      access: 'any-signed-in',
      body: CreateToken,
      responses: {
        201: { description: 'Created', schema: CreatedToken },
        400: invalid('Validation failed'),
        403: failure('Called with an API token'),
      },
    },
    async (req, res) => {
      tokens.assertMayCreate(req.authMethod);
      const body = req.input.body;
      res
        .status(201)
        .json(
          presentCreatedToken(await tokens.create(currentUser(req).id, body.name, body.expiresInDays, actorOf(req))),
        );
    },
  );

  api.get(
    '/auth/tokens',
    {
      operationId: 'listApiTokens',
      summary: "The caller's tokens (without secrets)",
      access: 'any-signed-in',
      responses: { 200: { description: 'Tokens', schema: TokenList } },
    },
    async (req, res) => {
      res.json((await tokens.list(currentUser(req).id)).map(presentToken));
    },
  );

  api.delete(
    '/auth/tokens/:id',
    {
      operationId: 'revokeApiToken',
      summary: 'Revoke a token',
      access: 'any-signed-in',
      params: TokenIdParams,
      responses: { 204: 'Revoked', 404: { description: 'Not found', schema: MessageBody } },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await tokens.revoke(currentUser(req).id, id, actorOf(req));
      res.status(204).end();
    },
  );

  return api.router;
}
