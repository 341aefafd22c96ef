import { createHash, randomBytes } from 'node:crypto';
import type { Request, Response, NextFunction } from 'express';
import type OpenIDConnectStrategy from 'passport-openidconnect';
import type { Deps } from '../deps';
import type { Config } from '../config';
import { ApiRouter } from '../http/api-router';
import { NotFound, ServiceUnavailable } from '../http/errors';
import { MessageBody } from '../http/openapi';
import type { Logger } from '../logger';
import { actorOf } from '../modules/audit/audit.actor';
import type { UserRow } from '../modules/users/users.service';
import { startSession } from './session';
import { signInService, SsoRefused, type SsoClaims } from './sign-in.service';

const STRATEGY = 'openidconnect';
const DISCOVERY_TIMEOUT_MS = 5000;

type ProviderMetadata = {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint?: string;
};

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

declare module 'express-session' {
  interface SessionData {
    /** the PKCE code verifier of the session's pending single sign-on */
    oidcCodeVerifier?: string;
  }
}

type PkceOptions = OpenIDConnectStrategy.AuthenticateOptions & { codeChallenge?: string };

/**
 * The authorization-code flow with PKCE (RFC 7636, S256), which passport-openidconnect 0.1.2
 * lacks: a code intercepted on its way back is useless without the verifier that stays in this
 * session. Like the library's state, the session holds one pending sign-in at a time.
 * The library loads with the first sign-on, not at start.
 */
async function loadPkceStrategy() {
  const { default: OpenIDConnectStrategy } = await import('passport-openidconnect');
  return class PkceOpenIDConnectStrategy extends OpenIDConnectStrategy {
    override authenticate(req: Request, options: PkceOptions = {}) {
      if (req.query.code === undefined && req.query.error === undefined) {
        const verifier = randomBytes(32).toString('base64url');
        req.session.oidcCodeVerifier = verifier;
        const withChallenge: PkceOptions = {
          ...options,
          codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
        };
        return super.authenticate(req, withChallenge);
      }
      const verifier = req.session.oidcCodeVerifier;
      delete req.session.oidcCodeVerifier;
      // passport authenticates each request on its own Object.create() of the strategy, so this
      // client, which adds the verifier to the code exchange, serves this request alone.
      const client = this._oauth2;
      this._oauth2 = Object.assign(Object.create(client) as typeof client, {
        getOAuthAccessToken: ((code, params, callback) =>
          client.getOAuthAccessToken(
            code,
            { ...params, code_verifier: verifier },
            callback,
          )) as typeof client.getOAuthAccessToken,
      });
      return super.authenticate(req, options);
    }

    override authorizationParams(options: PkceOptions) {
      return { code_challenge: options.codeChallenge, code_challenge_method: 'S256' };
    }
  };
}

async function discover(issuerUrl: string): Promise<ProviderMetadata> {
  const res = await fetch(`${issuerUrl}/.well-known/openid-configuration`, {
    signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
  });
  if (!res.ok) throw new Error(`OpenID discovery answered ${res.status}`);
  const meta = (await res.json()) as Partial<ProviderMetadata>;
  if (!meta.issuer || !meta.authorization_endpoint || !meta.token_endpoint)
    throw new Error('OpenID discovery document is incomplete');
  if (meta.issuer.replace(/\/+$/, '') !== issuerUrl) throw new Error(`OpenID issuer mismatch: ${meta.issuer}`);
  return meta as ProviderMetadata;
}

/**
 * Registers the OpenID Connect strategy on first use: the issuer is discovered lazily
 * (so the service starts while the provider is down), memoised, and retried on the next
 * sign-in after a failure.
 */
function lazyStrategy(deps: {
  signIns: ReturnType<typeof signInService>;
  config: Config;
  logger: Logger;
  passport: Deps['passport'];
}) {
  const oidc = deps.config.oidc!;
  let ready: Promise<void> | undefined;
  return () => {
    ready ??= Promise.all([discover(oidc.issuerUrl), loadPkceStrategy()]).then(
      ([meta, PkceOpenIDConnectStrategy]) => {
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
          // the request's address goes into the sign-in's audit row
          passReqToCallback: true,
          // Userinfo is fetched only when the ID token lacks the email.
          skipUserProfile: (_req: Request, claims: Record<string, unknown>, done: (err: null, skip: boolean) => void) =>
            done(null, !meta.userinfo_endpoint || typeof claims.email === 'string'),
        } as unknown as OpenIDConnectStrategy.StrategyOptions;
        // Ten positional parameters, as passport-openidconnect calls it: the strategy picks what it
        // passes by the function's arity (10: with the request, both profiles and the ID token).
        const verify = (
          req: Request,
          _issuer: string,
          uiProfile: { _json?: Record<string, unknown> } | undefined,
          _idProfile: object,
          _context: object,
          idToken: string | object,
          _accessToken: string | object,
          _refreshToken: string,
          _params: unknown,
          done: OpenIDConnectStrategy.VerifyCallback,
          // eslint-disable-next-line max-params -- the library's arity, above
        ) => {
          const idClaims =
            typeof idToken === 'string' ? decodeJwtPayload(idToken) : (idToken as Record<string, unknown>);
          const claims = toClaims(idClaims, uiProfile?._json);
          deps.signIns.withSso(claims, actorOf(req)).then(
            (user) => done(null, user),
            (err: unknown) =>
              err instanceof SsoRefused ? done(null, undefined, { message: err.message }) : done(err as Error),
          );
        };
        deps.passport.use(STRATEGY, new PkceOpenIDConnectStrategy(options, verify));
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
    const handler = passport.authenticate(
      STRATEGY,
      (err: unknown, user: UserRow | false, info?: { message?: string }) =>
        err ? reject(err) : resolve({ user: user || undefined, info }),
    ) as (req: Request, res: Response, next: NextFunction) => void;
    handler(req, res, reject);
  });
}

const failure = (description: string) => ({ description, schema: MessageBody });

/** GET /api/login starts single sign-on; the provider returns to GET /api/callback. */
export function oidcRoutes({ db, config, logger, docs, passport }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Authentication');
  const ensureStrategy = config.oidc
    ? lazyStrategy({ signIns: signInService(db, config), config, logger, passport })
    : undefined;
  const failed = (res: Response, message: string) => res.redirect(302, `/?ssoError=${encodeURIComponent(message)}`);

  api.get(
    '/login',
    {
      operationId: 'startSsoSignIn',
      summary: 'Start single sign-on',
      description: `Redirects to the OpenID provider; it returns to \`${config.publicUrl}/api/callback\`.`,
      access: 'public',
      responses: {
        302: 'Redirect to the OpenID provider',
        404: failure('Single sign-on is not configured'),
        503: failure('Provider unreachable'),
      },
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
      operationId: 'finishSsoSignIn',
      summary: 'Single sign-on callback',
      description:
        'Signs the user in and redirects to /. A first sign-in links the account with its email, or creates one with role user, only when the provider says email_verified: true; a refused sign-in redirects to /?ssoError=<reason>.',
      access: 'public',
      responses: {
        302: 'Redirect to / (signed in) or /?ssoError=...',
        404: failure('Single sign-on is not configured'),
        503: failure('Provider unreachable'),
      },
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
      await startSession(req, result.user);
      logger.info({ userId: result.user.id }, 'signed in with single sign-on');
      res.redirect(302, '/');
    },
  );

  return api.router;
}
