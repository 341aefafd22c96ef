import { z } from 'zod';
import '../../http/openapi';
import { PASSWORD_MIN_LENGTH, PASSWORD_TOO_SHORT } from '../../auth/password-rule';
import { Role } from '../../auth/roles';

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

/** A new password's length; the service applies the rest of the rule (passwordProblem), which needs whose it is. */
const Password = z.string().min(PASSWORD_MIN_LENGTH, PASSWORD_TOO_SHORT).max(1024);
const Name = z.string().trim().max(200);

export const CreateUser = z.object({
  email: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.email({ error: 'must be an email address' }))
    .pipe(z.string().max(320)),
  firstName: Name.min(1, 'is required'),
  lastName: Name.default(''),
  role: Role.default('user'),
  /** omitted: the user can only sign in with single sign-on until an admin sets one */
  password: Password.optional(),
});
export type CreateUser = z.infer<typeof CreateUser>;

export const RoleBody = z.object({ role: Role });
export const ResetPasswordBody = z.object({ password: Password });
export const ChangeOwnPasswordBody = z.object({
  currentPassword: z.string().min(1, 'is required').max(1024),
  newPassword: Password,
});
export const PickingListBody = z.object({ showPickingList: z.boolean({ error: 'must be a boolean' }) });

export const PickingListResult = z
  .object({ message: z.string(), user: z.object({ id: z.string(), email: z.string(), showPickingList: z.boolean() }) })
  .openapi('PickingListResult');
export type PickingListResult = z.infer<typeof PickingListResult>;

export const UserDeletionCheck = z
  .object({ canDelete: z.boolean(), reasons: z.array(z.string()) })
  .openapi('UserDeletionCheck');
export type UserDeletionCheck = z.infer<typeof UserDeletionCheck>;

export const UserList = z.array(User);
export const ReactivatedUser = z.object({ message: z.string(), user: User });
export type ReactivatedUser = z.infer<typeof ReactivatedUser>;
export const UserDeletionRefused = z.object({ message: z.string(), reasons: z.array(z.string()) });
