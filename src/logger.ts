import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Where a secret can appear in what is logged: request headers (cookies, bearer tokens and MCP
 * keys travel in authorization), the cookies set in an answer, and any logged object's
 * password, PIN, token, key or secret fields.
 */
const SECRET_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'password',
  'token',
  '*.password',
  '*.currentPassword',
  '*.newPassword',
  '*.pin',
  '*.token',
  '*.apiKey',
  '*.secret',
  '*.clientSecret',
];

/**
 * JSON lines, or with `pretty` (a developer's terminal) one readable, coloured line per entry.
 * destination: stdout by default; tests pass a stream to read what is logged.
 */
export function createLogger(level: string, destination?: DestinationStream, opts: { pretty?: boolean } = {}): Logger {
  const options: pino.LoggerOptions = { level, redact: { paths: SECRET_PATHS, censor: '[redacted]' } };
  if (destination) return pino(options, destination);
  if (opts.pretty) {
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
      },
    });
  }
  return pino(options);
}
