import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import { ServiceUnavailable } from '../../http/errors';

const run = promisify(execFile);

export type PgToolName = 'pg_dump' | 'pg_restore' | 'psql';
/** The command to spawn for each tool: a path under PG_BIN_DIR, or the bare name, found on PATH. */
export type PgTools = Record<PgToolName, string>;

const PURPOSE: Record<PgToolName, string> = { pg_dump: 'back up', pg_restore: 'restore', psql: 'restore' };
const VERSION_TIMEOUT_MS = 10_000;
/** pg tools' error output is a few lines; a runaway one must not grow the heap. */
const MAX_STDERR_CHARS = 16_000;

/** What was found: the server's version and each tool's, whether or not they fit (the backups page shows both). */
export type PgToolVersions = {
  /** SHOW server_version, e.g. '17.10'; null when it could not be read */
  serverVersion: string | null;
  /** each tool's version, e.g. '15.20'; null when it was not found */
  toolVersions: Record<PgToolName, string | null>;
};

// Successes only: after an operator installs the tools, the next request finds them without a restart.
const found = new Map<string, { tools: PgTools } & PgToolVersions>();

/**
 * The PostgreSQL client tools for db, each at least the server's major version (an older
 * pg_dump refuses a newer server; an older pg_restore cannot read a newer dump). Never throws:
 * a problem comes back as a sentence naming both versions and what to install.
 */
export async function findPgTools(
  db: Knex,
  databaseUrl: string,
  pgBinDir: string | undefined,
): Promise<({ tools: PgTools } | { problem: string }) & PgToolVersions> {
  const key = `${pgBinDir ?? ''}\n${databaseUrl}`;
  const cached = found.get(key);
  if (cached) return cached;
  const names = Object.keys(PURPOSE) as PgToolName[];
  const tools = Object.fromEntries(names.map((name) => [name, pgBinDir ? path.join(pgBinDir, name) : name])) as PgTools;
  const versions = await Promise.all(names.map((name) => toolVersion(tools[name])));
  const toolVersions = Object.fromEntries(names.map((name, i) => [name, versions[i]?.text ?? null])) as Record<
    PgToolName,
    string | null
  >;

  let serverVersion: string;
  let serverMajor: number;
  try {
    const { rows } = await db.raw<{ rows: { server_version: string; server_version_num: string }[] }>(
      "SELECT current_setting('server_version') AS server_version, current_setting('server_version_num') AS server_version_num",
    );
    // a distribution's suffix ('15.20 (Debian 15.20-0+deb12u1)') says nothing more
    serverVersion = rows[0].server_version.split(' ')[0];
    serverMajor = Math.floor(Number(rows[0].server_version_num) / 10_000);
  } catch (err) {
    return {
      problem: `The PostgreSQL server's version could not be read: ${(err as Error).message}`,
      serverVersion: null,
      toolVersions,
    };
  }
  const install = `install postgresql-client-${serverMajor} or later (README: which client for which server) or set PG_BIN_DIR`;
  const problems: string[] = [];
  for (const [i, name] of names.entries()) {
    const version = versions[i];
    const needed = `${name} ${serverMajor} or later is needed to ${PURPOSE[name]} PostgreSQL ${serverMajor}`;
    if (version === undefined)
      problems.push(
        `${name} was not found ${pgBinDir ? `in PG_BIN_DIR (${pgBinDir})` : 'on PATH'}; ${needed}: ${install}`,
      );
    else if (version.major < serverMajor)
      problems.push(
        `${name} ${version.text} (${pgBinDir ? tools[name] : 'on PATH'}) is older than the PostgreSQL server ${serverVersion}; ${needed}: ${install}`,
      );
  }
  if (problems.length > 0) return { problem: problems.join('. '), serverVersion, toolVersions };
  const result = { tools, serverVersion, toolVersions };
  found.set(key, result);
  return result;
}

/** The tools, or a 503 naming what to install. */
export async function requirePgTools(db: Knex, databaseUrl: string, pgBinDir: string | undefined): Promise<PgTools> {
  const result = await findPgTools(db, databaseUrl, pgBinDir);
  if ('problem' in result) throw ServiceUnavailable(result.problem);
  return result.tools;
}

async function toolVersion(command: string): Promise<{ major: number; text: string } | undefined> {
  try {
    const { stdout } = await run(command, ['--version'], { timeout: VERSION_TIMEOUT_MS });
    const match = /\(PostgreSQL\)\s+((\d+)[^\s]*)/.exec(stdout);
    return match ? { major: Number(match[2]), text: match[1] } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Connection arguments for a libpq tool from a postgres:// URL. The password goes through the
 * environment, never the command line (which any local user can read in the process list).
 */
export function connectionOptions(databaseUrl: string): { args: string[]; env: NodeJS.ProcessEnv } {
  const url = new URL(databaseUrl);
  const host = url.searchParams.get('host') ?? url.hostname.replace(/^\[(.*)\]$/, '$1');
  const args = [
    '--no-password',
    `--host=${host}`,
    `--port=${url.port || '5432'}`,
    `--dbname=${decodeURIComponent(url.pathname.slice(1))}`,
  ];
  if (url.username) args.push(`--username=${decodeURIComponent(url.username)}`);
  const env: NodeJS.ProcessEnv = { ...process.env, PGPASSWORD: decodeURIComponent(url.password) };
  const sslMode = url.searchParams.get('sslmode');
  if (sslMode) env.PGSSLMODE = sslMode;
  return { args, env };
}

type Stdio = 'ignore' | 'pipe' | number;

export type RunningTool = {
  child: ChildProcess;
  /** resolves when the tool has exited and its output is closed; code null when it could not start or was killed */
  finished: Promise<{ code: number | null; stderr: string }>;
};

/** Starts a tool with an argument array (never a shell), keeping the start of its error output. */
export function startTool(
  command: string,
  args: string[],
  stdio: { stdin: Stdio; stdout: Stdio; env?: NodeJS.ProcessEnv },
): RunningTool {
  const child = spawn(command, args, { stdio: [stdio.stdin, stdio.stdout, 'pipe'], env: stdio.env });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < MAX_STDERR_CHARS) stderr += chunk.slice(0, MAX_STDERR_CHARS - stderr.length);
  });
  const finished = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.once('error', (err) => resolve({ code: null, stderr: `${command} could not be started: ${err.message}` }));
    child.once('close', (code) => resolve({ code, stderr }));
  });
  return { child, finished };
}

/** A tool's error output as one line for a message. */
export const oneLine = (stderr: string) => stderr.trim().replace(/\s*\n\s*/g, ' ') || 'no error output';
