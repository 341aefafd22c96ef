import pg from 'pg';
import type { Knex } from 'knex';
import type { Logger } from '../../logger';
import { CONNECTION_LIVENESS } from '../../db/knex';
import { transaction } from '../../db/transaction';
import {
  claimNextMessage,
  OUTBOX_NOTIFY_CHANNEL,
  recordFailedAttempt,
  recordHeld,
  recordSent,
  type OutboxChannel,
  type OutboxMessage,
} from './outbox.queries';

/**
 * What sending one message came to: `sent`; `retry` (the receiver or the connection failed: again
 * later); `reject` (the receiver refused it for good, e.g. SMTP 5xx: never again); `hold` (nothing
 * can send it now, e.g. no SMTP server is set).
 */
export type SendOutcome =
  | { outcome: 'sent'; statusCode?: number; durationMs?: number }
  | { outcome: 'retry' | 'reject'; error: string; statusCode?: number; durationMs?: number }
  | { outcome: 'hold' };

export type Sender = (message: OutboxMessage) => Promise<SendOutcome>;

export type OutboxWorkerOptions = {
  db: Knex;
  /** for the LISTEN connection, outside the pool */
  databaseUrl: string;
  logger: Logger;
  senders: Partial<Record<OutboxChannel, Sender>>;
  /** the first retry's delay; each next one doubles */
  retryBaseMs: number;
  /** how often the worker looks for due messages when no notification wakes it (retries come due this way) */
  pollMs?: number;
  /** messages sent at once by this instance (to different destinations) */
  lanes?: number;
};

export type OutboxWorker = { stop: () => Promise<void> };

/** How soon a LISTEN connection that could not be opened is tried again (ms). */
const RELISTEN_MS = 1000;
/** How long LISTEN may wait, e.g. in PgBouncer's queue for a server connection while the primary is gone (ms). */
const LISTEN_TIMEOUT_MS = 5000;

/** The delay before the attempt after `attempts` failed ones: base, 2 base, 4 base, ... each ±25% at random. */
export function retryDelayMs(retryBaseMs: number, attempts: number): number {
  return retryBaseMs * 2 ** Math.max(0, attempts - 1) * (0.75 + Math.random() * 0.5);
}

/**
 * Sends one claimed message and records what came of it, in the claim's transaction: the row stays
 * locked while it is sent, so no other worker sends it; a crash before the commit leaves it pending
 * and it is sent again (receivers de-duplicate by its id).
 */
async function sendOne(
  trx: Knex.Transaction,
  message: OutboxMessage,
  send: Sender,
  retryBaseMs: number,
): Promise<SendOutcome> {
  let result: SendOutcome;
  try {
    result = await send(message);
  } catch (err) {
    result = { outcome: 'retry', error: err instanceof Error ? err.message : String(err) };
  }
  if (result.outcome === 'sent') await recordSent(trx, message.id, result);
  else if (result.outcome === 'hold') await recordHeld(trx, message.id);
  else {
    const retryAt = new Date(Date.now() + retryDelayMs(retryBaseMs, message.attempts + 1));
    const giveUp = result.outcome === 'reject' || retryAt > message.retryUntil;
    await recordFailedAttempt(trx, message.id, { ...result, retryAt: giveUp ? null : retryAt });
  }
  return result;
}

/**
 * The delivery worker every instance runs: woken by the commit of a change that wrote messages
 * (LISTEN) and by a short poll, it sends the due messages of the channels it has senders for.
 */
export function startOutboxWorker(options: OutboxWorkerOptions): OutboxWorker {
  const { db, databaseUrl, logger, senders, retryBaseMs, pollMs = 1000, lanes = 2 } = options;
  const channels = Object.keys(senders) as OutboxChannel[];
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let listener: pg.Client | undefined;
  let listening: Promise<void> | undefined;

  const lane = async () => {
    while (!stopped) {
      const sent = await transaction(db, async (trx) => {
        const message = await claimNextMessage(trx, channels);
        if (!message) return false;
        const result = await sendOne(trx, message, senders[message.channel]!, retryBaseMs);
        if (result.outcome === 'retry' || result.outcome === 'reject')
          logger.warn({ id: message.id, kind: message.kind, error: result.error }, 'outbox message not delivered');
        return true;
      });
      if (!sent) return;
    }
  };

  const drain = async () => {
    do {
      again = false;
      try {
        await Promise.all(Array.from({ length: lanes }, lane));
      } catch (err) {
        logger.error({ err }, 'outbox delivery failed; trying again at the next poll');
      }
    } while (again && !stopped);
  };

  const wake = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drain().finally(() => {
      running = undefined;
    });
  };

  /**
   * The LISTEN connection opens again by itself whenever it is lost (the database restarted or
   * failed over, PgBouncer restarted, the backend terminated): at once, then every RELISTEN_MS
   * while it cannot, whatever the poll's interval. Notifications sent meanwhile were lost, so each
   * new LISTEN is followed by a look for due messages.
   */
  let relisten: NodeJS.Timeout | undefined;
  const startListening = () => {
    listening = listen().then((ok) => {
      listening = undefined;
      if (!ok) listenSoon(RELISTEN_MS);
    });
  };
  const listenSoon = (delayMs: number) => {
    if (stopped || listener || listening || relisten || channels.length === 0) return;
    relisten = setTimeout(() => {
      relisten = undefined;
      if (!stopped && !listener && !listening) startListening();
    }, delayMs);
    relisten.unref();
  };
  const lost = (client: pg.Client) => {
    // stop() ends the connection itself
    if (listener !== client || stopped) return;
    listener = undefined;
    void client.end().catch(() => undefined);
    logger.warn('outbox: the LISTEN connection was lost; listening again');
    listenSoon(0);
  };

  const listen = async (): Promise<boolean> => {
    // keepalives end a connection whose server vanished without closing it (its host lost), which
    // would otherwise wait for notifications for ever
    const client = new pg.Client({
      connectionString: databaseUrl,
      ...CONNECTION_LIVENESS,
      // LISTEN is its only query: one that waits on a server that does not answer is given up on
      query_timeout: LISTEN_TIMEOUT_MS,
    });
    client.on('error', () => lost(client));
    client.on('end', () => lost(client));
    client.on('notification', wake);
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_NOTIFY_CHANNEL}`);
    } catch (err) {
      logger.debug({ err }, 'outbox: could not listen for commits; polling meanwhile');
      void client.end().catch(() => undefined);
      return false;
    }
    if (stopped) await client.end().catch(() => undefined);
    else {
      listener = client;
      wake();
    }
    return true;
  };

  const poll = setInterval(wake, pollMs);
  poll.unref();
  if (channels.length > 0) {
    startListening();
    wake();
  }

  return {
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(relisten);
      await listening;
      await listener?.end().catch(() => undefined);
      listener = undefined;
      await running;
    },
  };
}
