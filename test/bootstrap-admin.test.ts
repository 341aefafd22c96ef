import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { bootstrapAdmin } from '../src/auth/bootstrap-admin';
import { verifyPassword } from '../src/auth/passwords';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

function capturingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

const config = (env: Record<string, string> = {}) => loadConfig({ NODE_ENV: 'test', ...env });

// One database for the file, so the cases run in order from an empty users table.
describe('bootstrapAdmin', () => {
  it('with no users and no ADMIN_EMAIL creates admin@localhost with a random password, written once to DATA_DIR/initial-admin-password (0600); the log names the file, never the password', async () => {
    await t.db('users').delete();
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-bootstrap-'));
    onTestFinished(() => fs.rm(dataDir, { recursive: true, force: true }));
    const file = path.join(dataDir, 'initial-admin-password');
    const { logger, lines } = capturingLogger();
    await bootstrapAdmin(t.db, config({ DATA_DIR: dataDir }), logger);

    const admin = await t.db('users').where({ email: 'admin@localhost' }).first();
    expect(admin).toMatchObject({ role: 'admin', is_active: true });
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    const content = await fs.readFile(file, 'utf8');
    const password = /^password: (\S+)$/m.exec(content)?.[1];
    expect(content).toMatch(/^email: admin@localhost$/m);
    expect(password).toBeDefined();
    expect(await verifyPassword(password!, admin.password_hash)).toBe(true);
    const log = lines.join('');
    expect(log).toContain(file);
    expect(log).not.toContain(password);

    // a second start changes nothing: no new admin, the file as it was, no password logged
    const again = capturingLogger();
    await bootstrapAdmin(t.db, config({ DATA_DIR: dataDir }), again.logger);
    expect(await t.db('users')).toHaveLength(1);
    expect(await fs.readFile(file, 'utf8')).toBe(content);
    expect(again.lines.join('')).not.toContain(password);
  });

  it('never overwrites an initial-admin-password file: with one left from an earlier install, start-up stops and creates no one', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-bootstrap-'));
    onTestFinished(() => fs.rm(dataDir, { recursive: true, force: true }));
    const file = path.join(dataDir, 'initial-admin-password');
    await fs.writeFile(file, 'email: admin@localhost\npassword: an-earlier-one\n');
    const other = await testApp();
    onTestFinished(() => other.close());
    await other.db('users').delete();

    await expect(bootstrapAdmin(other.db, config({ DATA_DIR: dataDir }), capturingLogger().logger)).rejects.toThrow(
      `${file} already exists (from an earlier first start): delete it, or set ADMIN_EMAIL and ADMIN_PASSWORD`,
    );
    expect(await fs.readFile(file, 'utf8')).toBe('email: admin@localhost\npassword: an-earlier-one\n');
    expect(await other.db('users')).toEqual([]);
  });

  it('with ADMIN_EMAIL and ADMIN_PASSWORD creates that active admin when the email is unknown, and writes no password file', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-bootstrap-'));
    onTestFinished(() => fs.rm(dataDir, { recursive: true, force: true }));
    const { logger } = capturingLogger();
    await bootstrapAdmin(
      t.db,
      config({
        DATA_DIR: dataDir,
        ADMIN_EMAIL: 'Boss@Example.ac.uk',
        ADMIN_PASSWORD: 'a boss password for the stores',
      }),
      logger,
    );
    expect(await fs.readdir(dataDir)).toEqual([]);
    const boss = await t.db('users').where({ email: 'boss@example.ac.uk' }).first();
    expect(boss).toMatchObject({ role: 'admin', is_active: true });
    expect(await verifyPassword('a boss password for the stores', boss.password_hash)).toBe(true);
    await t.request
      .post('/api/auth/login')
      .send({ email: 'boss@example.ac.uk', password: 'a boss password for the stores' })
      .expect(200);
    const created = await t.db('audit_log').where({ entity_type: 'user', entity_id: boss.id, action: 'create' });
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      actor_kind: 'system',
      actor_user_id: null,
      after: { email: 'boss@example.ac.uk', role: 'admin', password_hash: '[redacted]' },
    });
  });

  it('never overwrites an existing user with that email (role, password and status kept)', async () => {
    const existing = await buildUser(t.db, { email: 'keeper@example.ac.uk', role: 'user', isActive: false });
    const { logger } = capturingLogger();
    await bootstrapAdmin(
      t.db,
      config({ ADMIN_EMAIL: 'keeper@example.ac.uk', ADMIN_PASSWORD: 'another password' }),
      logger,
    );
    const after = await t.db('users').where({ id: existing.id }).first();
    expect(after).toMatchObject({ role: 'user', is_active: false, password_hash: existing.password_hash });
    expect(await t.db('users').whereRaw('lower(email) = ?', ['keeper@example.ac.uk'])).toHaveLength(1);
  });

  it('ADMIN_EMAIL without ADMIN_PASSWORD is a configuration error', () => {
    expect(() => config({ ADMIN_EMAIL: 'a@example.ac.uk' })).toThrow(/must be set together/);
  });
});
