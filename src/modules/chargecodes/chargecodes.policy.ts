import type { z } from 'zod';
import type { RequestHandler } from 'express';
import type { Db } from '../../db/knex';
import { currentUser, hasRole } from '../../auth/guards';
import { Forbidden } from '../../http/errors';
import { KNOWN_SETTINGS, type KnownSetting } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { ROLES, type Role } from '../../auth/roles';

/**
 * The charge-code policy of the settings; unset, the spec's behaviour: holds by any user, sales
 * without a PIN and to any recipient.
 */
export type ChargeCodePolicy = { holdRole: Role; requirePin: boolean; requireAuthorisedUser: boolean };

type SettingValue<K extends KnownSetting> = z.infer<(typeof KNOWN_SETTINGS)[K]>;

/** Read in one query; a value stored before its setting was known, and not of its shape, counts as unset. */
export async function chargeCodePolicy(db: Db): Promise<ChargeCodePolicy> {
  const stored = await settingsService(db).getMany([
    'chargeCodes.holdRole',
    'chargeCodes.requirePin',
    'chargeCodes.requireAuthorisedUser',
  ]);
  const known = <K extends KnownSetting>(key: K): SettingValue<K> | undefined => {
    const parsed = KNOWN_SETTINGS[key].safeParse(stored.get(key));
    return parsed.success ? (parsed.data as SettingValue<K>) : undefined;
  };
  return {
    holdRole: known('chargeCodes.holdRole')?.role ?? 'user',
    requirePin: known('chargeCodes.requirePin')?.enabled ?? false,
    requireAuthorisedUser: known('chargeCodes.requireAuthorisedUser')?.enabled ?? false,
  };
}

/** Who creates and edits charge codes and their authorised people: the API's access of those routes, and the pages'. */
export const CHARGE_CODE_ADMINS = 'admin' satisfies Role;

/** Whether this person creates and edits charge codes (the API's guard, and the page's edit links and forms). */
export const administersChargeCodes = (user: Express.User): boolean => hasRole(user, CHARGE_CODE_ADMINS);

/** Whether this person places and lifts holds and changes exclusions under the policy: requireHoldRole's test, and the page's hold forms. */
export const mayChangeHolds = (user: Express.User, policy: Pick<ChargeCodePolicy, 'holdRole'>): boolean =>
  hasRole(user, policy.holdRole);

/** Placing or lifting a hold and changing exclusions: the role the chargeCodes.holdRole setting names, or higher. */
export function requireHoldRole(db: Db): RequestHandler {
  return async (req, _res, next) => {
    const { holdRole } = await chargeCodePolicy(db);
    next(
      mayChangeHolds(currentUser(req), { holdRole })
        ? undefined
        : Forbidden(`Holds and exclusions of charge codes require the ${holdRole} role (setting chargeCodes.holdRole)`),
    );
  };
}

const withArticle = (role: Role) => (role === 'admin' ? 'an admin' : `a ${role}`);

/** "a manager or an admin": the placer's role and every role above it. */
const roleAndAbove = (role: Role) => {
  const roles = ROLES.slice(ROLES.indexOf(role)).map(withArticle);
  return roles.length === 1 ? roles[0] : `${roles.slice(0, -1).join(', ')} or ${roles[roles.length - 1]}`;
};

/** Why someone less senior than a hold's placer may not change or release it; the API and the page say the same. */
const holdNeedsSeniority = (placerRole: Role, change: 'change' | 'release') =>
  `This hold was placed by ${withArticle(placerRole)}; only ${roleAndAbove(placerRole)} can ${change} it`;

/**
 * Seniority, on top of chargeCodes.holdRole: a hold is changed or released only by someone at
 * least as senior as its placer. A hold with no recorded placer (placed before placers were
 * recorded) is left to chargeCodes.holdRole alone. Null when the person may.
 */
export function holdSeniorityRefusal(
  placerRole: Role | null,
  user: Express.User,
  change: 'change' | 'release',
): string | null {
  return placerRole === null || hasRole(user, placerRole) ? null : holdNeedsSeniority(placerRole, change);
}
