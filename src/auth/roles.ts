import { z } from 'zod';

/** The roles a user may have, lowest first. */
export const ROLES = ['user', 'manager', 'admin'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;
