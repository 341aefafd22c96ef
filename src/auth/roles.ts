import { z } from 'zod';

/**
 * The roles a user may have, lowest first. A `requester` (a researcher with a budget code) is
 * below `user`: the stores' staff are `user` and above.
 */
export const ROLES = ['requester', 'user', 'manager', 'admin'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

/** The stores' staff: every role from `user` up (a hold's placer, chargeCodes.holdRole). */
export const STAFF_ROLES = ['user', 'manager', 'admin'] as const satisfies readonly Role[];
export type StaffRole = (typeof STAFF_ROLES)[number];

/** The lowest staff role: what a route declared `auth` requires. */
export const STAFF: Role = 'user';
