import type { PickingListResult, ReactivatedUser, User, UserDeletionCheck, UserRef } from './users.schemas';
import type { DeletionCheckRecord, UserRow } from './users.service';

/** The only way a user leaves the service: the password hash never does. */
export function presentUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    role: row.role,
    isActive: row.is_active,
    showPickingList: row.show_picking_list,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function presentUserRef(row: Pick<UserRow, 'id' | 'email' | 'first_name' | 'last_name'>): UserRef {
  return { id: row.id, email: row.email, firstName: row.first_name, lastName: row.last_name };
}

/** A user read through a LEFT JOIN (creator, performer): its short form, or null once the user is gone. */
export function presentJoinedUserRef(
  id: string | null,
  joined: { email: string | null; firstName: string | null; lastName: string | null },
): UserRef | null {
  return id && joined.email !== null
    ? { id, email: joined.email, firstName: joined.firstName ?? '', lastName: joined.lastName ?? '' }
    : null;
}

export function presentPickingList(row: UserRow): PickingListResult {
  return {
    message: 'Picking list preference updated',
    user: { id: row.id, email: row.email, showPickingList: row.show_picking_list },
  };
}

export function presentReactivated(row: UserRow): ReactivatedUser {
  return { message: 'User reactivated', user: presentUser(row) };
}

export function presentDeletionCheck(check: DeletionCheckRecord): UserDeletionCheck {
  return { canDelete: check.canDelete, reasons: check.reasons };
}

export const presentPasswordChanged = () => ({ message: 'Password changed' });
export const presentPasswordReset = () => ({ message: 'Password reset' });
