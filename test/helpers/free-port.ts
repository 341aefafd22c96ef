import fs from 'node:fs/promises';
import net from 'node:net';

/**
 * A TCP port nothing listens on right now (the OS picks it). It stays free only until someone binds
 * it: a process started on it should be checked with listensOn, since under a full test run another
 * file's listen(0) (every supertest request makes one) may take it first.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

const LISTEN_STATE = '0A';

/**
 * Whether the process `pid` itself listens on TCP `port` (IPv4), rather than something else that
 * answers there: the sockets in its /proc/<pid>/fd against the listening sockets of /proc/net/tcp.
 */
export async function listensOn(pid: number, port: number): Promise<boolean> {
  const portHex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const listening = new Set(
    (await fs.readFile('/proc/net/tcp', 'utf8'))
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(portHex) && fields[3] === LISTEN_STATE)
      .map((fields) => `socket:[${fields[9]}]`),
  );
  if (listening.size === 0) return false;
  const fds = await fs.readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const fd of fds) {
    if (listening.has(await fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''))) return true;
  }
  return false;
}
