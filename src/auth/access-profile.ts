import type { RequestHandler } from 'express';
import type { Db } from '../db/knex';
import { Forbidden, Unauthorized, type HttpError } from '../http/errors';
import { KNOWN_SETTINGS, type AccessProfile } from '../modules/settings/settings.schemas';
import { settingsService } from '../modules/settings/settings.service';
import type { Role } from './roles';
import { hasRole, isStaff } from './guards';

/**
 * The access.profile setting. Under 'spec' (the default) the interface's access holds: any signed-in
 * user imports items, keeps suppliers and item sources, sets any sale's recipient, exports the
 * catalogue and reads cost prices and invoice PDFs. Under 'strict' each of these needs `role`.
 * A route declares it as its access (`access: MANAGER_UNDER_STRICT`), a page as its guard
 * (`requirePage(MANAGER_UNDER_STRICT)`), and what depends on the record (a sale's recipient) or only
 * hides fields (cost prices) asks `admitsUnderProfile`: one rule for the API, the pages and the docs.
 */
export type ProfileAccess = Readonly<{ role: Role; profile: 'strict' }>;

export const MANAGER_UNDER_STRICT: ProfileAccess = { role: 'manager', profile: 'strict' };

export const isProfileAccess = (access: unknown): access is ProfileAccess =>
  typeof access === 'object' && access !== null && 'profile' in access;

/**
 * Read on every request that depends on it (one primary-key lookup) rather than cached: several
 * instances may serve one database, and a PUT of the setting holds on all of them at once.
 * A stored value not of the setting's shape counts as unset.
 */
export async function accessProfile(db: Db): Promise<AccessProfile> {
  const parsed = KNOWN_SETTINGS['access.profile'].safeParse(await settingsService(db).get('access.profile'));
  return parsed.success ? parsed.data.profile : 'spec';
}

/** A requester never: these are the staff's actions, open to every member of staff unless the profile is on. */
export async function admitsUnderProfile(db: Db, user: Express.User, access: ProfileAccess): Promise<boolean> {
  if (hasRole(user, access.role)) return true;
  return isStaff(user) && (await accessProfile(db)) !== access.profile;
}

export const profileRefusal = (access: ProfileAccess, what = 'This action'): HttpError =>
  Forbidden(`${what} requires the ${access.role} role (setting access.profile is ${access.profile})`);

/** The API guard of a route declared with a ProfileAccess. */
export function requireUnderProfile(db: Db, access: ProfileAccess): RequestHandler {
  return async (req, _res, next) => {
    if (!req.user) return next(Unauthorized());
    next((await admitsUnderProfile(db, req.user, access)) ? undefined : profileRefusal(access));
  };
}

/** Supplier prices and order costs: a field the caller may not read is answered null. */
export const mayReadCostPrices = (db: Db, user: Express.User) => admitsUnderProfile(db, user, MANAGER_UNDER_STRICT);
