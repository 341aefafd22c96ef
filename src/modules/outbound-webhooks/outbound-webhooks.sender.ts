import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Knex } from 'knex';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { transaction } from '../../db/transaction';
import { queueEmail, type OutboxMessage } from '../outbox/outbox.queries';
import type { Sender, SendOutcome } from '../outbox/outbox.worker';
import { activeUsersWithRoles } from '../users/users.queries';
import { checkWebhookUrl, RefusedUrl, type AllowedTarget } from './outbound-webhooks.address';
import { markEndpointDelivered, markEndpointFailing, outboundWebhookById } from './outbound-webhooks.queries';

/** A receiver's answer must come within this. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** What is read of a receiver's answer; the rest is dropped. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** An endpoint whose deliveries have failed this long is set inactive and its admins told. */
export const FAILING_ENDPOINT_MS = 24 * 60 * 60 * 1000;

/** The X-Stores-Signature value: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function webhookSignature(secret: string, body: string, at: Date = new Date()): string {
  const t = Math.floor(at.getTime() / 1000);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

type Answer = { statusCode: number; body: string };

/**
 * POSTs the body to the checked target, connecting to the address that was checked (the request's
 * lookup answers it, so the host cannot resolve elsewhere in between), following no redirect,
 * reading at most MAX_RESPONSE_BYTES of the answer, within DELIVERY_TIMEOUT_MS in all.
 */
function post(target: AllowedTarget, headers: Record<string, string>, body: string): Promise<Answer> {
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: target.address, family: target.family },
      ]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<Answer>((resolve, reject) => {
    const request = client.request(
      target.url,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        lookup: pinned,
        agent: false,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () => {
          resolve({ statusCode: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          response.destroy();
        };
        response.on('data', (chunk: Buffer) => {
          if (size >= MAX_RESPONSE_BYTES) return;
          chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
          size += chunk.length;
          if (size >= MAX_RESPONSE_BYTES) finish();
        });
        response.on('end', finish);
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

export type WebhookSenderDeps = { db: Knex; config: Config; logger: Logger };

/** The outbox's sender of the webhook channel: one delivery to one endpoint (see the issue's "Outbound webhooks"). */
export function webhookSender({ db, config, logger }: WebhookSenderDeps): Sender {
  const log = logger.child({ module: 'outbound-webhooks' });

  async function failing(endpointId: string): Promise<void> {
    await transaction(db, async (trx) => {
      const deactivated = await markEndpointFailing(trx, endpointId, FAILING_ENDPOINT_MS);
      if (!deactivated) return;
      log.warn({ endpointId, url: deactivated.url }, 'outbound webhook failing for 24 hours: set inactive');
      const admins = (await activeUsersWithRoles(trx, ['admin'])).map((admin) => admin.email);
      if (admins.length === 0) return;
      await queueEmail(trx, {
        to: admins,
        subject: 'An outbound webhook was turned off after failing for 24 hours',
        template: 'webhook-disabled',
        data: {
          endpointId,
          url: deactivated.url,
          description: deactivated.description,
          failingSince: (deactivated.failing_since ?? new Date()).toISOString(),
        },
      });
    });
  }

  return async (message: OutboxMessage): Promise<SendOutcome> => {
    const endpoint = await outboundWebhookById(db, message.destination);
    if (!endpoint) return { outcome: 'reject', error: 'the endpoint was deleted' };
    if (!endpoint.active) return { outcome: 'reject', error: 'the endpoint is inactive' };
    let target: AllowedTarget;
    try {
      target = await checkWebhookUrl(endpoint.url, config.outboundWebhooksAllowPrivate);
    } catch (err) {
      if (err instanceof RefusedUrl) return { outcome: 'reject', error: `url refused at delivery: ${err.message}` };
      throw err;
    }
    const body = JSON.stringify(message.payload);
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': 'Stores-Webhooks/1',
      'X-Stores-Event': message.kind,
      'X-Stores-Delivery': message.id,
      'X-Stores-Signature': webhookSignature(endpoint.secret, body),
    };
    const started = Date.now();
    let outcome: SendOutcome;
    try {
      const answer = await post(target, headers, body);
      const durationMs = Date.now() - started;
      outcome =
        answer.statusCode >= 200 && answer.statusCode < 300
          ? { outcome: 'sent', statusCode: answer.statusCode, durationMs }
          : {
              outcome: 'retry',
              statusCode: answer.statusCode,
              durationMs,
              error: `HTTP ${answer.statusCode}${answer.body ? `: ${answer.body.slice(0, 500)}` : ''}`,
            };
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      outcome = {
        outcome: 'retry',
        durationMs: Date.now() - started,
        error: timedOut ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : (err as Error).message,
      };
    }
    if (outcome.outcome === 'sent') {
      if (endpoint.failing_since) await markEndpointDelivered(db, endpoint.id);
    } else await failing(endpoint.id);
    return outcome;
  };
}
