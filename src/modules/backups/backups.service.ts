import type { FileHandle } from 'node:fs/promises';
import type { Deps } from '../../deps';
import { migrateLatestInTurn } from '../../db/migrate';
import { BadRequest, InternalError } from '../../http/errors';
import { SYSTEM_ACTOR, type Actor } from '../audit/audit.actor';
import { auditTrail } from '../audit/audit.service';
import { formatDateTime } from '../../lib/format';
import { APPLY_CARRIES, CARRY_SCHEMA, finishCarries, SAVE_CARRIES } from './backups.carry';
import { backupFolder, type BackupFile, type BackupType } from './backups.files';
import { backupScheduleService, type BackupAlert } from './backups.schedule';
import {
  connectionOptions,
  findPgTools,
  oneLine,
  requirePgTools,
  startTool,
  type PgTools,
  type PgToolVersions,
} from './backups.pg-tools';

/** databaseUrl and directDb: the session connection (DATABASE_DIRECT_URL) that pg_dump, pg_restore and migrations need. */
export type BackupDeps = Pick<Deps, 'db' | 'databaseUrl' | 'config' | 'logger' | 'maintenance'> &
  Partial<Pick<Deps, 'directDb'>>;

/** What makes a dump this service's: knex's migrations table, in the public schema. */
const MIGRATIONS_TABLE_ENTRY = /^\d+; \d+ \d+ TABLE public knex_migrations /m;

/**
 * The restore script's head. The dump recreates everything in public; dropping the schema first
 * also removes what newer migrations added after the backup. What must outlive the backup's
 * contents (sequences, the audit trail) is saved aside first and put back before the COMMIT
 * (backups.carry.ts). The transaction is opened here and
 * committed only by an explicit COMMIT written once pg_restore has succeeded: psql's
 * --single-transaction would commit whatever it had read when its input ended early (a failed
 * pg_restore, this process killed), whereas an open transaction at end of input is rolled back.
 */
const RESTORE_PRELUDE =
  'SET client_min_messages = warning;\nBEGIN;\n' +
  // Another instance's transaction may hold a table the DROP needs while waiting for one the DROP
  // has taken, and PostgreSQL then ends the restore as a deadlock. So every table is locked first,
  // all at once, when no transaction holds any (NOWAIT, tried again for up to a second); only then
  // does the restore wait for them, and if it still loses a deadlock it is run again.
  `DO $$
DECLARE
  tables text := (SELECT string_agg(format('%I.%I', schemaname, tablename), ', ') FROM pg_tables WHERE schemaname = 'public');
  deadline timestamptz := clock_timestamp() + interval '1 second';
BEGIN
  IF tables IS NULL THEN RETURN; END IF;
  LOOP
    BEGIN
      EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE NOWAIT', tables);
      RETURN;
    EXCEPTION WHEN lock_not_available THEN
      EXIT WHEN clock_timestamp() > deadline;
      PERFORM pg_sleep(0.01 + random() * 0.03);
    END;
  END LOOP;
  EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tables);
END $$;
` +
  SAVE_CARRIES +
  'DROP SCHEMA public CASCADE;\nCREATE SCHEMA public;\n';
/** A restore that lost a deadlock was rolled back whole; it is run again, this many times in all. */
const RESTORE_ATTEMPTS = 3;

/**
 * Backups are pg_dump custom-format files under DATA_DIR/backups, made and read by the
 * PostgreSQL client tools as child processes: pg_dump writes the file itself, and a restore
 * streams pg_restore's output into psql, so no dump is ever held in this process's memory.
 */
export function backupsService(deps: BackupDeps) {
  const { db, databaseUrl, config, logger, maintenance } = deps;
  const directDb = deps.directDb ?? db;
  const folder = backupFolder(config.dataDir);
  const log = logger.child({ module: 'backups' });
  const tools = () => requirePgTools(directDb, databaseUrl, config.pgBinDir);

  /** pg_restore over a backup (given on stdin, so only the file opened is read); its output, or a 400. */
  async function readWithPgRestore(
    pgTools: PgTools,
    filename: string,
    args: string[],
    problem: string,
  ): Promise<string> {
    const { handle } = await folder.open(filename);
    try {
      let output = '';
      const tool = startTool(pgTools.pg_restore, args, { stdin: handle.fd, stdout: 'pipe' });
      tool.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const { code, stderr } = await tool.finished;
      if (code !== 0) throw BadRequest(`${filename} ${problem}: ${oneLine(stderr)}`);
      return output;
    } finally {
      await handle.close();
    }
  }

  /**
   * Refuses anything but a complete dump of this service: --list reads the table of contents;
   * only a full read of the data finds a file cut short.
   */
  async function verify(pgTools: PgTools, filename: string): Promise<void> {
    const listing = await readWithPgRestore(
      pgTools,
      filename,
      ['--list'],
      'is not a backup of this service (pg_restore cannot read it)',
    );
    if (!MIGRATIONS_TABLE_ENTRY.test(listing))
      throw BadRequest(`${filename} is not a backup of this service (it holds no knex_migrations table)`);
    await readWithPgRestore(pgTools, filename, ['--file=/dev/null'], 'is corrupt or truncated');
  }

  /** pg_restore's SQL piped into psql as one transaction; the database is unchanged unless it all succeeds. */
  async function replaceDatabase(pgTools: PgTools, handle: FileHandle): Promise<void> {
    const connection = connectionOptions(databaseUrl);
    const psql = startTool(pgTools.psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', ...connection.args], {
      stdin: 'pipe',
      stdout: 'ignore',
      env: { ...connection.env, PGAPPNAME: 'stores-restore' },
    });
    const pgRestore = startTool(pgTools.pg_restore, ['--no-owner', '--no-privileges', '--file=-'], {
      stdin: handle.fd,
      stdout: 'pipe',
    });
    const script = psql.child.stdin!;
    // psql stopping on an error closes its input: pg_restore's remaining output has nowhere to
    // go, and pg_restore must not wait forever to write it.
    script.on('error', () => undefined);
    void psql.finished.then(() => pgRestore.child.kill());
    script.write(RESTORE_PRELUDE);
    pgRestore.child.stdout!.pipe(script, { end: false });
    const restored = await pgRestore.finished;
    script.end(restored.code === 0 ? `${APPLY_CARRIES}COMMIT;\n` : undefined);
    const applied = await psql.finished;
    if (applied.code !== 0) throw new Error(oneLine(applied.stderr));
    if (restored.code !== 0) throw new Error(oneLine(restored.stderr));
  }

  return {
    list: (): Promise<BackupFile[]> => folder.list(),

    /** The server's version and the client tools' as found now, and why backups would fail when they do not fit. */
    async toolVersions(): Promise<PgToolVersions & { problem: string | null }> {
      const found = await findPgTools(directDb, databaseUrl, config.pgBinDir);
      return {
        serverVersion: found.serverVersion,
        toolVersions: found.toolVersions,
        problem: 'problem' in found ? found.problem : null,
      };
    },

    async stats() {
      const backups = await folder.list();
      return {
        totalBackups: backups.length,
        totalSize: backups.reduce((sum, b) => sum + b.size, 0),
        oldestBackup: backups.at(-1)?.createdAt ?? null,
        newestBackup: backups[0]?.createdAt ?? null,
      };
    },

    /** A warning for admins while DATA_DIR/backups holds no backup (none made yet, or all deleted): nothing to restore from. */
    async missingBackupAlerts(now: Date): Promise<BackupAlert[]> {
      if ((await folder.list()).length > 0) return [];
      const { nextRunAt } = await backupScheduleService(db).status(now);
      const scheduled = nextRunAt
        ? `the first scheduled backup runs ${formatDateTime(nextRunAt)}`
        : 'scheduled backups are off';
      return [{ type: 'no_backup', level: 'warning', message: `No backup exists yet: ${scheduled}.` }];
    },

    /** Dumps the database; sessions and rate-limit counters are left out so a restore brings none back. */
    async create(type: BackupType, actor: Actor): Promise<{ filename: string; size: number }> {
      const connection = connectionOptions(databaseUrl);
      const args = [
        '--format=custom',
        '--no-owner',
        '--no-privileges',
        '--exclude-table-data=sessions',
        '--exclude-table-data=rate_limits',
        `--exclude-schema=${CARRY_SCHEMA}`,
        ...connection.args,
      ];
      const started = Date.now();
      try {
        const pgTools = await tools();
        const backup = await folder.create(type, async (fd) => {
          const { code, stderr } = await startTool(pgTools.pg_dump, args, {
            stdin: 'ignore',
            stdout: fd,
            env: connection.env,
          }).finished;
          if (code !== 0) throw InternalError(`Backup failed: ${oneLine(stderr)}`);
        });
        log.info({ ...backup, type, ms: Date.now() - started }, 'backup written');
        // the file is the change: recorded once it exists (a dump is no transaction to share)
        await auditTrail(db).record(actor, {
          entityType: 'backup',
          entityId: backup.filename,
          action: 'create',
          after: { type, size: backup.size },
        });
        return backup;
      } catch (err) {
        log.error({ err, type }, 'backup failed');
        throw err;
      }
    },

    /** The backup opened for download (404 unless it is one). */
    open: (filename: string) => folder.open(filename),

    async delete(filename: string, actor: Actor): Promise<void> {
      await folder.delete(filename);
      await auditTrail(db).record(actor, { entityType: 'backup', entityId: filename, action: 'delete' });
    },

    /** Deletes the scheduled backups beyond the newest `keep`; manual ones are never deleted here. */
    async pruneScheduled(keep: number): Promise<string[]> {
      const expired = (await folder.list()).filter((b) => b.type === 'scheduled').slice(keep);
      for (const backup of expired) {
        await folder.delete(backup.filename);
        await auditTrail(db).record(SYSTEM_ACTOR, {
          entityType: 'backup',
          entityId: backup.filename,
          action: 'delete',
          after: { reason: `retention: the newest ${keep} scheduled backups are kept` },
        });
      }
      if (expired.length > 0)
        log.info({ deleted: expired.map((b) => b.filename), keep }, 'old scheduled backups deleted');
      return expired.map((b) => b.filename);
    },

    /**
     * Replaces the whole database with a backup's contents, behind the maintenance gate (other
     * requests answer 503 meanwhile), then reconnects the pool and applies the migrations the
     * backup predates. The backup holds no sessions: everyone signs in again. The audit trail
     * written since the backup stays, and every sequence continues from its highest value.
     */
    async restore(filename: string, actor: Actor): Promise<{ migrationsApplied: string[] }> {
      // no such backup is a 404 whatever the tools
      await (await folder.open(filename)).handle.close();
      const pgTools = await tools();
      await verify(pgTools, filename);
      return maintenance.exclusive('A database restore', async () => {
        const started = Date.now();
        for (let attempt = 1; ; attempt += 1) {
          // pg_restore reads the file from its descriptor's position: each attempt opens it anew
          const { handle } = await folder.open(filename);
          try {
            await replaceDatabase(pgTools, handle);
            break;
          } catch (err) {
            if (attempt < RESTORE_ATTEMPTS && /deadlock detected/.test((err as Error).message)) {
              log.warn({ filename, attempt }, 'the restore lost a deadlock with another connection; running it again');
              continue;
            }
            log.error({ err, filename }, 'restore failed; the database is unchanged');
            throw InternalError(`Restore failed: ${(err as Error).message}`);
          } finally {
            await handle.close();
          }
        }
        // Pooled connections may hold plans and prepared statements of the dropped tables.
        await db.destroy();
        db.initialize();
        if (directDb !== db) {
          await directDb.destroy();
          directDb.initialize();
        }
        // through PgBouncer in transaction mode, migrations take the session connection, and they
        // wait for another instance starting on this database to finish its own (issue 44)
        const migrated = await migrateLatestInTurn(directDb).then(
          (applied) => ({ applied }),
          (err: Error) => ({ err }),
        );
        // even after a failed migration: what the carries kept goes wherever it can
        await finishCarries(db);
        if ('err' in migrated) {
          log.error({ err: migrated.err, filename }, 'the backup was restored but its pending migrations failed');
          throw InternalError(
            `Restore failed: the backup was restored but its pending migrations failed: ${migrated.err.message}`,
          );
        }
        const migrationsApplied = migrated.applied;
        log.warn({ filename, migrationsApplied, ms: Date.now() - started }, 'database restored from a backup');
        // after the trail carried through the restore: who restored which file, and when
        await auditTrail(db).record(actor, {
          entityType: 'backup',
          entityId: filename,
          action: 'restore',
          after: { migrationsApplied },
        });
        return { migrationsApplied };
      });
    },
  };
}
