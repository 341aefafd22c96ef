import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SESSION_COOKIE } from '../../src/auth/session';
import { TEST_PASSWORD } from './factories';
import { freePort, listensOn } from './free-port';

export type ServerProcess = {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  port: number;
  dataDir: string;
  /** everything it wrote (pino JSON lines) */
  log: () => string;
  /** the exit code and signal, once it has exited */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  /** SIGTERM, then SIGKILL if still running after a while; removes its DATA_DIR */
  kill: () => Promise<void>;
};

/**
 * The service as a real child process (`node --import tsx src/server.ts`, as `npm run dev` runs
 * it) on DATABASE_URL, listening on a free port; resolves once it listens there itself and
 * /api/health answers 200. A port taken by another process before the service bound it is
 * given up for another.
 */
export async function startServer(databaseUrl: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const started = await startServerOnFreePort(databaseUrl, env);
    if (started !== PORT_TAKEN) return started;
    if (attempt === 3) throw new Error('three free ports in a row were taken before the server bound them');
  }
}

const PORT_TAKEN = Symbol('the port was taken');

async function startServerOnFreePort(
  databaseUrl: string,
  env: Record<string, string>,
): Promise<ServerProcess | typeof PORT_TAKEN> {
  const port = await freePort();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stores-faults-data-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      SESSION_SECRET: 'faults-session-secret-0123456789',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let gone = false;
  void exited.then(() => (gone = true));
  const baseUrl = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    child,
    pid: child.pid!,
    baseUrl,
    port,
    dataDir,
    log: () => log,
    exited,
    async kill() {
      if (!gone) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (gone) {
      await server.kill();
      if (log.includes('EADDRINUSE')) return PORT_TAKEN;
      throw new Error(`the server exited while starting:\n${log}`);
    }
    // whatever else answers on the port (another test's server took it first) is not this server
    if (
      (await listensOn(server.pid, port)) &&
      (await fetch(`${baseUrl}/api/health`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      return server;
    await new Promise((r) => setTimeout(r, 200));
  }
  await server.kill();
  throw new Error(`the server did not answer within 60 s:\n${log}`);
}

export type Answer = { status: number; body: unknown; ms: number; headers?: Headers; error?: string };

/** fetch with a session cookie; a request that gets no answer is status 0 with the error's text. */
export class Client {
  cookie = '';
  constructor(
    readonly baseUrl: string,
    readonly timeoutMs = 15_000,
  ) {}

  async request(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const started = performance.now();
    try {
      const res = await fetch(this.baseUrl + url, {
        method,
        headers: {
          ...(body === undefined || body instanceof FormData ? {} : { 'content-type': 'application/json' }),
          ...(this.cookie ? { cookie: this.cookie } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const setCookie = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
      if (setCookie) this.cookie = setCookie.split(';')[0];
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON (an export)
      }
      return { status: res.status, body: parsed, ms: performance.now() - started, headers: res.headers };
    } catch (err) {
      return {
        status: 0,
        body: undefined,
        ms: performance.now() - started,
        error: String((err as Error).cause ?? err),
      };
    }
  }

  get = (url: string) => this.request('GET', url);
  post = (url: string, body?: unknown, headers?: Record<string, string>) => this.request('POST', url, body, headers);

  async signIn(email: string, password = TEST_PASSWORD): Promise<this> {
    const res = await this.post('/api/auth/login', { email, password });
    if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
    return this;
  }
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a new TCP connection to the port is refused (rather than accepted). */
export const connectionRefused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
