import fs from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMaintenance } from '../src/db/maintenance';
import { createDb } from '../src/db/knex';
import { runScheduledBackup } from '../src/jobs/scheduled-backup';
import { createLogger } from '../src/logger';
import { latestSlot, slotAfter, type SlotRule } from '../src/modules/backups/backups.slots';
import type { BackupDeps } from '../src/modules/backups/backups.service';
import { testApp, type TestApp } from './helpers/app';
import { agentsByRole, type Agents } from './helpers/inventory-factories';
import { appWithAdmin, fakePgBinDir, NO_FITTING_CLIENT, placeBackupFile } from './backup-helpers';

let t: TestApp;
let as: Agents;
beforeAll(async () => {
  t = await testApp();
  as = await agentsByRole(t);
});
afterAll(() => t.close());

const iso = (d: Date) => d.toISOString();

/** The job's dependencies over an app's database and DATA_DIR, as server.ts builds them. */
function jobDeps(app: TestApp, overrides: Partial<BackupDeps> = {}): BackupDeps {
  return {
    db: app.db,
    databaseUrl: app.databaseUrl,
    config: app.config,
    logger: createLogger('silent'),
    maintenance: createMaintenance(),
    ...overrides,
  };
}

/** Saves a schedule through the API and dates the save back, so the latest slot counts as due. */
async function scheduleSavedEarlier(app: TestApp, admin: Agents['admin'], body: Record<string, unknown>, hoursAgo = 2) {
  await admin.post('/api/backups/schedule').send(body).expect(200);
  const earlier = app.db.raw(`now() - make_interval(hours => ?)`, [hoursAgo]);
  await app.db('backup_schedule').update({ changed_at: earlier });
  await app.db('backup_schedule').where({ enabled: true }).update({ enabled_at: earlier });
}

const backupFiles = async (app: TestApp) =>
  (await fs.readdir(path.join(app.dataDir, 'backups')).catch(() => [] as string[])).sort();

describe('backup slots (pure)', () => {
  const previousTz = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = 'Europe/London';
  });
  afterAll(() => {
    process.env.TZ = previousTz;
  });

  const slots = (rule: SlotRule, now: string) => ({
    latest: iso(latestSlot(rule, new Date(now))),
    next: iso(slotAfter(rule, new Date(now))),
  });

  it('hourly: at the minute of the time past every hour (the hour is ignored)', () => {
    const rule: SlotRule = { frequency: 'hourly', time: '02:15' };
    expect(slots(rule, '2026-06-10T10:20:00Z')).toEqual({
      latest: '2026-06-10T10:15:00.000Z',
      next: '2026-06-10T11:15:00.000Z',
    });
    expect(slots(rule, '2026-06-10T10:15:00Z')).toEqual({
      latest: '2026-06-10T10:15:00.000Z',
      next: '2026-06-10T11:15:00.000Z',
    });
    expect(slots(rule, '2026-06-10T10:14:59Z')).toEqual({
      latest: '2026-06-10T09:15:00.000Z',
      next: '2026-06-10T10:15:00.000Z',
    });
  });

  it('daily: at the local time (02:00 BST is 01:00 UTC in summer)', () => {
    const rule: SlotRule = { frequency: 'daily', time: '02:00' };
    expect(slots(rule, '2026-06-10T00:30:00Z')).toEqual({
      latest: '2026-06-09T01:00:00.000Z',
      next: '2026-06-10T01:00:00.000Z',
    });
    expect(slots(rule, '2026-01-10T12:00:00Z')).toEqual({
      latest: '2026-01-10T02:00:00.000Z',
      next: '2026-01-11T02:00:00.000Z',
    });
  });

  it('weekly: on Sundays at the local time', () => {
    const rule: SlotRule = { frequency: 'weekly', time: '02:00' };
    // 2026-06-10 is a Wednesday; 2026-06-07 a Sunday
    expect(slots(rule, '2026-06-10T12:00:00Z')).toEqual({
      latest: '2026-06-07T01:00:00.000Z',
      next: '2026-06-14T01:00:00.000Z',
    });
    expect(slots(rule, '2026-06-07T00:30:00Z')).toEqual({
      latest: '2026-05-31T01:00:00.000Z',
      next: '2026-06-07T01:00:00.000Z',
    });
  });

  it('DST starts (29 March 2026, 01:00 GMT -> 02:00 BST): a day of 23 hours; a skipped time runs an hour later by the clock', () => {
    expect(slots({ frequency: 'daily', time: '02:00' }, '2026-03-28T12:00:00Z').next).toBe('2026-03-29T01:00:00.000Z');
    const skipped: SlotRule = { frequency: 'daily', time: '01:30' };
    expect(slots(skipped, '2026-03-28T12:00:00Z').next).toBe('2026-03-29T01:30:00.000Z');
    expect(slots(skipped, '2026-03-29T01:45:00Z')).toEqual({
      latest: '2026-03-29T01:30:00.000Z',
      next: '2026-03-30T00:30:00.000Z',
    });
  });

  it('DST ends (25 October 2026, 02:00 BST -> 01:00 GMT): a time that happens twice runs once, at the first; hourly runs every real hour', () => {
    const twice: SlotRule = { frequency: 'daily', time: '01:30' };
    expect(slots(twice, '2026-10-24T12:00:00Z').next).toBe('2026-10-25T00:30:00.000Z');
    expect(slots(twice, '2026-10-25T01:45:00Z')).toEqual({
      latest: '2026-10-25T00:30:00.000Z',
      next: '2026-10-26T01:30:00.000Z',
    });
    expect(slots({ frequency: 'hourly', time: '00:30' }, '2026-10-25T01:10:00Z')).toEqual({
      latest: '2026-10-25T00:30:00.000Z',
      next: '2026-10-25T01:30:00.000Z',
    });
  });
});

describe('GET /api/backups/schedule/status', () => {
  it('200 on a new install: a daily backup at 02:00 keeping 14, due at the next 02:00', async () => {
    const { admin } = await appWithAdmin();
    const now = new Date();
    const status = (await admin.get('/api/backups/schedule/status').expect(200)).body;
    expect(status).toEqual({
      enabled: true,
      frequency: 'daily',
      time: '02:00',
      retention: 14,
      nextRunAt: expect.any(String),
      lastRun: null,
    });
    const rule: SlotRule = { frequency: 'daily', time: '02:00' };
    // the next slot, or the latest one when the database was made just before it
    expect([iso(slotAfter(rule, now)), iso(latestSlot(rule, now))]).toContain(status.nextRunAt);
  });

  it('401 without a session, 403 for a manager', async () => {
    await t.request.get('/api/backups/schedule/status').expect(401);
    await as.manager.get('/api/backups/schedule/status').expect(403);
  });
});

describe('POST /api/backups/schedule', () => {
  it('200 saves the schedule and answers its status, nextRunAt the next slot', async () => {
    const res = await as.admin
      .post('/api/backups/schedule')
      .send({ enabled: true, frequency: 'weekly', time: '03:30', retention: 12 })
      .expect(200);
    const next = slotAfter({ frequency: 'weekly', time: '03:30' }, new Date());
    expect(res.body).toEqual({
      enabled: true,
      frequency: 'weekly',
      time: '03:30',
      retention: 12,
      nextRunAt: iso(next),
      lastRun: null,
    });
    expect((await as.admin.get('/api/backups/schedule/status').expect(200)).body).toEqual(res.body);
    const row = await t.db('backup_schedule').first();
    expect(row).toMatchObject({ enabled: true, frequency: 'weekly', time: '03:30', retention: 12 });
  });

  it('200 disables it: nextRunAt null, the settings kept', async () => {
    await as.admin
      .post('/api/backups/schedule')
      .send({ enabled: true, frequency: 'hourly', time: '00:05', retention: 3 })
      .expect(200);
    const res = await as.admin
      .post('/api/backups/schedule')
      .send({ enabled: false, frequency: 'hourly', time: '00:05', retention: 3 })
      .expect(200);
    expect(res.body).toMatchObject({
      enabled: false,
      frequency: 'hourly',
      time: '00:05',
      retention: 3,
      nextRunAt: null,
    });
    expect(await t.db('backup_schedule').first('enabled', 'enabled_at')).toEqual({ enabled: false, enabled_at: null });
  });

  it('400 names every missing field', async () => {
    const res = await as.admin.post('/api/backups/schedule').send({}).expect(400);
    expect(res.body.message).toBe('Validation failed');
    expect(res.body.errors).toEqual(
      expect.arrayContaining(
        ['enabled', 'frequency', 'time', 'retention'].map((field) => ({ field, message: 'is required' })),
      ),
    );
  });

  it.each([
    [{ enabled: 'yes' }, 'enabled', 'must be true or false'],
    [{ frequency: 'monthly' }, 'frequency', 'must be hourly, daily or weekly'],
    [{ time: '24:00' }, 'time', 'must be a time HH:MM (24-hour)'],
    [{ time: '2:00' }, 'time', 'must be a time HH:MM (24-hour)'],
    [{ time: '02:60' }, 'time', 'must be a time HH:MM (24-hour)'],
    [{ retention: 0 }, 'retention', 'must be a whole number from 1 to 1000'],
    [{ retention: 1001 }, 'retention', 'must be a whole number from 1 to 1000'],
    [{ retention: 1.5 }, 'retention', 'must be a whole number from 1 to 1000'],
    [{ retention: '30' }, 'retention', 'must be a whole number from 1 to 1000'],
  ])('400 for %j', async (change, field, message) => {
    const before = await t.db('backup_schedule').first();
    const body = { enabled: true, frequency: 'daily', time: '02:00', retention: 30, ...change };
    const res = await as.admin.post('/api/backups/schedule').send(body).expect(400);
    expect(res.body).toEqual({ message: 'Validation failed', errors: [{ field, message }] });
    expect(await t.db('backup_schedule').first()).toEqual(before);
  });

  it('401 without a session, 403 for a manager', async () => {
    const body = { enabled: true, frequency: 'daily', time: '02:00', retention: 30 };
    await t.request.post('/api/backups/schedule').send(body).expect(401);
    await as.manager.post('/api/backups/schedule').send(body).expect(403);
  });
});

describe('scheduled backups', () => {
  it.skipIf(NO_FITTING_CLIENT)(
    'a new install makes its first scheduled backup at the first 02:00, unless an admin turns the schedule off',
    async () => {
      const { app, admin } = await appWithAdmin();
      const firstSlot = new Date((await admin.get('/api/backups/schedule/status').expect(200)).body.nextRunAt);
      await runScheduledBackup(jobDeps(app), new Date(firstSlot.getTime() + 60_000));
      expect(await backupFiles(app)).toEqual([expect.stringMatching(/-scheduled\.dump$/)]);

      const other = await appWithAdmin();
      await other.admin
        .post('/api/backups/schedule')
        .send({ enabled: false, frequency: 'daily', time: '02:00', retention: 14 })
        .expect(200);
      await runScheduledBackup(jobDeps(other.app), new Date(firstSlot.getTime() + 24 * 3_600_000 + 60_000));
      expect(await backupFiles(other.app)).toEqual([]);
    },
  );

  it.skipIf(NO_FITTING_CLIENT)(
    'two instances over one database make one backup and one run record for the slot',
    async () => {
      const { app, admin } = await appWithAdmin();
      const now = new Date();
      // half an hour from the slots on either side, so the test never straddles one
      const rule: SlotRule = {
        frequency: 'hourly',
        time: `00:${String((now.getMinutes() + 30) % 60).padStart(2, '0')}`,
      };
      await scheduleSavedEarlier(app, admin, { enabled: true, ...rule, retention: 5 });
      const otherInstance = createDb(app.databaseUrl, 2);
      try {
        await Promise.all([
          runScheduledBackup(jobDeps(app), now),
          runScheduledBackup(jobDeps(app, { db: otherInstance }), now),
        ]);
        await runScheduledBackup(jobDeps(app, { db: otherInstance }), now);

        const runs = await app.db('backup_runs').select('slot', 'ok', 'filename', 'error');
        expect(runs).toEqual([
          { slot: latestSlot(rule, now), ok: true, filename: expect.stringMatching(/-scheduled\.dump$/), error: null },
        ]);
        expect(await backupFiles(app)).toEqual([runs[0].filename]);

        const status = (await admin.get('/api/backups/schedule/status').expect(200)).body;
        expect(status.lastRun).toEqual({ at: expect.any(String), filename: runs[0].filename, ok: true, error: null });
        expect(status.nextRunAt).toBe(iso(slotAfter(rule, now)));
      } finally {
        await otherInstance.destroy();
      }
    },
  );

  it('runs nothing while disabled, nor for a slot that was already past when the schedule was saved', async () => {
    const { app, admin } = await appWithAdmin();
    await scheduleSavedEarlier(app, admin, { enabled: false, frequency: 'hourly', time: '00:00', retention: 5 });
    await runScheduledBackup(jobDeps(app), new Date());

    const now = new Date();
    const halfAnHourAgo = String((now.getMinutes() + 30) % 60).padStart(2, '0');
    await admin
      .post('/api/backups/schedule')
      .send({ enabled: true, frequency: 'hourly', time: `00:${halfAnHourAgo}`, retention: 5 })
      .expect(200);
    await runScheduledBackup(jobDeps(app), new Date());

    expect(await app.db('backup_runs')).toEqual([]);
    expect(await backupFiles(app)).toEqual([]);
  });

  it.skipIf(NO_FITTING_CLIENT)(
    'retention keeps the newest scheduled backups and never deletes manual ones',
    async () => {
      const { app, admin } = await appWithAdmin();
      const old = [
        'stores-20250101-020000-scheduled.dump',
        'stores-20250102-020000-scheduled.dump',
        'stores-20250103-020000-scheduled.dump',
      ];
      const manual = ['stores-20240101-020000-manual.dump', 'stores-20250104-020000-manual.dump'];
      for (const name of [...old, ...manual]) await placeBackupFile(app, name);
      await scheduleSavedEarlier(app, admin, { enabled: true, frequency: 'daily', time: '00:00', retention: 2 }, 25);

      await runScheduledBackup(jobDeps(app), new Date());

      const { filename } = await app.db('backup_runs').first('filename');
      expect(await backupFiles(app)).toEqual([...manual, 'stores-20250103-020000-scheduled.dump', filename].sort());
    },
  );

  it.skipIf(NO_FITTING_CLIENT)(
    'a failed scheduled backup leaves no file, is recorded and logged, and raises a critical alert',
    async () => {
      const failing = await fakePgBinDir({
        pg_dump:
          'if [ "$1" = "--version" ]; then echo "pg_dump (PostgreSQL) 15.4"; exit 0; fi\necho "pg_dump: error: disk on fire" >&2\nexit 1',
      });
      const { app, admin } = await appWithAdmin({ PG_BIN_DIR: failing });
      await scheduleSavedEarlier(app, admin, { enabled: true, frequency: 'daily', time: '00:00', retention: 2 }, 25);
      const logged: string[] = [];
      const sink = new Writable({
        write(chunk, _encoding, done) {
          logged.push(String(chunk));
          done();
        },
      });

      await runScheduledBackup(jobDeps(app, { logger: createLogger('info', sink) }), new Date());

      expect(await backupFiles(app)).toEqual([]);
      const run = await app.db('backup_runs').first('ok', 'filename', 'error', 'finished_at');
      expect(run).toEqual({
        ok: false,
        filename: null,
        error: 'Backup failed: pg_dump: error: disk on fire',
        finished_at: expect.any(Date),
      });
      expect(logged.map((line) => JSON.parse(line))).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'backup failed',
          type: 'scheduled',
          err: expect.objectContaining({ message: 'Backup failed: pg_dump: error: disk on fire' }),
        }),
      );
      const status = (await admin.get('/api/backups/schedule/status').expect(200)).body;
      expect(status.lastRun).toEqual({
        at: expect.any(String),
        filename: null,
        ok: false,
        error: 'Backup failed: pg_dump: error: disk on fire',
      });
      const { alerts } = (await admin.get('/api/system/alerts').expect(200)).body;
      expect(alerts).toContainEqual({
        type: 'backup_failed',
        level: 'critical',
        message: `The last scheduled backup (${status.lastRun.at}) failed: Backup failed: pg_dump: error: disk on fire`,
      });
    },
  );

  it('a critical alert when no scheduled backup succeeded for twice the period; none once one has, or while disabled', async () => {
    const { app, admin } = await appWithAdmin();
    const alertTypes = async () =>
      ((await admin.get('/api/system/alerts').expect(200)).body.alerts as { type: string }[]).map((a) => a.type);
    await scheduleSavedEarlier(app, admin, { enabled: true, frequency: 'daily', time: '00:00', retention: 2 }, 47);
    expect(await alertTypes()).not.toContain('backup_overdue');

    await app.db('backup_schedule').update({ enabled_at: app.db.raw(`now() - interval '49 hours'`) });
    const { alerts } = (await admin.get('/api/system/alerts').expect(200)).body;
    expect(alerts).toContainEqual({
      type: 'backup_overdue',
      level: 'critical',
      message: expect.stringMatching(/^No scheduled backup has succeeded since .* \(the schedule is daily\)$/),
    });

    await app.db('backup_runs').insert({
      slot: app.db.raw(`now() - interval '1 hour'`),
      started_at: app.db.raw(`now() - interval '1 hour'`),
      ok: true,
      filename: 'x',
    });
    expect(await alertTypes()).not.toContain('backup_overdue');

    await app.db('backup_runs').update({ started_at: app.db.raw(`now() - interval '3 days'`) });
    await admin
      .post('/api/backups/schedule')
      .send({ enabled: false, frequency: 'daily', time: '00:00', retention: 2 })
      .expect(200);
    expect(await alertTypes()).not.toContain('backup_overdue');
  });
});
