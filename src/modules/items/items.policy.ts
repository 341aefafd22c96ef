import { hasRole } from '../../auth/guards';
import type { Role } from '../../auth/roles';
import { Forbidden } from '../../http/errors';

/** Who sees inactive items and edits the catalogue in bulk: the API's access of those routes, and the pages'. */
export const ITEM_MANAGERS = 'manager' satisfies Role;

export const managesItems = (user: Express.User): boolean => hasRole(user, ITEM_MANAGERS);

/** A list or an export asking for inactive items is refused below ITEM_MANAGERS: the API's check and the items page's. */
export function refuseInactiveItemsBelowManager(user: Express.User, includeInactive: boolean | undefined): void {
  if (includeInactive && !managesItems(user)) throw Forbidden('includeInactive requires the manager role');
}
