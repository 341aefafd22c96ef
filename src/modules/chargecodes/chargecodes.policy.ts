import type { z } from 'zod';
import type { RequestHandler } from 'express';
import type { Db } from '../../db/knex';
import { currentUser, hasRole } from '../../auth/guards';
import { Forbidden } from '../../http/errors';
import { KNOWN_SETTINGS, type KnownSetting } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import type { Role } from '../users/users.schemas';

/**
 * The charge-code policy of the settings; unset, the spec's behaviour: holds by any user, sales
 * without a PIN and to any recipient.
 */
export type ChargeCodePolicy = { holdRole: Role; requirePin: boolean; requireAuthorisedUser: boolean };

type SettingValue<K extends KnownSetting> = z.infer<(typeof KNOWN_SETTINGS)[K]>;

/** A known setting's value; a value stored before the setting was known, and not of its shape, counts as unset. */
async function knownSetting<K extends KnownSetting>(db: Db, key: K): Promise<SettingValue<K> | undefined> {
  const parsed = KNOWN_SETTINGS[key].safeParse(await settingsService(db).get(key));
  return parsed.success ? (parsed.data as SettingValue<K>) : undefined;
}

export async function chargeCodePolicy(db: Db): Promise<ChargeCodePolicy> {
  const [holdRole, requirePin, requireAuthorisedUser] = await Promise.all([
    knownSetting(db, 'chargeCodes.holdRole'),
    knownSetting(db, 'chargeCodes.requirePin'),
    knownSetting(db, 'chargeCodes.requireAuthorisedUser'),
  ]);
  return {
    holdRole: holdRole?.role ?? 'user',
    requirePin: requirePin?.enabled ?? false,
    requireAuthorisedUser: requireAuthorisedUser?.enabled ?? false,
  };
}

/** Placing or lifting a hold and changing exclusions: the role the chargeCodes.holdRole setting names, or higher. */
export function requireHoldRole(db: Db): RequestHandler {
  return async (req, _res, next) => {
    const { holdRole } = await chargeCodePolicy(db);
    next(hasRole(currentUser(req), holdRole) ? undefined : Forbidden(`Holds and exclusions of charge codes require the ${holdRole} role (setting chargeCodes.holdRole)`));
  };
}
