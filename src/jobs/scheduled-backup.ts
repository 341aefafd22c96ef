import { SYSTEM_ACTOR } from '../modules/audit/audit.actor';
import { backupScheduleService, type RunOutcome } from '../modules/backups/backups.schedule';
import { backupsService, type BackupDeps } from '../modules/backups/backups.service';
import type { Job } from './scheduler';

/**
 * Backs up the due slot of the schedule, if this instance is the one to claim it. pg_dump runs
 * after the claim's transaction has committed (a long dump must not hold a transaction, which
 * the connections' idle_in_transaction_session_timeout would end); the outcome is recorded
 * after. Retention follows a successful backup only, so a failing schedule deletes nothing.
 */
export async function runScheduledBackup(deps: BackupDeps, now: Date): Promise<void> {
  const schedules = backupScheduleService(deps.db);
  const claimed = await schedules.claimDueSlot(now);
  if (!claimed) return;
  const backups = backupsService(deps);
  const outcome: RunOutcome = await backups.create('scheduled', SYSTEM_ACTOR).then(
    ({ filename }) => ({ ok: true, filename }),
    (err: Error) => ({ ok: false, error: err.message }),
  );
  await schedules.recordRun(claimed.runId, outcome);
  if (outcome.ok) await backups.pruneScheduled(claimed.retention);
}

/** Every minute each instance asks whether a slot is due, so schedule changes apply without a restart. */
export function scheduledBackupJob(deps: BackupDeps): Job {
  return { name: 'scheduled-backup', schedule: '* * * * *', run: () => runScheduledBackup(deps, new Date()) };
}
