import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Config } from '../../config';
import { migrationFiles } from '../../db/migrate';
import { backupFolder } from '../backups/backups.files';
import { findPgTools } from '../backups/backups.pg-tools';
import { checkLedger, systemAlertsService } from '../system-alerts/system-alerts.service';
import { probeDatabase } from '../health/health.service';
import { diskUsage } from './mcp-status.service';

export type Check = { name: string; passed: boolean; message: string };
export type SystemCheckDeps = { db: Knex; databaseUrl: string; config: Pick<Config, 'dataDir' | 'pgBinDir'> };

/** Below this share of free space on DATA_DIR's file system, backups and the database are at risk. */
export const MIN_FREE_DISK_SHARE = 0.05;

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
const list = (names: string[]) =>
  names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ');

/** A check, as a function answering its message when it passes and throwing what is wrong when it does not. */
type CheckFn = () => Promise<string>;

function systemChecks({ db, databaseUrl, config }: SystemCheckDeps): Record<string, CheckFn> {
  return {
    async database_reachable() {
      const probe = await probeDatabase(db);
      if (!probe.connected) throw new Error('The database did not answer within 2 s');
      return `PostgreSQL ${probe.serverVersion} answered in ${probe.latencyMs} ms`;
    },

    /** Every migration file applied, and nothing applied that this code does not know (a newer release's schema). */
    async migrations_current() {
      const files = await migrationFiles();
      const applied: string[] = await db('knex_migrations').pluck('name');
      const pending = files.filter((f) => !applied.includes(f));
      const unknown = applied.filter((name) => !files.includes(name));
      if (pending.length > 0) throw new Error(`${pending.length} migration(s) not applied: ${list(pending)}`);
      if (unknown.length > 0)
        throw new Error(`${unknown.length} applied migration(s) unknown to this release: ${list(unknown)}`);
      return `all ${files.length} migrations applied`;
    },

    /** The ledger's one reconciliation rule, as the system alerts apply it: a full check run now, whose result the alerts then show. */
    async stock_ledger_reconciles() {
      await checkLedger(db);
      const mismatch = (await systemAlertsService(db).alerts()).find((a) => a.type === 'stock_ledger_mismatch');
      if (mismatch) throw new Error(mismatch.message);
      return "every item's stock matches its last stock movement";
    },

    /** Written the way a backup is (a private file in DATA_DIR/backups), under the unfinished-dump name that start-up cleans. */
    async backup_directory_writable() {
      const folder = backupFolder(config.dataDir).path;
      await fs.mkdir(folder, { recursive: true, mode: 0o700 });
      const probe = path.join(folder, `.unfinished-${randomBytes(8).toString('hex')}.dump`);
      try {
        await fs.writeFile(probe, 'write check', { flag: 'wx', mode: 0o600 });
      } finally {
        await fs.rm(probe, { force: true });
      }
      return `${folder} is writable`;
    },

    /** pg_dump, pg_restore and psql at least the server's version, found as backups find them. */
    async backup_tools_usable() {
      const found = await findPgTools(db, databaseUrl, config.pgBinDir);
      if ('problem' in found) throw new Error(found.problem);
      return `pg_dump, pg_restore and psql found (${Object.values(found.tools).join(', ')})`;
    },

    async disk_space() {
      const disk = await diskUsage(config.dataDir);
      const message = `${percent(disk.freeShare)} free on the file system of ${disk.path}`;
      if (disk.freeShare < MIN_FREE_DISK_SHARE)
        throw new Error(`${message}; at least ${percent(MIN_FREE_DISK_SHARE)} is needed`);
      return message;
    },
  };
}

/** Runs every check, one after another (each is quick), and reports each as passed or failed. */
export async function runSystemChecks(deps: SystemCheckDeps, signal: AbortSignal): Promise<Check[]> {
  const checks: Check[] = [];
  for (const [name, check] of Object.entries(systemChecks(deps))) {
    signal.throwIfAborted();
    try {
      checks.push({ name, passed: true, message: await check() });
    } catch (err) {
      checks.push({ name, passed: false, message: (err as Error).message });
    }
  }
  return checks;
}
