import type { Config } from '../config';
import type { Db } from '../db/knex';
import { Forbidden, TooManyRequests, Unauthorized } from '../http/errors';
import { parse } from '../http/validate';
import { LoginBody } from './auth.schemas';
import type { Actor } from '../modules/audit/audit.actor';
import { auditTrail } from '../modules/audit/audit.service';
import { usersService, type UserRow } from '../modules/users/users.service';
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

/** A single sign-on the rules refuse; its message is shown to the person signing in. */
export class SsoRefused extends Error {}

function namesOf(claims: SsoClaims): { firstName?: string; lastName?: string } {
  if (claims.given_name || claims.family_name) return { firstName: claims.given_name ?? '', lastName: claims.family_name ?? '' };
  if (claims.name) {
    const [first, ...rest] = claims.name.split(/\s+/);
    return { firstName: first, lastName: rest.join(' ') };
  }
  return {};
}

/**
 * Who may sign in, by either method: the user a local password sign-in or a single sign-on acts
 * as. Starting the session itself is session.ts's startSession, which both routes call next.
 */
export function signInService(db: Db, config: Pick<Config, 'localAuthEnabled' | 'loginMaxFailuresPerMinute' | 'passwordHashCost'>) {
  const users = usersService(db, config);
  const limiter = loginLimiter(db, config.loginMaxFailuresPerMinute);
  const trail = auditTrail(db);

  return {
    /**
     * The active user with the email and password of a sign-in body, as the API and the sign-in
     * page take it: 403 while local sign-in is disabled, 400 for missing fields, 429 (with
     * Retry-After) while the account or the address must wait. Anything else is one 401 (unknown
     * email, wrong password, inactive user, taking as long whether or not the account exists),
     * counted against the account and the address (the point is taken before the password is
     * checked); a success clears the account's count and gives the address its point back.
     * `client` is the anonymous actor of the request: its address is the one limited, and it is
     * the actor of a refusal's audit row; a success is recorded as the user's own session.
     */
    async withPassword(body: unknown, client: Actor): Promise<UserRow> {
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
      const { wait, firstRefusal } = await limiter.take(email, ip);
      if (wait > 0) {
        // Refusals past the limit cost the client nothing, so only the first of a window is
        // recorded: the append-only trail must not grow at the pace of a flood.
        if (firstRefusal) await refused('rate_limited', await users.findByEmail(email));
        throw TooManyRequests('Too many failed sign-in attempts, try again later', wait);
      }
      const user = await users.findByEmail(email);
      const valid = user?.password_hash ? await verifyPassword(password, user.password_hash) : await verifyAgainstDecoy(password, config.passwordHashCost);
      if (!user || !valid || !user.is_active) {
        await refused(refusalOf(user, valid), user);
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
     * else by email (case-insensitive), which links that account to the subject, unless the
     * provider says the email is unverified or the account is already linked to another
     * subject; else a new user with role 'user'. Names are refreshed from the claims on every
     * sign-in; the email is not changed after creation. Inactive users are refused (SsoRefused).
     */
    async withSso(claims: SsoClaims): Promise<UserRow> {
      if (!claims.sub) throw new SsoRefused('The identity provider sent no subject');
      const names = namesOf(claims);
      const active = (user: UserRow) => {
        if (!user.is_active) throw new SsoRefused('This account is deactivated');
        return user;
      };

      const bySubject = await users.findByOidcSubject(claims.sub);
      if (bySubject) return users.applySsoChanges(active(bySubject), names);

      if (!claims.email) throw new SsoRefused('The identity provider did not share an email address');
      const byEmail = await users.findByEmail(claims.email);
      if (byEmail) {
        if (byEmail.oidc_subject) throw new SsoRefused('This email belongs to an account linked to another identity');
        if (claims.email_verified === false) throw new SsoRefused('The identity provider has not verified this email address');
        return users.applySsoChanges(active(byEmail), { ...names, oidcSubject: claims.sub });
      }
      return users.create({
        email: claims.email,
        firstName: names.firstName ?? claims.email.split('@')[0],
        lastName: names.lastName ?? '',
        role: 'user',
        oidcSubject: claims.sub,
      });
    },
  };
}
