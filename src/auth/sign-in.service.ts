import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import { transaction } from '../db/transaction';
import { Forbidden, TooManyRequests, Unauthorized } from '../http/errors';
import { parse } from '../http/validate';
import { LoginBody } from './auth.schemas';
import type { Actor } from '../modules/audit/audit.actor';
import type { Role } from './roles';
import { auditTrail } from '../modules/audit/audit.service';
import { usersService, type UserRow } from '../modules/users/users.service';
import { failedSignIns } from './failed-sign-ins';
import { loginLimiter } from './login-limiter';
import { needsRehash, verifyAgainstDecoy, verifyPassword } from './passwords';

export const INVALID_CREDENTIALS = 'Invalid email or password';

/** The identity claims single sign-on uses, from the ID token (and userinfo when the ID token lacks them). */
export type SsoClaims = {
  sub: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
};

/** Why a password sign-in was refused, as its audit row says. */
type PasswordRefusal = 'unknown_account' | 'no_local_password' | 'wrong_password' | 'inactive' | 'rate_limited';

function refusalOf(user: UserRow | undefined, passwordMatches: boolean): PasswordRefusal {
  if (!user) return 'unknown_account';
  if (!user.password_hash) return 'no_local_password';
  if (!passwordMatches) return 'wrong_password';
  return 'inactive';
}

/** Why a single sign-on was refused, as its audit row says. */
type SsoRefusal = 'no_subject' | 'no_email' | 'linked_elsewhere' | 'email_unverified' | 'inactive';

/** A single sign-on the rules refuse; its message is shown to the person signing in. */
export class SsoRefused extends Error {
  constructor(
    message: string,
    readonly reason: SsoRefusal,
    /** the account the sign-in would have acted as, when there is one */
    readonly userId: string | null = null,
  ) {
    super(message);
  }
}

function namesOf(claims: SsoClaims): { firstName?: string; lastName?: string } {
  if (claims.given_name || claims.family_name)
    return { firstName: claims.given_name ?? '', lastName: claims.family_name ?? '' };
  if (claims.name) {
    const [first, ...rest] = claims.name.split(/\s+/);
    return { firstName: first, lastName: rest.join(' ') };
  }
  return {};
}

/**
 * The user of a single sign-on, as withSso describes; `created` when this sign-in provisioned it.
 * An email the provider has not verified (email_verified false or absent) neither links nor
 * provisions: linking would hand an existing account to whoever typed its address at the
 * provider, and a provisioned account would hold the address against its real owner.
 */
async function ssoUser(
  users: ReturnType<typeof usersService>,
  claims: SsoClaims,
  defaultRole: Role,
): Promise<{ user: UserRow; created: boolean }> {
  if (!claims.sub) throw new SsoRefused('The identity provider sent no subject', 'no_subject');
  const names = namesOf(claims);
  const active = (user: UserRow) => {
    if (!user.is_active) throw new SsoRefused('This account is deactivated', 'inactive', user.id);
    return user;
  };

  const bySubject = await users.findByOidcSubject(claims.sub);
  if (bySubject) return { user: await users.applySsoChanges(active(bySubject), names), created: false };

  if (!claims.email) throw new SsoRefused('The identity provider did not share an email address', 'no_email');
  const byEmail = await users.findByEmail(claims.email);
  if (byEmail?.oidc_subject)
    throw new SsoRefused('This email belongs to an account linked to another identity', 'linked_elsewhere', byEmail.id);
  if (claims.email_verified !== true) {
    throw new SsoRefused(
      'The identity provider has not confirmed that this email address is verified',
      'email_unverified',
      byEmail?.id ?? null,
    );
  }
  if (byEmail)
    return {
      user: await users.applySsoChanges(active(byEmail), { ...names, oidcSubject: claims.sub }),
      created: false,
    };
  const user = await users.create({
    email: claims.email,
    firstName: names.firstName ?? claims.email.split('@')[0],
    lastName: names.lastName ?? '',
    role: defaultRole,
    oidcSubject: claims.sub,
  });
  return { user, created: true };
}

/**
 * Who may sign in, by either method: the user a local password sign-in or a single sign-on acts
 * as. Starting the session itself is session.ts's startSession, which both routes call next.
 */
export function signInService(
  db: Db,
  config: Pick<Config, 'localAuthEnabled' | 'loginLimits' | 'passwordHashCost' | 'ssoDefaultRole'>,
) {
  const users = usersService(db, config);
  const limiter = loginLimiter(db, config.loginLimits);
  const trail = auditTrail(db);
  const failures = failedSignIns(db);

  return {
    /**
     * The active user with the email and password of a sign-in body, as the API and the sign-in
     * page take it: 403 while local sign-in is disabled, 400 for missing fields, 429 (with
     * Retry-After) while the limits of login-limiter.ts refuse the account from this address.
     * Anything else is one 401 (unknown email, wrong password, inactive user, taking as long
     * whether or not the account exists: the counters and the delay are keyed by the email
     * typed, not by an account). A wrong password, and the first refusal of a limit's window, is
     * recorded among the account's failed sign-ins. `client` is the anonymous actor of the
     * request: its address is the one limited, and it is the actor of a refusal's audit row; a
     * success is recorded as the user's own session.
     */
    async withPassword(body: unknown, client: Actor, userAgent: string | null): Promise<UserRow> {
      if (!config.localAuthEnabled) throw Forbidden('Local sign-in is disabled; use single sign-on');
      const { email, password } = parse(LoginBody, body);
      const refused = (reason: PasswordRefusal, user: UserRow | undefined) =>
        trail.record(client, {
          entityType: 'user',
          entityId: user?.id ?? null,
          action: 'sign_in_failed',
          after: { email: email.toLowerCase(), method: 'password', reason },
        });
      // The attempt's point is taken before the password is checked (and kept by a failure),
      // so parallel attempts cannot all pass a check that none of them has recorded yet.
      const ip = client.ip ?? 'unknown';
      const admission = await limiter.admit(email, ip);
      if (!admission.admitted) {
        // Refusals past the limit cost the client nothing, so only the first of a window is
        // recorded: the append-only trail must not grow at the pace of a flood.
        if (admission.firstRefusal) {
          const user = await users.findByEmail(email);
          await refused('rate_limited', user);
          if (user)
            await failures.record({ userId: user.id, ip: client.ip, userAgent, reason: 'rate_limited', delayMs: 0 });
        }
        throw TooManyRequests('Too many failed sign-in attempts, try again later', admission.retryAfterSeconds);
      }
      // a timer, not a busy wait: other requests go on meanwhile
      if (admission.delayMs > 0) await sleep(admission.delayMs);
      const user = await users.findByEmail(email);
      const valid = user?.password_hash
        ? await verifyPassword(password, user.password_hash)
        : await verifyAgainstDecoy(password, config.passwordHashCost);
      if (!user || !valid || !user.is_active) {
        const refusal = refusalOf(user, valid);
        await refused(refusal, user);
        if (user && (refusal === 'wrong_password' || refusal === 'no_local_password')) {
          await failures.record({
            userId: user.id,
            ip: client.ip,
            userAgent,
            reason: 'wrong_password',
            delayMs: admission.delayMs,
          });
        }
        throw Unauthorized(INVALID_CREDENTIALS);
      }
      await limiter.giveBack(email, ip);
      // a hash made with older parameters is rewritten at the current cost while the password is at hand
      if (user.password_hash && needsRehash(user.password_hash, config.passwordHashCost)) {
        await users.rehashPassword(user.id, user.password_hash, password);
      }
      await trail.record(
        { ...client, kind: 'session', userId: user.id, email: user.email },
        { entityType: 'user', entityId: user.id, action: 'sign_in', after: { method: 'password' } },
      );
      return user;
    },

    /**
     * The user a single sign-on acts as. Matching: first by the provider's subject (oidc_subject);
     * else by email (case-insensitive), which links that account to the subject unless it is
     * already linked to another subject; else a new user with the role SSO_DEFAULT_ROLE names ('user' unset). Linking and creating
     * both need the provider to say email_verified: true. Names are refreshed from the claims on
     * every sign-in; the email is not changed after creation. Inactive users are refused. Each
     * refusal is an SsoRefused, recorded as sign_in_failed by `client` (the request's anonymous
     * actor); a success as the user's own sign_in, with a provisioned user's create, in the same
     * transaction as the user's changes.
     */
    async withSso(claims: SsoClaims, client: Actor): Promise<UserRow> {
      try {
        return await transaction(db, async (trx) => {
          const { user, created } = await ssoUser(usersService(trx, config), claims, config.ssoDefaultRole);
          const actor: Actor = { ...client, kind: 'session', userId: user.id, email: user.email };
          const trxTrail = auditTrail(trx);
          if (created)
            await trxTrail.record(actor, { entityType: 'user', entityId: user.id, action: 'create', after: user });
          await trxTrail.record(actor, {
            entityType: 'user',
            entityId: user.id,
            action: 'sign_in',
            after: { method: 'sso' },
          });
          return user;
        });
      } catch (err) {
        if (err instanceof SsoRefused) {
          await trail.record(client, {
            entityType: 'user',
            entityId: err.userId,
            action: 'sign_in_failed',
            after: { email: claims.email ?? null, method: 'sso', reason: err.reason },
          });
        }
        throw err;
      }
    },
  };
}
