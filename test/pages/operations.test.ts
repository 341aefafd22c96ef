import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../src/modules/audit/audit.actor';
import { auditTrail } from '../../src/modules/audit/audit.service';
import { backupFolder } from '../../src/modules/backups/backups.files';
import { deploymentNotificationsService } from '../../src/modules/deployments/deployments.service';
import { salesService } from '../../src/modules/sales/sales.service';
import type { UserRow } from '../../src/modules/users/users.service';
import { expectAccessible, PHONE, screenshot, useBrowserApp, VIEWPORTS } from '../helpers/browser';
import { buildItem, buildUser } from '../helpers/factories';
import { buildChargeCode } from '../helpers/sales-factories';

const b = useBrowserApp();

let manager: UserRow;
let admin: UserRow;
beforeAll(async () => {
  [manager, admin] = await Promise.all([
    buildUser(b.t.db, { role: 'manager', firstName: 'Mo', lastName: 'Manager' }),
    buildUser(b.t.db, { role: 'admin', firstName: 'Ada', lastName: 'Admin' }),
  ]);
});

const status = (page: Page, text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).waitFor();

describe('/backups', () => {
  it('an admin creates a backup and sees it listed; restore refuses a wrong typed name; delete confirms first; the schedule saves', async () => {
    const page = await b.openAs(admin, '/backups');
    await page.getByText('No backups yet.').waitFor();
    // the server's version and the client tools' beside it (issue 44), whether or not they fit
    expect(await page.getByRole('region', { name: 'PostgreSQL versions' }).textContent()).toMatch(
      /Server\s+PostgreSQL \d+\.\d+\s+pg_dump\s+\d+\.\d+\s+pg_restore\s+\d+\.\d+\s+psql\s+\d+\.\d+/,
    );
    await page.getByRole('button', { name: 'Create backup' }).click();
    await status(page, /Backup created: stores-\d{8}-\d{6}-manual\.dump/);
    const [backup] = await backupFolder(b.t.dataDir).list();
    expect(backup.type).toBe('manual');
    await expect(fs.stat(path.join(b.t.dataDir, 'backups', backup.filename))).resolves.toMatchObject({
      size: backup.size,
    });
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: backup.filename }) });
    expect(await row.textContent()).toContain('Manual');
    // the download link is the API's, signed in by the session
    const download = await page.request.get(
      (await row.getByRole('link', { name: `Download ${backup.filename}` }).getAttribute('href'))!,
    );
    expect(download.headers()['content-type']).toBe('application/octet-stream');
    expect((await download.body()).length).toBe(backup.size);
    await expectAccessible(page);
    // on a phone the row is a block: nothing to scroll sideways to reach its actions
    await page.setViewportSize(PHONE);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    const restore = row.getByRole('link', { name: `Restore ${backup.filename}` });
    const box = (await restore.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    await page.setViewportSize(VIEWPORTS[0]);
    await screenshot(page, 'operations-backups');

    // restore: the typed name must be the file's; a mismatch comes back on the form and nothing is restored
    b.expectHttpErrors(422);
    await row.getByRole('link', { name: `Restore ${backup.filename}` }).click();
    await page.getByRole('heading', { name: 'Restore backup' }).waitFor();
    await page.getByLabel('Type the file name to confirm').fill(backup.filename.replace('manual', 'manuel'));
    await page.getByRole('button', { name: 'Restore the database from this backup' }).click();
    await page.getByText("must be the backup's file name").waitFor();
    expect(await page.getByLabel('Type the file name to confirm').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);
    await screenshot(page, 'operations-backup-restore');
    // still signed in: no restore ran (it would have ended every session)
    await page.getByRole('link', { name: 'Cancel' }).click();

    // the schedule: a wrong retention is refused beside its field, a right one is saved
    await page.getByLabel('Run scheduled backups').check();
    await page.getByLabel('Frequency').selectOption('weekly');
    await page.getByLabel(/^Time/).fill('03:30');
    await page.getByLabel('Scheduled backups to keep').fill('0');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByText('must be a whole number from 1 to 1000').waitFor();
    expect(await page.getByLabel('Frequency').inputValue()).toBe('weekly');
    await page.getByLabel('Scheduled backups to keep').fill('7');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await status(page, 'Backup schedule saved');
    await page.getByText('On, weekly at 03:30 on Sundays, keeping the newest 7').waitFor();
    expect(await b.t.db('backup_schedule').first('enabled', 'frequency', 'time', 'retention')).toEqual({
      enabled: true,
      frequency: 'weekly',
      time: '03:30',
      retention: 7,
    });

    // delete shows what it will do, then does it
    await page.getByRole('link', { name: `Delete ${backup.filename}` }).click();
    await page.getByRole('button', { name: `Delete backup ${backup.filename}` }).click();
    await status(page, `Backup ${backup.filename} deleted`);
    await expect(fs.stat(path.join(b.t.dataDir, 'backups', backup.filename))).rejects.toThrow();
  });

  it('403 for a manager on the admin pages and on forged posts, and for a post without the form token', async () => {
    const agent = await b.t.loginAs(manager);
    const html = (await agent.get('/notifications').expect(200)).text;
    const token = /name="_csrf" value="([^"]+)"/.exec(html)![1];
    await agent.get('/backups').expect(403);
    await agent.get('/archives').expect(403);
    await agent.get('/audit').expect(403);
    await agent.post('/backups').type('form').send({ _csrf: token }).expect(403);
    await agent
      .post('/archives')
      .type('form')
      .send({ _csrf: token, ageThresholdDays: '0', includeRecordTypes: 'sales' })
      .expect(403);
    // deleting a deployment notification is the API's admin route: a manager's forged post is refused, an admin's deletes it
    const { notification } = await deploymentNotificationsService(b.t.db).record({
      source: 'watchtower',
      event: 'notification',
      message: 'updated app',
      payloadJson: '{}',
    });
    await agent
      .post(`/notifications/deployments/${notification.id}/delete`)
      .type('form')
      .send({ _csrf: token })
      .expect(403);
    const adminAgent = await b.t.loginAs(admin);
    await adminAgent.post('/backups').type('form').send({}).expect(403);
    expect(await backupFolder(b.t.dataDir).list()).toEqual([]);
    expect(await b.t.db('archives').count({ n: '*' })).toEqual([{ n: 0 }]);
    const adminToken = /name="_csrf" value="([^"]+)"/.exec(
      (await adminAgent.get('/notifications').expect(200)).text,
    )![1];
    await adminAgent
      .post(`/notifications/deployments/${notification.id}/delete`)
      .type('form')
      .send({ _csrf: adminToken })
      .expect(303);
    expect(await b.t.db('deployment_notifications').where({ id: notification.id }).first()).toBeUndefined();
  });
});

describe('/archives', () => {
  it('an admin previews the count by age, creates an archive, and purges it only once ticked', async () => {
    const item = await buildItem(b.t.db, { price: '2.00', currentStock: 20 });
    const { code } = await buildChargeCode(b.t.db);
    await salesService(b.t.db).create(admin, {
      chargeCode: code,
      items: [{ itemId: item.id, quantity: '1' }],
      vatApplied: false,
    });
    const [{ n: sales }] = await b.t.db('sales').count({ n: '*' });

    const page = await b.openAs(admin, '/archives');
    await page.getByLabel('Older than (days)', { exact: true }).fill('0');
    await page.getByRole('button', { name: 'Preview' }).click();
    const counts = page.getByLabel('Records older than 0 days');
    await counts.waitFor();
    expect(await counts.getByText('Sales').locator('..').textContent()).toContain(String(sales));
    await expectAccessible(page);
    await screenshot(page, 'operations-archives');

    await page.getByLabel('Records older than (days)').fill('0');
    await page.getByLabel('Orders').uncheck();
    await page.getByRole('button', { name: 'Create archive' }).click();
    await status(page, /Archive \d+ written/);
    const archive = await b.t.db('archives').first();
    expect(archive).toMatchObject({
      status: 'completed',
      record_types: ['sales', 'stock_movements'],
      sales_count: Number(sales),
    });
    await expect(fs.stat(path.join(b.t.dataDir, 'archives', archive.archive_name))).resolves.toBeTruthy();

    const download = await page.request.get(
      (await page.getByRole('link', { name: `Download archive ${archive.id}` }).getAttribute('href'))!,
    );
    expect(download.headers()['content-type']).toBe('application/gzip');
    expect((await download.body()).length).toBe(archive.size_bytes);

    b.expectHttpErrors(422);
    await page.getByRole('link', { name: `Purge archive ${archive.id}` }).click();
    await page.getByRole('button', { name: 'Purge the archived records' }).click();
    await page.getByText('must be ticked to delete the archived records').waitFor();
    expect((await b.t.db('archives').where({ id: archive.id }).first()).status).toBe('completed');
    await screenshot(page, 'operations-archive-purge');
    await page.getByLabel(/I have a copy of the archive file/).check();
    await page.getByRole('button', { name: 'Purge the archived records' }).click();
    await page.getByRole('heading', { name: `Archive ${archive.id} purged` }).waitFor();
    // the sale is not paid: kept, and the page says why
    await page.getByText('not paid yet').waitFor();
    await expectAccessible(page);
    expect((await b.t.db('archives').where({ id: archive.id }).first()).status).toBe('purged');
    // purged once: the list offers no second purge (the service would refuse it)
    await page.goto('/archives');
    await page
      .getByText(/^Purged /)
      .first()
      .waitFor();
    expect(await page.getByRole('link', { name: `Purge archive ${archive.id}` }).count()).toBe(0);
  });
});

describe('/notifications', () => {
  it('a manager acknowledges a low-stock alert and sees the deployments', async () => {
    const item = await buildItem(b.t.db, { name: 'Pipette tips', currentStock: 2, minimumStock: 5 });
    await deploymentNotificationsService(b.t.db).record({
      source: 'github',
      event: 'push',
      summary: 'alice pushed 3 commits to main',
      payloadJson: '{}',
    });

    const page = await b.openAs(manager, '/notifications');
    await page.getByText('alice pushed 3 commits to main').waitFor();
    // deleting a deployment notification is for admins only
    expect(await page.getByRole('button', { name: /Delete notification/ }).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'operations-notifications');
    await page.getByRole('button', { name: 'Acknowledge Pipette tips' }).click();
    await status(page, "Acknowledged: 'Pipette tips' is low on stock: 2 left, minimum 5");
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Pipette tips' }) });
    expect(await row.textContent()).toContain('by Mo Manager');
    expect(
      await b.t.db('low_stock_acknowledgements').where({ item_id: item.id }).first('acknowledged_by', 'cleared_at'),
    ).toEqual({ acknowledged_by: manager.id, cleared_at: null });
  });
});

describe('/audit', () => {
  it('an admin narrows the trail by entity type and actor, and downloads it as CSV', async () => {
    const trail = auditTrail(b.t.db);
    await trail.record(SYSTEM_ACTOR, {
      entityType: 'setting',
      entityId: 'audit-page-setting',
      action: 'update',
      before: { value: 'a' },
      after: { value: 'b' },
    });
    await trail.record(
      { ...SYSTEM_ACTOR, kind: 'session', userId: admin.id, email: admin.email },
      { entityType: 'charge_code', entityId: 'AUDIT-PAGE-CODE', action: 'create', after: { code: 'AUDIT-PAGE-CODE' } },
    );

    const page = await b.openAs(admin, '/audit');
    await page.getByText('AUDIT-PAGE-CODE').first().waitFor();
    await page.getByText('audit-page-setting').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'operations-audit');

    await page.getByLabel('Entity type').fill('charge_code');
    await page.getByLabel('Done by').selectOption({ label: `Ada Admin (${admin.email})` });
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(
      (url) => url.searchParams.get('entityType') === 'charge_code' && url.searchParams.get('userId') === admin.id,
    );
    await page.getByText('audit-page-setting').waitFor({ state: 'detached' });
    expect(await page.getByRole('row').filter({ hasText: 'AUDIT-PAGE-CODE' }).count()).toBe(1);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const csv = await fs.readFile((await download.path())!, 'utf8');
    const lines = csv.trim().split(/\r?\n/);
    expect(lines[0]).toContain('Occurred At');
    expect(lines.slice(1).every((line) => line.includes('charge_code'))).toBe(true);
    expect(csv).toContain('AUDIT-PAGE-CODE');
    expect(csv).not.toContain('audit-page-setting');
  });
});
