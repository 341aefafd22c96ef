import type { RequestHandler } from 'express';
import type { Db } from '../../db/knex';
import { currentUser, hasRole } from '../../auth/guards';
import { Forbidden } from '../../http/errors';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import type { Role } from '../users/users.schemas';

/** The charge-code policy of the settings; unset, the spec's behaviour: holds by any user. */
export type ChargeCodePolicy = { holdRole: Role };

export async function chargeCodePolicy(db: Db): Promise<ChargeCodePolicy> {
  // a value stored before the setting was known, and not of its shape, counts as unset
  const holdRole = KNOWN_SETTINGS['chargeCodes.holdRole'].safeParse(await settingsService(db).get('chargeCodes.holdRole'));
  return { holdRole: holdRole.success ? holdRole.data.role : 'user' };
}

/** Placing or lifting a hold and changing exclusions: the role the chargeCodes.holdRole setting names, or higher. */
export function requireHoldRole(db: Db): RequestHandler {
  return async (req, _res, next) => {
    const { holdRole } = await chargeCodePolicy(db);
    next(hasRole(currentUser(req), holdRole) ? undefined : Forbidden(`Holds and exclusions of charge codes require the ${holdRole} role (setting chargeCodes.holdRole)`));
  };
}
