import type { RequestHandler } from 'express';
import type { Db } from '../../db/knex';
import { currentUser, hasRole } from '../../auth/guards';
import { Forbidden } from '../../http/errors';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import type { Role } from '../users/users.schemas';

/** The charge-code policy of the settings; unset, the spec's behaviour: no PIN, no recipient check, holds by any user. */
export type ChargeCodePolicy = { requirePin: boolean; requireAuthorisedUser: boolean; holdRole: Role };

export async function chargeCodePolicy(db: Db): Promise<ChargeCodePolicy> {
  const settings = settingsService(db);
  const [requirePin, requireAuthorisedUser, holdRole] = await Promise.all([
    settings.get('chargeCodes.requirePin'),
    settings.get('chargeCodes.requireAuthorisedUser'),
    settings.get('chargeCodes.holdRole'),
  ]);
  // a value stored before the setting was known, and not of its shape, counts as unset
  const read = <T>(key: keyof typeof KNOWN_SETTINGS, value: unknown, pick: (parsed: never) => T, fallback: T): T => {
    const parsed = KNOWN_SETTINGS[key].safeParse(value);
    return parsed.success ? pick(parsed.data as never) : fallback;
  };
  return {
    requirePin: read('chargeCodes.requirePin', requirePin, (v: { enabled: boolean }) => v.enabled, false),
    requireAuthorisedUser: read('chargeCodes.requireAuthorisedUser', requireAuthorisedUser, (v: { enabled: boolean }) => v.enabled, false),
    holdRole: read('chargeCodes.holdRole', holdRole, (v: { role: Role }) => v.role, 'user'),
  };
}

/** Placing or lifting a hold and changing exclusions: the role the chargeCodes.holdRole setting names, or higher. */
export function requireHoldRole(db: Db): RequestHandler {
  return async (req, _res, next) => {
    const { holdRole } = await chargeCodePolicy(db);
    next(hasRole(currentUser(req), holdRole) ? undefined : Forbidden(`Holds and exclusions of charge codes require the ${holdRole} role (setting chargeCodes.holdRole)`));
  };
}
