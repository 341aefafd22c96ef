import { hasRole } from '../../auth/guards';
import type { Role } from '../../auth/roles';

/** Who makes, restores and schedules backups: the API's access of every backup route, and the pages' (a missing backup's warning too). */
export const BACKUP_ADMINS = 'admin' satisfies Role;

export const managesBackups = (user: Express.User): boolean => hasRole(user, BACKUP_ADMINS);
