import type { Request, Response, NextFunction } from 'express';
import OpenIDConnectStrategy from 'passport-openidconnect';
import type { Deps } from '../deps';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import { ApiRouter } from '../http/api-router';
import { NotFound, ServiceUnavailable } from '../http/errors';
import type { Logger } from '../logger';
import { usersService, type UserRow } from '../modules/users/users.service';
import { signIn } from './auth.routes';

const STRATEGY = 'openidconnect';
const DISCOVERY_TIMEOUT_MS = 5000;

type ProviderMetadata = {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint?: string;
};

/** The identity claims we use, from the ID token (and userinfo when the ID token lacks them). */
export type SsoClaims = {
  sub: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
};

export class SsoRefused extends Error {}

function decodeJwtPayload(token: string): Record<string, unknown> {
  const [, payload] = token.split('.');
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}

const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

function toClaims(...sources: (Record<string, unknown> | undefined)[]): SsoClaims {
  const pick = (key: string) => sources.map((s) => str(s?.[key])).find((v) => v !== undefined);
  const verified = sources.map((s) => s?.email_verified).find((v) => v !== undefined);
  const claims: SsoClaims = {
    sub: pick('sub') ?? '',
    email: pick('email')?.toLowerCase(),
    email_verified: verified === undefined ? undefined : verified === true || verified === 'true',
    given_name: pick('given_name'),
    family_name: pick('family_name'),
    name: pick('name'),
  };
  return claims;
}

function namesOf(claims: SsoClaims): { firstName?: string; lastName?: string } {
  if (claims.given_name || claims.family_name) return { firstName: claims.given_name ?? '', lastName: claims.family_name ?? '' };
  if (claims.name) {
    const [first, ...rest] = claims.name.split(/\s+/);
    return { firstName: first, lastName: rest.join(' ') };
  }
  return {};
}

/**
 * The user an SSO sign-in acts as. Matching: first by the provider's subject (oidc_subject);
 * else by email (case-insensitive), which links that account to the subject, unless the
 * provider says the email is unverified or the account is already linked to another
 * subject; else a new user with role 'user'. Names are refreshed from the claims on every
 * sign-in; the email is not changed after creation. Inactive users are refused.
 */
export async function findOrCreateSsoUser(db: Db, claims: SsoClaims): Promise<UserRow> {
  if (!claims.sub) throw new SsoRefused('The identity provider sent no subject');
  const users = usersService(db);
  const names = namesOf(claims);
  const refreshNames = async (user: UserRow, extra: Partial<UserRow> = {}) => {
    const changes = { ...extra, ...(names.firstName !== undefined ? { first_name: names.firstName, last_name: names.lastName ?? '' } : {}) };
    if (Object.keys(changes).length === 0) return user;
    const [row] = await db<UserRow>('users').where({ id: user.id }).update({ ...changes, updated_at: db.fn.now() as never }).returning('*');
    return row;
  };
  const active = (user: UserRow) => {
    if (!user.is_active) throw new SsoRefused('This account is deactivated');
    return user;
  };

  const bySubject = await db<UserRow>('users').where({ oidc_subject: claims.sub }).first();
  if (bySubject) return refreshNames(active(bySubject));

  if (!claims.email) throw new SsoRefused('The identity provider did not share an email address');
  const byEmail = await users.findByEmail(claims.email);
  if (byEmail) {
    if (byEmail.oidc_subject) throw new SsoRefused('This email belongs to an account linked to another identity');
    if (claims.email_verified === false) throw new SsoRefused('The identity provider has not verified this email address');
    return refreshNames(active(byEmail), { oidc_subject: claims.sub });
  }
  return users.create({
    email: claims.email,
    firstName: names.firstName ?? claims.email.split('@')[0],
    lastName: names.lastName ?? '',
    role: 'user',
    oidcSubject: claims.sub,
  });
}

async function discover(issuerUrl: string): Promise<ProviderMetadata> {
  const res = await fetch(`${issuerUrl}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
  if (!res.ok) throw new Error(`OpenID discovery answered ${res.status}`);
  const meta = (await res.json()) as Partial<ProviderMetadata>;
  if (!meta.issuer || !meta.authorization_endpoint || !meta.token_endpoint) throw new Error('OpenID discovery document is incomplete');
  if (meta.issuer.replace(/\/+$/, '') !== issuerUrl) throw new Error(`OpenID issuer mismatch: ${meta.issuer}`);
  return meta as ProviderMetadata;
}

/**
 * Registers the OpenID Connect strategy on first use: the issuer is discovered lazily
 * (so the service starts while the provider is down), memoised, and retried on the next
 * sign-in after a failure.
 */
function lazyStrategy(deps: { db: Db; config: Config; logger: Logger; passport: Deps['passport'] }) {
  const oidc = deps.config.oidc!;
  let ready: Promise<void> | undefined;
  return () => {
    ready ??= discover(oidc.issuerUrl).then(
      (meta) => {
        const options = {
          issuer: meta.issuer,
          authorizationURL: meta.authorization_endpoint,
          tokenURL: meta.token_endpoint,
          userInfoURL: meta.userinfo_endpoint ?? '',
          clientID: oidc.clientId,
          clientSecret: oidc.clientSecret,
          callbackURL: `${deps.config.publicUrl}/api/callback`,
          // the strategy always asks for 'openid' itself
          scope: oidc.scopes.filter((s) => s !== 'openid'),
          nonce: true,
          // Userinfo is fetched only when the ID token lacks the email.
          skipUserProfile: (_req: Request, claims: Record<string, unknown>, done: (err: null, skip: boolean) => void) =>
            done(null, !meta.userinfo_endpoint || typeof claims.email === 'string'),
        } as unknown as OpenIDConnectStrategy.StrategyOptions;
        const verify = (
          _issuer: string,
          uiProfile: { _json?: Record<string, unknown> } | undefined,
          _idProfile: object,
          _context: object,
          idToken: string | object,
          _accessToken: string | object,
          _refreshToken: string,
          _params: unknown,
          done: OpenIDConnectStrategy.VerifyCallback,
        ) => {
          const idClaims = typeof idToken === 'string' ? decodeJwtPayload(idToken) : (idToken as Record<string, unknown>);
          const claims = toClaims(idClaims, uiProfile?._json);
          findOrCreateSsoUser(deps.db, claims).then(
            (user) => done(null, user),
            (err: unknown) => (err instanceof SsoRefused ? done(null, undefined, { message: err.message }) : done(err as Error)),
          );
        };
        deps.passport.use(STRATEGY, new OpenIDConnectStrategy(options, verify));
        deps.logger.info({ issuer: meta.issuer }, 'single sign-on provider discovered');
      },
      (err: unknown) => {
        ready = undefined;
        deps.logger.warn({ err, issuer: oidc.issuerUrl }, 'single sign-on provider discovery failed');
        throw ServiceUnavailable('The single sign-on provider is unavailable, try again later');
      },
    );
    return ready;
  };
}

type AuthResult = { user?: UserRow; info?: { message?: string } };

function authenticate(passport: Deps['passport'], req: Request, res: Response): Promise<AuthResult> {
  return new Promise((resolve, reject) => {
    const handler = passport.authenticate(STRATEGY, (err: unknown, user: UserRow | false, info?: { message?: string }) =>
      err ? reject(err) : resolve({ user: user || undefined, info }),
    ) as (req: Request, res: Response, next: NextFunction) => void;
    handler(req, res, reject);
  });
}

/** GET /api/login starts single sign-on; the provider returns to GET /api/callback. */
export function oidcRoutes({ db, config, logger, docs, passport }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Authentication');
  const ensureStrategy = config.oidc ? lazyStrategy({ db, config, logger, passport }) : undefined;
  const failed = (res: Response, message: string) => res.redirect(302, `/?ssoError=${encodeURIComponent(message)}`);

  api.get(
    '/login',
    {
      summary: 'Start single sign-on',
      description: `Redirects to the OpenID provider; it returns to \`${config.publicUrl}/api/callback\`.`,
      access: 'public',
      responses: { 302: 'Redirect to the OpenID provider', 404: 'Single sign-on is not configured', 503: 'Provider unreachable' },
    },
    async (req, res, next) => {
      if (!ensureStrategy) throw NotFound('Single sign-on is not configured');
      await ensureStrategy();
      passport.authenticate(STRATEGY)(req, res, next);
    },
  );

  api.get(
    '/callback',
    {
      summary: 'Single sign-on callback',
      description: 'Signs the user in (first sign-in creates them with role user) and redirects to /; a refused sign-in redirects to /?ssoError=<reason>.',
      access: 'public',
      responses: { 302: 'Redirect to / (signed in) or /?ssoError=...', 404: 'Single sign-on is not configured', 503: 'Provider unreachable' },
    },
    async (req, res) => {
      if (!ensureStrategy) throw NotFound('Single sign-on is not configured');
      await ensureStrategy();
      let result: AuthResult;
      try {
        result = await authenticate(passport, req, res);
      } catch (err) {
        logger.warn({ err }, 'single sign-on callback failed');
        return failed(res, 'Single sign-on failed');
      }
      if (!result.user) return failed(res, result.info?.message ?? 'Single sign-on failed');
      await signIn(req, result.user);
      logger.info({ userId: result.user.id }, 'signed in with single sign-on');
      res.redirect(302, '/');
    },
  );

  return api.router;
}
