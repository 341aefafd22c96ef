import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from '../src/auth/passwords';
import { bootstrapAdmin } from '../src/auth/bootstrap-admin';
import { ConfigError, loadConfig } from '../src/config';
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
    expect(() => loadConfig({ NODE_ENV: 'development', PASSWORD_HASH_COST: '16' })).toThrow(/PASSWORD_HASH_COST: below 17 only when NODE_ENV=test/);
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
    await production.request.post('/api/auth/login').send({ email: user.email, password: 'not the password' }).expect(401);
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
    const res = await admin.post('/api/users').send({ email: 'short@example.ac.uk', firstName: 'S', password: ELEVEN }).expect(400);
    expect(res.body).toEqual({ ...tooShort, errors: [{ field: 'password', message: 'must be at least 12 characters' }] });
    expect(await t.db('users').where({ email: 'short@example.ac.uk' }).first()).toBeUndefined();
    await admin.post('/api/users').send({ email: 'short@example.ac.uk', firstName: 'S', password: TWELVE }).expect(201);
    await t.request.post('/api/auth/login').send({ email: 'short@example.ac.uk', password: TWELVE }).expect(200);
  });

  it('PATCH /api/users/{id}/reset-password: 400 naming password for 11 characters; the old password stays', async () => {
    const target = await buildUser(t.db);
    const before = (await t.db('users').where({ id: target.id }).first()).password_hash;
    const admin = await t.loginAs(await buildUser(t.db, { role: 'admin' }));
    const res = await admin.patch(`/api/users/${target.id}/reset-password`).send({ password: ELEVEN }).expect(400);
    expect(res.body).toEqual({ ...tooShort, errors: [{ field: 'password', message: 'must be at least 12 characters' }] });
    expect((await t.db('users').where({ id: target.id }).first()).password_hash).toBe(before);
  });

  it('POST /api/users/reset-password: 400 naming newPassword for 11 characters; the old password stays', async () => {
    const user = await buildUser(t.db);
    const agent = await t.loginAs(user);
    const res = await agent.post('/api/users/reset-password').send({ currentPassword: TEST_PASSWORD, newPassword: ELEVEN }).expect(400);
    expect(res.body).toEqual({ ...tooShort, errors: [{ field: 'newPassword', message: 'must be at least 12 characters' }] });
    await t.request.post('/api/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(200);
  });
});

describe('ADMIN_PASSWORD at start-up', () => {
  it('creating the first admin needs 12 characters; an existing admin with a shorter ADMIN_PASSWORD starts as before', async () => {
    const logger = createLogger('silent');
    const config = (password: string) => loadConfig({ NODE_ENV: 'test', ADMIN_EMAIL: 'first-admin@example.ac.uk', ADMIN_PASSWORD: password });
    await expect(bootstrapAdmin(t.db, config('eleven char'), logger)).rejects.toThrow('ADMIN_PASSWORD must be at least 12 characters to create the first admin');
    expect(await t.db('users').where({ email: 'first-admin@example.ac.uk' }).first()).toBeUndefined();
    await bootstrapAdmin(t.db, config('twelve chars'), logger);
    expect(await t.db('users').where({ email: 'first-admin@example.ac.uk' }).first()).toMatchObject({ role: 'admin', is_active: true });
    await expect(bootstrapAdmin(t.db, config('eleven char'), logger)).resolves.toBeUndefined();
  });
});
