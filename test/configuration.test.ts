import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadEnvFile } from '../src/config';

describe('.env', () => {
  it('is read from the working directory when present, and the environment wins over it', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-env-'));
    try {
      await fs.writeFile(
        path.join(dir, '.env'),
        '# a comment\nSTORES_TEST_PORT_FROM_FILE=4321\nSTORES_TEST_SET_TWICE="from the file"\n',
      );
      process.env.STORES_TEST_SET_TWICE = 'from the environment';
      expect(loadEnvFile(dir)).toBe(true);
      expect(process.env.STORES_TEST_PORT_FROM_FILE).toBe('4321');
      expect(process.env.STORES_TEST_SET_TWICE).toBe('from the environment');
      expect(loadConfig({ PORT: process.env.STORES_TEST_PORT_FROM_FILE }).port).toBe(4321);
    } finally {
      delete process.env.STORES_TEST_PORT_FROM_FILE;
      delete process.env.STORES_TEST_SET_TWICE;
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('is optional', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-env-'));
    expect(loadEnvFile(dir)).toBe(false);
    await fs.rm(dir, { recursive: true, force: true });
  });
});

describe('HOST', () => {
  it('defaults to 127.0.0.1, so npm start on a workstation is reachable from that machine only; the Docker image listens on every interface', async () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    const dockerfile = await fs.readFile(path.join(import.meta.dirname, '..', 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^\s*HOST=0\.0\.0\.0\b/m);
  });
});

describe('the server’s node options', () => {
  it('the Docker image gives node the options npm start does (package.json config.serverNodeOptions)', async () => {
    const root = path.join(import.meta.dirname, '..');
    const { config } = JSON.parse(await fs.readFile(path.join(root, 'package.json'), 'utf8'));
    const dockerfile = await fs.readFile(path.join(root, 'Dockerfile'), 'utf8');
    expect(config.serverNodeOptions).toBe('--max-semi-space-size=4');
    expect(dockerfile).toMatch(new RegExp(`^\\s*NODE_OPTIONS=${config.serverNodeOptions} \\\\$`, 'm'));
  });
});

describe('DATABASE_REPLICA_URLS and DATABASE_REPLICA_MAX_LAG_MS (issue 44)', () => {
  it('none by default, 5000 ms; a comma list is read trimmed, empty entries dropped', () => {
    expect(loadConfig({})).toMatchObject({ databaseReplicaUrls: [], databaseReplicaMaxLagMs: 5000 });
    const config = loadConfig({
      DATABASE_REPLICA_URLS: ' postgres://ro@replica1:5432/stores , postgres://ro@replica2/stores,',
      DATABASE_REPLICA_MAX_LAG_MS: '2500',
    });
    expect(config.databaseReplicaUrls).toEqual(['postgres://ro@replica1:5432/stores', 'postgres://ro@replica2/stores']);
    expect(config.databaseReplicaMaxLagMs).toBe(2500);
  });

  it('refuses an entry that is not a URL, and a negative lag', () => {
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://ro@replica1/stores,replica2' })).toThrow(
      /DATABASE_REPLICA_URLS/,
    );
    expect(() => loadConfig({ DATABASE_REPLICA_MAX_LAG_MS: '-1' })).toThrow(/DATABASE_REPLICA_MAX_LAG_MS/);
  });
});
