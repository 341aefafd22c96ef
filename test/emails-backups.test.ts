import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMaintenance } from '../src/db/maintenance';
import { createLogger } from '../src/logger';
import { alertOverdueBackups, runScheduledBackup } from '../src/jobs/scheduled-backup';
import { outboxMessages } from '../src/modules/outbox/outbox.queries';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { fakePgBinDir, NO_FITTING_CLIENT } from './backup-helpers';
import { TestSmtp } from './helpers/smtp';
import { until } from './helpers/poll';

// http: over https the session cookie is Secure, and supertest's agent speaks http
const PUBLIC_URL = 'http://stores.example.ac.uk';
let smtp: TestSmtp;
let t: TestApp;

beforeAll(async () => {
  smtp = await TestSmtp.start();
  const failing = await fakePgBinDir({
    pg_dump:
      'if [ "$1" = "--version" ]; then echo "pg_dump (PostgreSQL) 15.4"; exit 0; fi\necho "pg_dump: error: disk on fire" >&2\nexit 1',
  });
  t = await testApp(
    { SMTP_URL: smtp.url, PUBLIC_URL, OUTBOX_RETRY_BASE_MS: '100', PG_BIN_DIR: failing },
    { deliverOutbox: true },
  );
});
afterAll(async () => {
  await t.close();
  await smtp.stop();
});

const deps = () => ({
  db: t.db,
  databaseUrl: t.databaseUrl,
  config: t.config,
  logger: createLogger('silent'),
  maintenance: createMaintenance(),
});

describe('backup emails', () => {
  it.skipIf(NO_FITTING_CLIENT)(
    'a failed scheduled backup, and overdue backups (once a day), are emailed to the admins with the switch on',
    async () => {
      const admin = await buildUser(t.db, { role: 'admin', email: 'admin@example.ac.uk' });
      const quietAdmin = await buildUser(t.db, { role: 'admin', email: 'quiet-admin@example.ac.uk' });
      await buildUser(t.db, { role: 'manager', email: 'manager@example.ac.uk' });
      await (await t.loginAs(quietAdmin)).patch('/api/email-preferences').send({ backupAlerts: false }).expect(200);
      const agent = await t.loginAs(admin);
      await agent
        .post('/api/backups/schedule')
        .send({ enabled: true, frequency: 'daily', time: '00:00', retention: 2 })
        .expect(200);
      // saved a day ago, so today's slot is due
      const earlier = t.db.raw(`now() - interval '25 hours'`);
      await t.db('backup_schedule').update({ changed_at: earlier, enabled_at: earlier });

      await runScheduledBackup(deps(), new Date());
      const [failed] = await until(
        () => smtp.to('admin@example.ac.uk'),
        (m) => m.length === 1,
      );
      expect(failed.subject).toBe('Scheduled backup failed');
      expect(failed.text).toContain('pg_dump: error: disk on fire');
      expect(failed.text).toContain(`${PUBLIC_URL}/backups`);
      expect(failed.html).toContain(`href="${PUBLIC_URL}/backups"`);

      // nothing has succeeded for two days: overdue
      await t.db('backup_schedule').update({ enabled_at: t.db.raw(`now() - interval '49 hours'`) });
      await alertOverdueBackups(t.db, new Date());
      await alertOverdueBackups(t.db, new Date());
      const mails = await until(
        () => smtp.to('admin@example.ac.uk'),
        (m) => m.length === 2,
      );
      expect(mails[1].subject).toBe('Scheduled backups are overdue');
      expect(mails[1].text).toContain('No scheduled backup has succeeded since');
      // a day later, still overdue: reminded
      await alertOverdueBackups(t.db, new Date(Date.now() + 25 * 3_600_000));
      await until(
        () => smtp.to('admin@example.ac.uk'),
        (m) => m.length === 3,
      );
      expect(smtp.to('admin@example.ac.uk')).toHaveLength(3);

      for (const other of ['quiet-admin@example.ac.uk', 'manager@example.ac.uk'])
        expect(await outboxMessages(t.db, { destination: other })).toEqual([]);
    },
  );
});
