import type { Request } from 'express';
import type { Deps } from '../deps';
import { ApiRouter } from '../http/api-router';
import { Forbidden, TooManyRequests, Unauthorized } from '../http/errors';
import { MessageBody } from '../http/openapi';
import { parse } from '../http/validate';
import { presentUser, usersService, type UserRow } from '../modules/users/users.service';
import { User } from '../modules/users/users.schemas';
import { CreateToken, CreatedToken, LoginBody, SsoStatus, Token, TokenIdParams } from './auth.schemas';
import { currentUser } from './guards';
import { loginLimiter } from './login-limiter';
import { verifyAgainstDecoy, verifyPassword } from './passwords';
import { SESSION_COOKIE } from './session';
import { tokensService } from './tokens.service';
import { z } from 'zod';

const INVALID_CREDENTIALS = 'Invalid email or password';

export function signIn(req: Request, user: UserRow): Promise<void> {
  // passport regenerates the session id here, so a planted session id is worthless.
  return new Promise((resolve, reject) =>
    req.login(user, (err) => {
      if (err) return reject(err);
      req.session.signedInAt = Date.now();
      req.session.lastSeenAt = Date.now();
      resolve();
    }),
  );
}

function endSession(req: Request): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!req.session) return resolve();
    req.logout({ keepSessionInfo: false }, (err) => {
      if (err) return reject(err);
      req.session.destroy((destroyErr) => (destroyErr ? reject(destroyErr) : resolve()));
    });
  });
}

export function authRoutes({ db, config, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Authentication');
  const users = usersService(db);
  const tokens = tokensService(db);
  const limiter = loginLimiter(db, config.loginMaxFailuresPerMinute);

  api.post(
    '/auth/login',
    {
      summary: 'Sign in with email and password',
      description: 'Sets the connect.sid session cookie. Failed attempts are limited per account and per address (429).',
      access: 'public',
      body: LoginBody,
      responses: { 200: { description: 'Signed in', schema: User }, 401: INVALID_CREDENTIALS, 403: 'Local sign-in disabled', 429: 'Too many failed attempts' },
    },
    async (req, res) => {
      if (!config.localAuthEnabled) throw Forbidden('Local sign-in is disabled; use single sign-on');
      const { email, password } = parse(LoginBody, req.body);
      const ip = req.ip ?? 'unknown';
      const wait = await limiter.retryAfter(email, ip);
      if (wait > 0) {
        res.set('Retry-After', String(wait));
        throw TooManyRequests('Too many failed sign-in attempts, try again later');
      }
      const user = await users.findByEmail(email);
      const valid =
        user?.password_hash ? await verifyPassword(password, user.password_hash) : await verifyAgainstDecoy(password);
      if (!user || !valid || !user.is_active) {
        await limiter.recordFailure(email, ip);
        throw Unauthorized(INVALID_CREDENTIALS);
      }
      await limiter.recordSuccess(email);
      await signIn(req, user);
      res.json(presentUser(user));
    },
  );

  api.post(
    '/auth/logout',
    { summary: 'Sign out (API)', access: 'public', responses: { 204: 'Session ended' } },
    async (req, res) => {
      await endSession(req);
      res.clearCookie(SESSION_COOKIE).status(204).end();
    },
  );

  api.get(
    '/logout',
    { summary: 'Sign out (browser)', description: 'Ends the session and redirects to /.', access: 'public', responses: { 302: 'Redirect to /' } },
    async (req, res) => {
      await endSession(req);
      res.clearCookie(SESSION_COOKIE).redirect(302, '/');
    },
  );

  api.get(
    '/auth/user',
    { summary: 'The signed-in user', access: 'auth', responses: { 200: { description: 'User', schema: User }, 401: 'Not signed in' } },
    (req, res) => {
      res.json(presentUser(currentUser(req)));
    },
  );

  api.get(
    '/auth/sso-status',
    { summary: 'Which sign-in methods are enabled', access: 'public', responses: { 200: { description: 'Status', schema: SsoStatus } } },
    (_req, res) => {
      res.json({
        ssoEnabled: config.oidc !== undefined,
        ssoProvider: config.oidc ? config.oidc.providerName : null,
        localAuthEnabled: config.localAuthEnabled,
      });
    },
  );

  api.post(
    '/auth/tokens',
    {
      summary: 'Create a bearer token',
      description: 'The token is shown once; only its hash is stored. Send it as `Authorization: Bearer <token>`.',
      access: 'auth',
      body: CreateToken,
      responses: { 201: { description: 'Created', schema: CreatedToken }, 400: 'Validation failed' },
    },
    async (req, res) => {
      const body = parse(CreateToken, req.body);
      res.status(201).json(await tokens.create(currentUser(req).id, body.name, body.expiresInDays));
    },
  );

  api.get(
    '/auth/tokens',
    { summary: "The caller's tokens (without secrets)", access: 'auth', responses: { 200: { description: 'Tokens', schema: z.array(Token) } } },
    async (req, res) => {
      res.json(await tokens.list(currentUser(req).id));
    },
  );

  api.delete(
    '/auth/tokens/:id',
    { summary: 'Revoke a token', access: 'auth', params: TokenIdParams, responses: { 204: 'Revoked', 404: { description: 'Not found', schema: MessageBody } } },
    async (req, res) => {
      const { id } = parse(TokenIdParams, req.params);
      await tokens.revoke(currentUser(req).id, id);
      res.status(204).end();
    },
  );

  return api.router;
}
