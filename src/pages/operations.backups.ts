import type { Response, Router } from 'express';
import { z } from 'zod';
import type { Deps } from '../deps';
import { destroySession } from '../auth/session';
import { actorOf } from '../modules/audit/audit.actor';
import {
  presentBackupList,
  presentCreatedBackup,
  presentRestored,
  presentScheduleStatus,
} from '../modules/backups/backups.present';
import { backupScheduleService } from '../modules/backups/backups.schedule';
import { BackupFilenameParams, BackupSchedule } from '../modules/backups/backups.schemas';
import { backupsService } from '../modules/backups/backups.service';
import { BACKUP_ADMINS } from '../modules/backups/backups.policy';
import { attempt, checked, flash, type FieldErrors } from './forms';
import { PageRouter, type PageRequest } from './page-route';

/** The schedule form's fields as typed, for showing them again. */
type ScheduleValues = { enabled: boolean; frequency: string; time: string; retention: string };

/**
 * The restore form asks for the file's name typed out: restoring replaces the whole database,
 * so a click on the wrong row must not be enough.
 */
const RestoreConfirmation = (filename: string) =>
  z.object({
    confirmFilename: z.literal(filename, { error: `must be the backup's file name, ${filename}, typed exactly` }),
  });

/** The schedule form as typed. */
const typedSchedule = (body: Record<string, unknown>): ScheduleValues => ({
  enabled: checked(body.enabled),
  frequency: String(body.frequency ?? ''),
  time: String(body.time ?? ''),
  retention: String(body.retention ?? ''),
});

/** The restore form as typed. */
const typedRestore = (body: Record<string, unknown>) => ({ confirmFilename: String(body.confirmFilename ?? '') });

/** /backups (admin, as the API): the list, making, downloading, deleting and restoring backups, and the schedule. */
export function backupsPages(deps: Deps): Router {
  const pages = new PageRouter(deps.db);
  const backups = backupsService(deps);
  const schedules = backupScheduleService(deps.db);

  async function renderList(
    res: Response,
    schedule: { status: number; values: ScheduleValues; errors: FieldErrors; message: string } | null = null,
  ) {
    const [list, status, versions] = await Promise.all([
      backups.list(),
      schedules.status(new Date()),
      backups.toolVersions(),
    ]);
    const saved = presentScheduleStatus(status);
    res.status(schedule?.status ?? 200).render('operations/backups', {
      title: 'Backups',
      backups: presentBackupList(list).backups,
      versions,
      schedule: saved,
      scheduleForm: schedule ?? { values: { ...saved, retention: String(saved.retention) }, errors: {}, message: null },
    });
  }

  /** The backup named in the path, or the 404 page: the service checks the name against the backup pattern. */
  async function existing(req: PageRequest<{ readonly params: z.output<typeof BackupFilenameParams> }>) {
    const { filename } = req.input.params;
    await (await backups.open(filename)).handle.close();
    return filename;
  }

  pages.get('/backups', { access: BACKUP_ADMINS }, async (_req, res) => {
    await renderList(res);
  });

  pages.post('/backups', { access: BACKUP_ADMINS }, async (req, res) => {
    const created = presentCreatedBackup(await backups.create('manual', actorOf(req)));
    flash(req, `${created.message}: ${created.filename}`);
    res.redirect(303, '/backups');
  });

  pages.post(
    '/backups/schedule',
    {
      access: BACKUP_ADMINS,
      form: BackupSchedule,
      // the form's text as the API's JSON types: a checkbox is a boolean, the retention a number
      fromForm: (body) => {
        const values = typedSchedule(body);
        return { ...values, retention: values.retention.trim() === '' ? undefined : Number(values.retention) };
      },
    },
    async (req, res) => {
      const values = typedSchedule(req.body);
      const result = await attempt(() => schedules.set(req.input.form));
      if (!result.ok) return renderList(res, { ...result, values });
      flash(req, 'Backup schedule saved');
      res.redirect(303, '/backups');
    },
  );

  pages.get('/backups/:filename/delete', { access: BACKUP_ADMINS, params: BackupFilenameParams }, async (req, res) => {
    res.render('operations/backup-delete', { title: 'Delete backup', filename: await existing(req) });
  });

  pages.post('/backups/:filename/delete', { access: BACKUP_ADMINS, params: BackupFilenameParams }, async (req, res) => {
    const { filename } = req.input.params;
    await backups.delete(filename, actorOf(req));
    flash(req, `Backup ${filename} deleted`);
    res.redirect(303, '/backups');
  });

  const renderRestore = (
    res: Response,
    filename: string,
    form = { status: 200, values: { confirmFilename: '' }, errors: {} as FieldErrors, message: null as string | null },
  ) => res.status(form.status).render('operations/backup-restore', { title: 'Restore backup', filename, ...form });

  pages.get('/backups/:filename/restore', { access: BACKUP_ADMINS, params: BackupFilenameParams }, async (req, res) => {
    renderRestore(res, await existing(req));
  });

  pages.post(
    '/backups/:filename/restore',
    {
      access: BACKUP_ADMINS,
      params: BackupFilenameParams,
      // the backup's own name, as the path gives it, typed out
      form: (_body, req) => RestoreConfirmation(String(req.params.filename)),
      fromForm: typedRestore,
    },
    async (req, res) => {
      const filename = await existing(req);
      const typed = typedRestore(req.body);
      // the service's 400 (not a complete backup of this service) comes back on the form; 409, 500 and 503 are the error page
      const result = await attempt(async () => {
        // the form is only the confirmation: reading it refuses a name typed wrong beside its field
        void req.input.form;
        return backups.restore(filename, actorOf(req));
      }, [400]);
      if (!result.ok) return renderRestore(res, filename, { ...result, values: typed });
      // The restored database holds no sessions: this one ends too, and the page says to sign in again.
      await destroySession(req);
      res.locals.currentUser = null;
      res.locals.nav = [];
      res.render('operations/backup-restored', {
        title: 'Database restored',
        restored: presentRestored(filename, result.value),
      });
    },
  );

  return pages.router;
}
