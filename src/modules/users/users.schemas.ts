import { z } from 'zod';
import '../../http/openapi';

export const ROLES = ['user', 'manager', 'admin'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

export const User = z
  .object({
    id: z.string().uuid(),
    email: z.string(),
    firstName: z.string(),
    lastName: z.string(),
    role: Role,
    isActive: z.boolean(),
    showPickingList: z.boolean(),
    createdAt: z.string().datetime(),
    updatedAt: z.string().datetime(),
  })
  .openapi('User');
export type User = z.infer<typeof User>;

/** The short form embedded in other records (createdBy, processedBy). */
export const UserRef = z
  .object({ id: z.string(), email: z.string(), firstName: z.string(), lastName: z.string() })
  .openapi('UserRef');
export type UserRef = z.infer<typeof UserRef>;

export const UserIdParams = z.object({ id: z.string().uuid({ error: 'must be a user id (uuid)' }) });
