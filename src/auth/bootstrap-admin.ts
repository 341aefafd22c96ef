import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { SYSTEM_ACTOR } from '../modules/audit/audit.actor';
import { generatePassword } from './passwords';
import { usersService } from '../modules/users/users.service';
import { PASSWORD_MIN_LENGTH } from '../modules/users/users.schemas';

/**
 * ADMIN_EMAIL + ADMIN_PASSWORD create that admin when no user has the email (never
 * overwriting one). With neither set and no users at all, admin@localhost gets a random
 * password, logged once. Either creation is in the audit trail as the system's.
 */
export async function bootstrapAdmin(db: Knex, config: Config, logger: Logger): Promise<void> {
  const users = usersService(db, config);
  if (config.admin) {
    if (await users.findByEmail(config.admin.email)) return;
    // a new password, like any other: an existing admin's shorter ADMIN_PASSWORD does not stop start-up
    if (config.admin.password.length < PASSWORD_MIN_LENGTH) {
      throw new Error(`ADMIN_PASSWORD must be at least ${PASSWORD_MIN_LENGTH} characters to create the first admin`);
    }
    await users.createUnique({ email: config.admin.email, firstName: 'Admin', lastName: '', role: 'admin', password: config.admin.password }, SYSTEM_ACTOR);
    logger.info({ email: config.admin.email }, 'created the first admin from ADMIN_EMAIL');
    return;
  }
  if ((await users.count()) > 0) return;
  const password = generatePassword();
  await users.createUnique({ email: 'admin@localhost', firstName: 'Admin', lastName: '', role: 'admin', password }, SYSTEM_ACTOR);
  // The password sits in the message text because the logger redacts password fields.
  logger.warn(`created admin@localhost with password ${password} (shown only this once; change it after signing in)`);
}
