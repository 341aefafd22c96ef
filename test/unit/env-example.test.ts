import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config';

const EXAMPLE = path.join(import.meta.dirname, '..', '..', '.env.example');

/** The variables of .env.example: each `# NAME=value` line, with the comment lines right above it. */
async function exampleVariables(): Promise<{ name: string; value: string; comment: string[] }[]> {
  const lines = (await fs.readFile(EXAMPLE, 'utf8')).split('\n');
  const variables: { name: string; value: string; comment: string[] }[] = [];
  let comment: string[] = [];
  for (const line of lines) {
    const variable = /^# ([A-Z][A-Z0-9_]+)=(.*)$/.exec(line);
    if (variable) {
      variables.push({ name: variable[1], value: variable[2], comment });
      comment = [];
    } else {
      comment = line.startsWith('#') ? [...comment, line] : [];
    }
  }
  return variables;
}

describe('.env.example, the one list of the variables', () => {
  it('.env.example lists every variable the service reads, each with its default, commented out', async () => {
    const example = await fs.readFile(EXAMPLE, 'utf8');
    const listed = [...example.matchAll(/^# ([A-Z][A-Z0-9_]+)=(.*)$/gm)];
    expect(listed.map((m) => m[1]).sort()).toEqual([...CONFIG_VARIABLES].sort());
    expect(example.split('\n').filter((l) => l.trim() && !l.startsWith('#'))).toEqual([]);
    const defaults = loadConfig({});
    const shown = Object.fromEntries(listed.map((m) => [m[1], m[2]]));
    expect({
      PORT: Number(shown.PORT),
      HOST: shown.HOST,
      LOG_LEVEL: shown.LOG_LEVEL,
      DATA_DIR: path.resolve(shown.DATA_DIR),
    }).toEqual({
      PORT: defaults.port,
      HOST: defaults.host,
      LOG_LEVEL: defaults.logLevel,
      DATA_DIR: defaults.dataDir,
    });
  });

  it('each variable is listed once, under one line of its own giving its meaning and default, then indented details', async () => {
    const variables = await exampleVariables();
    expect(new Set(variables.map((v) => v.name)).size).toBe(variables.length);
    const misdescribed = variables.filter(
      ({ comment: [summary, ...details] }) =>
        !summary ||
        /^# {2}/.test(summary) ||
        !/\bDefault\b/.test(summary) ||
        details.some((line) => !/^# {3}\S/.test(line)),
    );
    expect(misdescribed.map((v) => v.name)).toEqual([]);
  });

  it('every value shown is the default: uncommenting all of them changes nothing', async () => {
    const shown = Object.fromEntries((await exampleVariables()).map((v) => [v.name, v.value]));
    expect(loadConfig(shown)).toEqual(loadConfig({}));
  });
});
