import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { freePort } from './free-port';

/** A message the test SMTP server accepted: the envelope's recipients, whether it came over TLS, and the parsed message. */
export type Received = { to: string[]; secure: boolean; mail: ParsedMail };

/**
 * How the server speaks: plain (no STARTTLS offered), offering STARTTLS, or TLS from the first byte
 * (smtps); the TLS ones with smtp-server's own self-signed certificate.
 */
export type SmtpTls = 'none' | 'starttls' | 'implicit';

/**
 * A real SMTP server for the tests (smtp-server, no TLS, any login), whose accepted messages are
 * parsed by mailparser. `answer` may refuse a message (e.g. `550`); `stop`/`start` take it down
 * and bring it back on the same port.
 */
export class TestSmtp {
  readonly received: Received[] = [];
  /** what the server answers to the next message's data: accepted, or an SMTP reply code and text */
  answer: () => { code: number; message: string } | null = () => null;
  /** every DATA the server saw, accepted or refused, by Message-ID */
  readonly attempts: string[] = [];
  private server: SMTPServer | undefined;
  /** while true the server is "down": it answers every connection 421 and closes it, keeping its port */
  private refusing = false;

  private constructor(
    readonly port: number,
    readonly tls: SmtpTls,
  ) {}

  static async start(tls: SmtpTls = 'none'): Promise<TestSmtp> {
    const smtp = new TestSmtp(await freePort(), tls);
    await smtp.start();
    return smtp;
  }

  /** The SMTP_URL of this server (a self-signed certificate is accepted through the URL's tls options). */
  get url(): string {
    if (this.tls === 'none') return `smtp://127.0.0.1:${this.port}`;
    const trustSelfSigned = '?tls.rejectUnauthorized=false';
    return `${this.tls === 'implicit' ? 'smtps' : 'smtp'}://127.0.0.1:${this.port}${trustSelfSigned}`;
  }

  async start(): Promise<void> {
    const server = new SMTPServer({
      secure: this.tls === 'implicit',
      disabledCommands: this.tls === 'starttls' ? ['AUTH'] : ['STARTTLS', 'AUTH'],
      logger: false,
      onConnect: (_session, callback) => {
        if (!this.refusing) return callback();
        callback(Object.assign(new Error('Service not available'), { responseCode: 421 }));
      },
      onData: (stream, _session, callback) => {
        simpleParser(stream)
          .then((mail) => {
            this.attempts.push(mail.messageId ?? '');
            const refusal = this.answer();
            if (refusal) {
              const err = Object.assign(new Error(refusal.message), { responseCode: refusal.code });
              return callback(err);
            }
            const to = _session.envelope.rcptTo.map((r) => r.address);
            this.received.push({ to, secure: _session.secure, mail });
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /**
   * An outage that keeps the port: connections are answered 421 and closed until up() (closing the
   * server would free the port for another test's listener meanwhile).
   */
  down(): void {
    this.refusing = true;
  }

  up(): void {
    this.refusing = false;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The messages sent to an address. */
  to(address: string): ParsedMail[] {
    return this.received.filter((r) => r.to.includes(address)).map((r) => r.mail);
  }
}
