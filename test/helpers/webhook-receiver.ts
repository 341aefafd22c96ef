import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceivedDelivery = {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; createdAt: string; data: unknown };
  /** whether X-Stores-Signature verified with the secret the receiver was told */
  signed: boolean;
};

/** How the receiver answers a delivery: a status (and an optional body). */
export type ReceiverAnswer = { status: number; body?: string; headers?: Record<string, string> };

/** The check a receiver makes (as docs/integrations.md shows): t and v1 from the header, HMAC-SHA256 of "<t>.<raw body>". */
export function verifySignature(secret: string, header: string | undefined, raw: string): boolean {
  const parts = Object.fromEntries((header ?? '').split(',').map((p) => p.split('=', 2) as [string, string]));
  if (!parts.t || !parts.v1) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${raw}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A real HTTP receiver on 127.0.0.1 that records every delivery and verifies its signature. */
export async function startReceiver(answer: (d: ReceivedDelivery) => ReceiverAnswer = () => ({ status: 200 })) {
  const received: ReceivedDelivery[] = [];
  let secret = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: ReceivedDelivery['body'];
      try {
        body = JSON.parse(raw);
      } catch {
        body = { id: '', type: '', createdAt: '', data: raw };
      }
      const delivery: ReceivedDelivery = {
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body,
        signed: verifySignature(secret, req.headers['x-stores-signature'] as string | undefined, raw),
      };
      received.push(delivery);
      const { status, body: text = '', headers = {} } = answer(delivery);
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    port,
    received,
    /** the endpoint's secret, to verify what comes next */
    useSecret(value: string) {
      secret = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
