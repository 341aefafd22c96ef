import { PERMISSIONS } from '../../auth/permissions';
import { presentUser } from '../users/users.present';
import type { UserWithPermissions } from '../users/users.service';
import type { Permission, Setting, UserPermissions } from './settings.schemas';
import type { SettingRow } from './settings.service';

export function presentPermission({ key, name, description }: (typeof PERMISSIONS)[number]): Permission {
  return { key, name, description };
}

export function presentUserPermissions(user: UserWithPermissions): UserPermissions {
  return {
    ...presentUser(user),
    permissions: user.permissions,
    effectivePermissions: user.role === 'admin' ? PERMISSIONS.map((p) => p.key) : user.permissions,
  };
}

export function presentSetting(row: SettingRow): Setting {
  return { key: row.key, value: row.value, updatedAt: row.updated_at.toISOString(), updatedBy: row.updated_by };
}
