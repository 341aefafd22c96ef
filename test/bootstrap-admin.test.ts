import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  it('with no users and no ADMIN_EMAIL creates admin@localhost with a random password, logged once', async () => {
    await t.db('users').delete();
    const { logger, lines } = capturingLogger();
    await bootstrapAdmin(t.db, config(), logger);
    const admin = await t.db('users').where({ email: 'admin@localhost' }).first();
    expect(admin).toMatchObject({ role: 'admin', is_active: true });
    const password = /with password (\S+)/.exec(lines.join(''))?.[1];
    expect(password).toBeDefined();
    expect(await verifyPassword(password!, admin.password_hash)).toBe(true);

    // a second start changes nothing and logs no password
    const again = capturingLogger();
    await bootstrapAdmin(t.db, config(), again.logger);
    expect(await t.db('users')).toHaveLength(1);
    expect(again.lines.join('')).not.toMatch(/password/);
  });

  it('with ADMIN_EMAIL and ADMIN_PASSWORD creates that active admin when the email is unknown', async () => {
    const { logger } = capturingLogger();
    await bootstrapAdmin(t.db, config({ ADMIN_EMAIL: 'Boss@Example.ac.uk', ADMIN_PASSWORD: 'boss password 1' }), logger);
    const boss = await t.db('users').where({ email: 'boss@example.ac.uk' }).first();
    expect(boss).toMatchObject({ role: 'admin', is_active: true });
    expect(await verifyPassword('boss password 1', boss.password_hash)).toBe(true);
    await t.request.post('/api/auth/login').send({ email: 'boss@example.ac.uk', password: 'boss password 1' }).expect(200);
    const created = await t.db('audit_log').where({ entity_type: 'user', entity_id: boss.id, action: 'create' });
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ actor_kind: 'system', actor_user_id: null, after: { email: 'boss@example.ac.uk', role: 'admin', password_hash: '[redacted]' } });
  });

  it('never overwrites an existing user with that email (role, password and status kept)', async () => {
    const existing = await buildUser(t.db, { email: 'keeper@example.ac.uk', role: 'user', isActive: false });
    const { logger } = capturingLogger();
    await bootstrapAdmin(t.db, config({ ADMIN_EMAIL: 'keeper@example.ac.uk', ADMIN_PASSWORD: 'another password' }), logger);
    const after = await t.db('users').where({ id: existing.id }).first();
    expect(after).toMatchObject({ role: 'user', is_active: false, password_hash: existing.password_hash });
    expect(await t.db('users').whereRaw('lower(email) = ?', ['keeper@example.ac.uk'])).toHaveLength(1);
  });

  it('ADMIN_EMAIL without ADMIN_PASSWORD is a configuration error', () => {
    expect(() => config({ ADMIN_EMAIL: 'a@example.ac.uk' })).toThrow(/must be set together/);
  });
});
