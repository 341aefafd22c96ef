import type { Transporter } from 'nodemailer';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import type { Db } from '../../db/knex';
import { releaseHeld, type EmailPayload, type OutboxMessage } from '../outbox/outbox.queries';
import type { SendOutcome, Sender } from '../outbox/outbox.worker';
import { renderEmail } from './emails.render';

/** Held emails younger than this go out when an SMTP server is set; older ones stay held (they would come too late). */
export const HELD_EMAIL_MAX_AGE_MS = 24 * 3_600_000;

/**
 * The Message-ID of an outbox message's email: the same on every attempt, so a repeat (a crash
 * between sending and recording) is recognisable as the same email.
 */
export const messageIdOf = (outboxId: string, publicUrl: string): string =>
  `<${outboxId}@${new URL(publicUrl).hostname}>`;

/** An SMTP error's reply code (nodemailer sets responseCode on a refusal), if the server answered. */
const replyCode = (err: unknown): number | undefined => {
  const code = (err as { responseCode?: unknown }).responseCode;
  return typeof code === 'number' ? code : undefined;
};

/** The parts of an SMTP URL worth logging: never its password. */
const describeError = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 500);

/**
 * The outbox's email sender: nodemailer over SMTP_URL (smtps:// implicit TLS; smtp:// upgrades with
 * STARTTLS when the server offers it), loaded on the first email. 5xx refuses the email for good
 * (never retried); 4xx or a connection failure is tried again later. With no SMTP_URL every email
 * is held in the outbox.
 */
export function emailSender(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'publicUrl'>): Sender {
  const { smtpUrl } = config;
  if (!smtpUrl) return async () => ({ outcome: 'hold' });
  let transport: Promise<Transporter> | undefined;
  const transporter = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        url: smtpUrl,
        // the message's row stays locked while it is sent: a silent server must not hold it for minutes
        connectionTimeout: 15_000,
        greetingTimeout: 15_000,
        socketTimeout: 30_000,
      }),
    ));

  return async (message: OutboxMessage): Promise<SendOutcome> => {
    const payload = message.payload as EmailPayload;
    let parts;
    try {
      parts = await renderEmail({ ...payload, data: payload.data ?? {} }, config.publicUrl);
    } catch (err) {
      // a template that cannot render will not render on a retry either
      return { outcome: 'reject', error: `the email could not be written: ${describeError(err)}` };
    }
    const started = Date.now();
    try {
      const info = await (
        await transporter()
      ).sendMail({
        from: config.mailFrom,
        to: message.destination,
        subject: payload.subject,
        messageId: messageIdOf(message.id, config.publicUrl),
        text: parts.text,
        html: parts.html,
      });
      const code = /^(\d{3})/.exec(String(info.response ?? ''))?.[1];
      return { outcome: 'sent', statusCode: code ? Number(code) : undefined, durationMs: Date.now() - started };
    } catch (err) {
      const statusCode = replyCode(err);
      const durationMs = Date.now() - started;
      const error = describeError(err);
      return statusCode !== undefined && statusCode >= 500
        ? { outcome: 'reject', error, statusCode, durationMs }
        : { outcome: 'retry', error, statusCode, durationMs };
    }
  };
}

/** With an SMTP server set, the emails held while there was none, younger than a day, go out now. */
export async function releaseHeldEmails(db: Db, config: Pick<Config, 'smtpUrl'>, logger: Logger): Promise<void> {
  if (!config.smtpUrl) return;
  try {
    const released = await releaseHeld(db, 'email', HELD_EMAIL_MAX_AGE_MS);
    if (released > 0) logger.info({ released }, 'held emails released: an SMTP server is set');
  } catch (err) {
    logger.error({ err }, 'could not release the held emails');
  }
}
