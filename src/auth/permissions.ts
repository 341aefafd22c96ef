/** The per-user permissions an admin can grant; admins hold all of them implicitly. */
export const PERMISSIONS = [
  { key: 'sales.refund', name: 'Refund sales', description: 'Refund sale lines and restore their stock' },
  {
    key: 'finance.export',
    name: 'Finance recharges',
    description: 'Read the recharges report and close, read and download recharge batches',
  },
] as const;

export type PermissionKey = (typeof PERMISSIONS)[number]['key'];

export function isPermissionKey(key: string): key is PermissionKey {
  return PERMISSIONS.some((p) => p.key === key);
}
