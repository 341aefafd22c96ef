import type { Db } from '../../db/knex';
import { runExclusively } from '../../jobs/advisory-lock';
import { allQueries, transaction } from '../../db/transaction';
import { publishEvent } from '../outbound-webhooks/outbound-webhooks.queries';
import { latestSlot, PERIOD_MS, slotAfter } from './backups.slots';
import type { BackupSchedule } from './backups.schemas';

type ScheduleRow = BackupSchedule & { changed_at: Date; enabled_at: Date | null };
type RunRow = {
  id: number;
  slot: Date;
  started_at: Date;
  finished_at: Date | null;
  ok: boolean | null;
  filename: string | null;
  error: string | null;
};

/** The schedule as saved (or the default), when the next scheduled backup is due, and the last one that finished. */
export type ScheduleStatusRecord = BackupSchedule & {
  nextRunAt: Date | null;
  lastRun: { at: Date; filename: string | null; ok: boolean; error: string | null } | null;
};

export type RunOutcome = { ok: true; filename: string } | { ok: false; error: string };

/** What is wrong with the backups, in the shape of a system alert: the system alerts gather it, so it is declared here. */
export type BackupAlert = {
  type: 'backup_failed' | 'backup_overdue' | 'no_backup';
  level: 'warning' | 'critical';
  message: string;
};

/**
 * What GET /status answers without a schedule row, which runs nothing. A new install has one:
 * daily at 02:00 keeping 14 (migration 20261126040000), so this is only for a row deleted by hand.
 */
const NO_SCHEDULE: BackupSchedule = { enabled: false, frequency: 'daily', time: '02:00', retention: 14 };

/**
 * The slot to back up now, if any: the latest slot at or before now, unless the schedule was
 * saved after it (a schedule never runs a slot that was already past when it was set).
 */
function dueSlot(schedule: ScheduleRow, now: Date): Date | undefined {
  const slot = latestSlot(schedule, now);
  return slot >= schedule.changed_at ? slot : undefined;
}

const readSchedule = (db: Db): Promise<ScheduleRow | undefined> =>
  db<ScheduleRow>('backup_schedule')
    .where('id', 1)
    .first('enabled', 'frequency', 'time', 'retention', 'changed_at', 'enabled_at');

/**
 * The backup schedule (one row) and the record of its runs (one row per slot). Every instance
 * reads the row at each tick, so a change applies everywhere at the next minute.
 */
export function backupScheduleService(db: Db) {
  const lastFinishedRun = (filter: { ok?: boolean } = {}) =>
    db<RunRow>('backup_runs').whereNotNull('ok').where(filter).orderBy('slot', 'desc').first();

  return {
    async set(schedule: BackupSchedule): Promise<void> {
      await db.raw(
        `INSERT INTO backup_schedule AS s (id, enabled, frequency, "time", retention, changed_at, enabled_at)
         VALUES (1, :enabled, :frequency, :time, :retention, now(), CASE WHEN :enabled THEN now() END)
         ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, frequency = excluded.frequency, "time" = excluded."time",
           retention = excluded.retention, changed_at = excluded.changed_at,
           enabled_at = CASE WHEN excluded.enabled THEN coalesce(s.enabled_at, excluded.enabled_at) END`,
        schedule,
      );
    },

    async status(now: Date): Promise<ScheduleStatusRecord> {
      const [row, last] = await allQueries(db, [() => readSchedule(db), () => lastFinishedRun()]);
      const { enabled, frequency, time, retention } = row ?? NO_SCHEDULE;
      let nextRunAt: Date | null = null;
      if (row?.enabled) {
        const due = dueSlot(row, now);
        const done = due && (await db('backup_runs').where({ slot: due }).first('id'));
        nextRunAt = due && !done ? due : slotAfter(row, now);
      }
      return {
        enabled,
        frequency,
        time,
        retention,
        nextRunAt,
        lastRun: last ? { at: last.started_at, filename: last.filename, ok: last.ok!, error: last.error } : null,
      };
    },

    /**
     * Takes the due slot for this instance by inserting its run record, in one short
     * transaction under the job's advisory lock; undefined when nothing is due or another
     * instance took the slot first. The backup itself runs after this transaction.
     */
    async claimDueSlot(now: Date): Promise<{ runId: number; retention: number } | undefined> {
      let claimed: { runId: number; retention: number } | undefined;
      await runExclusively(db, 'scheduled-backup', async (trx) => {
        const schedule = await readSchedule(trx);
        if (!schedule?.enabled) return;
        const slot = dueSlot(schedule, now);
        if (!slot) return;
        const [run] = await trx<RunRow>('backup_runs').insert({ slot }).onConflict('slot').ignore().returning('id');
        if (run) claimed = { runId: run.id, retention: schedule.retention };
      });
      return claimed;
    },

    /** The run's outcome; a failed one is the backup.failed event, in the same transaction. */
    async recordRun(runId: number, outcome: RunOutcome): Promise<void> {
      await transaction(db, async (trx) => {
        const [run] = await trx<RunRow>('backup_runs')
          .where({ id: runId })
          .update({
            finished_at: trx.fn.now(),
            ok: outcome.ok,
            filename: outcome.ok ? outcome.filename : null,
            error: outcome.ok ? null : outcome.error,
          })
          .returning('*');
        // the schedule status's lastRun, as GET /api/backups/schedule shows it
        if (run && !outcome.ok)
          await publishEvent(trx, 'backup.failed', {
            type: 'scheduled',
            slot: run.slot.toISOString(),
            at: run.started_at.toISOString(),
            filename: null,
            ok: false,
            error: run.error,
          });
      });
    },

    /** Critical alerts while the schedule is on: the last scheduled backup failed, or none succeeded for two periods. */
    async alerts(now: Date): Promise<BackupAlert[]> {
      const [schedule, last, lastOk] = await allQueries(db, [
        () => readSchedule(db),
        () => lastFinishedRun(),
        () => lastFinishedRun({ ok: true }),
      ]);
      if (!schedule?.enabled) return [];
      const alerts: BackupAlert[] = [];
      if (last && !last.ok) {
        alerts.push({
          type: 'backup_failed',
          level: 'critical',
          message: `The last scheduled backup (${last.started_at.toISOString()}) failed: ${last.error}`,
        });
      }
      const since = new Date(Math.max(lastOk?.started_at.getTime() ?? 0, schedule.enabled_at!.getTime()));
      if (now.getTime() - since.getTime() > 2 * PERIOD_MS[schedule.frequency]) {
        alerts.push({
          type: 'backup_overdue',
          level: 'critical',
          message: `No scheduled backup has succeeded since ${since.toISOString()} (the schedule is ${schedule.frequency})`,
        });
      }
      return alerts;
    },
  };
}
