import fs from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import { checkAdminPassword, FIRST_ADMIN_NAME, type Config } from '../config';
import type { Logger } from '../logger';
import { SYSTEM_ACTOR } from '../modules/audit/audit.actor';
import { transaction } from '../db/transaction';
import { generatePassword } from './passwords';
import { usersService } from '../modules/users/users.service';

/** Where the first admin's generated password is written, under DATA_DIR. */
export const INITIAL_ADMIN_PASSWORD_FILE = 'initial-admin-password';

/**
 * ADMIN_EMAIL + ADMIN_PASSWORD create that admin when no user has the email (never
 * overwriting one). With neither set and no users at all, admin@localhost gets a random
 * password, written to DATA_DIR/initial-admin-password (readable by the service's user only;
 * logs are often shipped elsewhere, so the log names the file, never the password). The file is
 * created once and never overwritten: one left from an earlier install stops start-up. Either
 * creation is in the audit trail as the system's. The generated password must be changed at the
 * first sign-in (password-change-gate.ts); the change deletes the file (retireInitialAdminPassword).
 */
export async function bootstrapAdmin(db: Knex, config: Config, logger: Logger): Promise<void> {
  // Instances started at once on an empty database take turns: the first creates the admin, the
  // others then find it (each checking and creating on its own, the loser failed on the unique
  // email, or wrote a second password file). A transaction-scoped lock, so it holds behind PgBouncer.
  await transaction(db, async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['stores.bootstrap-admin']);
    await createFirstAdmin(trx, config, logger);
  });
}

async function createFirstAdmin(trx: Knex.Transaction, config: Config, logger: Logger): Promise<void> {
  const users = usersService(trx, config);
  if (config.admin) {
    if (await users.findByEmail(config.admin.email)) return;
    await checkAdminPassword(config);
    await users.createUnique(
      {
        email: config.admin.email,
        firstName: FIRST_ADMIN_NAME,
        lastName: '',
        role: 'admin',
        password: config.admin.password,
      },
      SYSTEM_ACTOR,
    );
    logger.info({ email: config.admin.email }, 'created the first admin from ADMIN_EMAIL');
    return;
  }
  if ((await users.count()) > 0) return;
  const password = generatePassword();
  const file = path.join(config.dataDir, INITIAL_ADMIN_PASSWORD_FILE);
  await writeOnce(file, `email: admin@localhost\npassword: ${password}\n`);
  try {
    await users.createUnique(
      { email: 'admin@localhost', firstName: 'Admin', lastName: '', role: 'admin', password, mustChangePassword: true },
      SYSTEM_ACTOR,
    );
  } catch (err) {
    await fs.rm(file, { force: true });
    throw err;
  }
  logger.warn(
    { file },
    `created admin@localhost; its password is in ${file}: sign in and change it (the file is deleted then)`,
  );
}

/**
 * The generated password was changed: its file goes, as nothing it holds works any more. The log
 * says so (naming the file, never a password).
 */
export async function retireInitialAdminPassword(config: Config, logger: Logger): Promise<void> {
  const file = path.join(config.dataDir, INITIAL_ADMIN_PASSWORD_FILE);
  await fs.rm(file, { force: true });
  logger.info({ file }, `the first admin changed the generated password; deleted ${file}`);
}

/** Creates the file with mode 0600, refusing to replace one that exists. */
async function writeOnce(file: string, content: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const handle = await fs.open(file, 'wx', 0o600).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EEXIST')
      throw new Error(
        `${file} already exists (from an earlier first start): delete it, or set ADMIN_EMAIL and ADMIN_PASSWORD`,
      );
    throw err;
  });
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}
