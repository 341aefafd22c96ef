import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import supertest from 'supertest';
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
  return { logger: createLogger('info', sink), sink, lines };
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

  it('the generated password must be changed at the first sign-in: pages open the change-password page, the API answers 403; the change deletes the file and the log says so, without a password', async () => {
    const { logger, sink, lines } = capturingLogger();
    const app = await testApp({ LOG_LEVEL: 'info' }, { logDestination: sink });
    onTestFinished(() => app.close());
    await app.db('users').delete();
    await bootstrapAdmin(app.db, app.config, logger);
    const file = path.join(app.dataDir, 'initial-admin-password');
    const generated = /^password: (\S+)$/m.exec(await fs.readFile(file, 'utf8'))![1];

    const agent = supertest.agent(app.app);
    await agent.post('/api/auth/login').send({ email: 'admin@localhost', password: generated }).expect(200);
    expect((await agent.get('/api/items').expect(403)).body).toEqual({
      message: 'Change the generated password first: POST /api/users/reset-password',
    });
    expect((await agent.get('/api/auth/user').expect(200)).body).toMatchObject({ email: 'admin@localhost' });
    for (const page of ['/', '/items', '/users', '/account'])
      expect((await agent.get(page).expect(303)).headers.location, page).toBe('/account/password');
    const form = await agent.get('/account/password').expect(200);
    expect(form.text).toContain('<h1>Change your password</h1>');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1];
    // a refused change keeps the gate and the file
    const refused = await agent
      .post('/account/password')
      .type('form')
      .send({ _csrf: csrf, currentPassword: 'not the one', newPassword: 'marble lantern orchard velvet' })
      .expect(422);
    expect(refused.text).toContain('Current password is incorrect');
    await fs.access(file);
    await agent.get('/items').expect(303);

    const changed = await agent
      .post('/account/password')
      .type('form')
      .send({ _csrf: csrf, currentPassword: generated, newPassword: 'marble lantern orchard velvet' })
      .expect(303);
    expect(changed.headers.location).toBe('/');
    await expect(fs.access(file)).rejects.toThrow();
    expect(await app.db('users').where({ email: 'admin@localhost' }).first('must_change_password')).toEqual({
      must_change_password: false,
    });
    await agent.get('/api/items').expect(200);
    await agent.get('/items').expect(200);
    await agent.get('/account/password').expect(303);
    const log = lines.join('');
    expect(log).toContain(`the first admin changed the generated password; deleted ${file}`);
    expect(log).not.toContain(generated);
    expect(log).not.toContain('marble lantern orchard velvet');
  });

  it('the API changes the generated password as well: every other call is 403 until then, and the change deletes the file', async () => {
    const { logger, sink, lines } = capturingLogger();
    const app = await testApp({ LOG_LEVEL: 'info' }, { logDestination: sink });
    onTestFinished(() => app.close());
    await app.db('users').delete();
    await bootstrapAdmin(app.db, app.config, logger);
    const file = path.join(app.dataDir, 'initial-admin-password');
    const generated = /^password: (\S+)$/m.exec(await fs.readFile(file, 'utf8'))![1];
    const agent = supertest.agent(app.app);
    await agent.post('/api/auth/login').send({ email: 'admin@localhost', password: generated }).expect(200);
    await agent.post('/api/auth/tokens').send({ name: 'script' }).expect(403);
    await agent
      .post('/api/users/reset-password')
      .send({ currentPassword: generated, newPassword: 'copper meadow signal lantern' })
      .expect(200);
    await expect(fs.access(file)).rejects.toThrow();
    await agent.get('/api/items').expect(200);
    expect(lines.join('')).toContain(`deleted ${file}`);
    expect(lines.join('')).not.toContain(generated);
  });

  it('anyone whose password was not generated (an admin included) is never sent to change it', async () => {
    const user = await buildUser(t.db, { role: 'admin' });
    const agent = await t.loginAs(user);
    await agent.get('/api/items').expect(200);
    await agent.get('/items').expect(200);
    await agent.get('/account/password').expect(303);
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
    // the operator chose this password: no change is asked for
    expect(boss).toMatchObject({ role: 'admin', is_active: true, must_change_password: false });
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
