import { hasRole } from '../../auth/guards';
import type { Role } from '../../auth/roles';

/** Who deletes a supplier (and its item links): the API's access of the deletion routes, and the page's buttons. */
export const SUPPLIER_DELETERS = 'admin' satisfies Role;

export const mayDeleteSuppliers = (user: Express.User): boolean => hasRole(user, SUPPLIER_DELETERS);
