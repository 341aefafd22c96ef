import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from '../src/auth/passwords';
import { bootstrapAdmin } from '../src/auth/bootstrap-admin';
import { checkAdminPassword, ConfigError, loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { testApp, type TestApp } from './helpers/app';
import { buildUser, TEST_PASSWORD } from './helpers/factories';

let t: TestApp;
// this app hashes at the production cost (N = 2^17), as a deployment does
let production: TestApp;
beforeAll(async () => {
  t = await testApp();
  production = await testApp({ PASSWORD_HASH_COST: '17' });
});
afterAll(async () => {
  await t.close();
  await production.close();
});

const paramsOf = (hash: string) => hash.split('$').slice(0, 4).join('$');

describe('PASSWORD_HASH_COST', () => {
  it('is 17 (scrypt N=2^17, r=8, p=1) outside tests; lower only under NODE_ENV=test', () => {
    expect(loadConfig({}).passwordHashCost).toBe(17);
    expect(loadConfig({ NODE_ENV: 'production' }).passwordHashCost).toBe(17);
    expect(loadConfig({ NODE_ENV: 'production', PASSWORD_HASH_COST: '18' }).passwordHashCost).toBe(18);
    expect(() => loadConfig({ NODE_ENV: 'production', PASSWORD_HASH_COST: '12' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'development', PASSWORD_HASH_COST: '16' })).toThrow(
      /PASSWORD_HASH_COST: below 17 only when NODE_ENV=test/,
    );
    expect(loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '11' }).passwordHashCost).toBe(11);
  });

  it('a new hash records N=2^17, r=8, p=1 by default and verifies; a malformed or absurd hash does not', async () => {
    const hash = await hashPassword('a long enough secret');
    expect(paramsOf(hash)).toBe('scrypt$131072$8$1');
    expect(await verifyPassword('a long enough secret', hash)).toBe(true);
    expect(await verifyPassword('another secret!!', hash)).toBe(false);
    expect(needsRehash(hash)).toBe(false);
    expect(needsRehash(hash.replace('$131072$', '$16384$'))).toBe(true);
    expect(await verifyPassword('x', hash.replace('$131072$', '$1073741824$'))).toBe(false);
    expect(await verifyPassword('x', 'bcrypt$whatever')).toBe(false);
  });
});

describe('POST /api/auth/login: rehash on sign-in', () => {
  it('200 for a hash with the old parameters (N=2^14), which is rewritten with N=2^17 and still signs in', async () => {
    const oldHash = await hashPassword(TEST_PASSWORD, 14);
    expect(paramsOf(oldHash)).toBe('scrypt$16384$8$1');
    const user = await buildUser(production.db);
    await production.db('users').where({ id: user.id }).update({ password_hash: oldHash });

    await production.request.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(200);
    const rewritten = (await production.db('users').where({ id: user.id }).first()).password_hash as string;
    expect(rewritten).not.toBe(oldHash);
    expect(paramsOf(rewritten)).toBe('scrypt$131072$8$1');
    expect(await verifyPassword(TEST_PASSWORD, rewritten)).toBe(true);

    // signing in again works and leaves the current hash alone
    await production.request.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(200);
    expect((await production.db('users').where({ id: user.id }).first()).password_hash).toBe(rewritten);
  });

  it('a failed sign-in never rewrites the hash', async () => {
    const oldHash = await hashPassword(TEST_PASSWORD, 14);
    const user = await buildUser(production.db);
    await production.db('users').where({ id: user.id }).update({ password_hash: oldHash });
    await production.request
      .post('/api/auth/login')
      .send({ email: user.email, password: 'not the password' })
      .expect(401);
    expect((await production.db('users').where({ id: user.id }).first()).password_hash).toBe(oldHash);
  });

  it('an existing password shorter than 12 characters still signs in', async () => {
    const user = await buildUser(t.db, { password: 'short pw' });
    await t.request.post('/api/auth/login').send({ email: user.email, password: 'short pw' }).expect(200);
  });
});

describe('new passwords are at least 12 characters', () => {
  const ELEVEN = 'eleven char';
  const TWELVE = 'twelve chars';
  const tooShort = { message: 'Validation failed', errors: [{ field: '', message: 'must be at least 12 characters' }] };

  it('POST /api/users: 400 naming password for 11 characters; 201 for 12', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const res = await admin
      .post('/api/users')
      .send({ email: 'short@example.ac.uk', firstName: 'S', password: ELEVEN })
      .expect(400);
    expect(res.body).toEqual({
      ...tooShort,
      errors: [{ field: 'password', message: 'must be at least 12 characters' }],
    });
    expect(await t.db('users').where({ email: 'short@example.ac.uk' }).first()).toBeUndefined();
    await admin.post('/api/users').send({ email: 'short@example.ac.uk', firstName: 'S', password: TWELVE }).expect(201);
    await t.request.post('/api/auth/login').send({ email: 'short@example.ac.uk', password: TWELVE }).expect(200);
  });

  it('PATCH /api/users/{id}/reset-password: 400 naming password for 11 characters; the old password stays', async () => {
    const target = await buildUser(t.db);
    const before = (await t.db('users').where({ id: target.id }).first()).password_hash;
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const res = await admin.patch(`/api/users/${target.id}/reset-password`).send({ password: ELEVEN }).expect(400);
    expect(res.body).toEqual({
      ...tooShort,
      errors: [{ field: 'password', message: 'must be at least 12 characters' }],
    });
    expect((await t.db('users').where({ id: target.id }).first()).password_hash).toBe(before);
  });

  it('POST /api/users/reset-password: 400 naming newPassword for 11 characters; the old password stays', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const res = await agent
      .post('/api/users/reset-password')
      .send({ currentPassword: TEST_PASSWORD, newPassword: ELEVEN })
      .expect(400);
    expect(res.body).toEqual({
      ...tooShort,
      errors: [{ field: 'newPassword', message: 'must be at least 12 characters' }],
    });
    await t.request.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(200);
  });
});

describe('new passwords refuse the common, the personal and the blank (one rule everywhere)', () => {
  const refused = (field: string, message: string) => ({ message: 'Validation failed', errors: [{ field, message }] });
  const COMMON = 'is too common or easy to guess: try a phrase of several unrelated words';
  const PERSONAL = 'must not be or contain the email address or name of its account';
  const BLANK = 'must not be only spaces';

  it('POST /api/users: 400 for a common password, the email, the name, or only spaces; nobody is created', async () => {
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const cases: [string, string][] = [
      ['password1234', COMMON],
      ['qwertyuiop123', COMMON],
      ['margaret.hughes@example.ac.uk', PERSONAL],
      ['Margaret.Hughes1', PERSONAL],
      ['MargaretHughes!!', PERSONAL],
      ['              ', BLANK],
    ];
    for (const [password, message] of cases) {
      const res = await admin
        .post('/api/users')
        .send({ email: 'margaret.hughes@example.ac.uk', firstName: 'Margaret', lastName: 'Hughes', password })
        .expect(400);
      expect(res.body, password).toEqual(refused('password', message));
    }
    expect(await t.db('users').where({ email: 'margaret.hughes@example.ac.uk' }).first()).toBeUndefined();
    // a long phrase that merely includes the first name is not "containing" it
    await admin
      .post('/api/users')
      .send({
        email: 'margaret.hughes@example.ac.uk',
        firstName: 'Margaret',
        lastName: 'Hughes',
        password: 'margaret likes quiet lab benches',
      })
      .expect(201);
  });

  it('PATCH /api/users/{id}/reset-password and POST /api/users/reset-password: 400 for a common or personal password; the old one stays', async () => {
    const target = await buildUser(t.db, {
      email: 'oliver.grant@example.ac.uk',
      firstName: 'Oliver',
      lastName: 'Grant',
    });
    const before = (await t.db('users').where({ id: target.id }).first()).password_hash;
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const reset = await admin
      .patch(`/api/users/${target.id}/reset-password`)
      .send({ password: 'iloveyou1234' })
      .expect(400);
    expect(reset.body).toEqual(refused('password', COMMON));
    const own = await (
      await t.loginAs(target)
    )
      .post('/api/users/reset-password')
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'oliver.grant2026' })
      .expect(400);
    expect(own.body).toEqual(refused('newPassword', PERSONAL));
    expect((await t.db('users').where({ id: target.id }).first()).password_hash).toBe(before);
  });
});

describe('ADMIN_PASSWORD at start-up', () => {
  const logger = createLogger('silent');
  const config = (password: string) =>
    loadConfig({ NODE_ENV: 'test', ADMIN_EMAIL: 'first-admin@example.ac.uk', ADMIN_PASSWORD: password });

  it('the start-up check refuses what creating the admin refuses: too short, common, the email, only spaces', async () => {
    await expect(checkAdminPassword(config('eleven char'))).rejects.toThrow(
      'ADMIN_PASSWORD: must be at least 12 characters',
    );
    await expect(checkAdminPassword(config('password1234'))).rejects.toThrow(
      /ADMIN_PASSWORD: is too common or easy to guess/,
    );
    await expect(checkAdminPassword(config('first-admin@example.ac.uk'))).rejects.toThrow(
      'ADMIN_PASSWORD: must not be or contain the email address or name of its account',
    );
    await expect(checkAdminPassword(config('             '))).rejects.toThrow(
      'ADMIN_PASSWORD: must not be only spaces',
    );
    await expect(checkAdminPassword(config('ten chars!'))).rejects.toThrow(ConfigError);
    await expect(checkAdminPassword(config('twelve chars'))).resolves.toBeUndefined();
    await expect(checkAdminPassword(loadConfig({ NODE_ENV: 'test' }))).resolves.toBeUndefined();
  });

  it('creating the first admin follows the same rule', async () => {
    await expect(bootstrapAdmin(t.db, config('eleven char'), logger)).rejects.toThrow(
      'ADMIN_PASSWORD: must be at least 12 characters',
    );
    await expect(bootstrapAdmin(t.db, config('password1234'), logger)).rejects.toThrow(/ADMIN_PASSWORD: is too common/);
    expect(await t.db('users').where({ email: 'first-admin@example.ac.uk' }).first()).toBeUndefined();
    await bootstrapAdmin(t.db, config('twelve chars'), logger);
    expect(await t.db('users').where({ email: 'first-admin@example.ac.uk' }).first()).toMatchObject({
      role: 'admin',
      is_active: true,
    });
  });
});
