import { hasRole } from '../../auth/guards';
import type { Role } from '../../auth/roles';

/** Who marks a sale paid: the API's access of PATCH /sales/{id}/paid, and the page's button. */
export const SALE_PAID_MARKERS = 'manager' satisfies Role;
/** Who marks a paid sale unpaid again: the API's access of PATCH /sales/{id}/unpaid, and the page's button. */
export const SALE_UNPAID_MARKERS = 'admin' satisfies Role;

export const mayMarkPaid = (user: Express.User): boolean => hasRole(user, SALE_PAID_MARKERS);
export const mayMarkUnpaid = (user: Express.User): boolean => hasRole(user, SALE_UNPAID_MARKERS);
