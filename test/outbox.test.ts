import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/transaction';
import { createLogger } from '../src/logger';
import { outboxMessages, queueEmail, type OutboxMessage } from '../src/modules/outbox/outbox.queries';
import { startOutboxWorker, type OutboxWorker, type SendOutcome } from '../src/modules/outbox/outbox.worker';
import { testApp, type TestApp } from './helpers/app';
import { until } from './helpers/poll';

let t: TestApp;
const workers: OutboxWorker[] = [];
const logger = createLogger('silent');

beforeAll(async () => {
  t = await testApp();
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await t.db('outbox_messages').delete();
});
afterAll(async () => {
  await t.close();
});

/** A worker whose email sender hands each message to `answer` and records what it was given. */
function worker(answer: (m: OutboxMessage) => SendOutcome | Promise<SendOutcome>, retryBaseMs = 50) {
  const given: OutboxMessage[] = [];
  workers.push(
    startOutboxWorker({
      db: t.db,
      databaseUrl: t.databaseUrl,
      logger,
      retryBaseMs,
      pollMs: 50,
      senders: {
        email: async (m) => {
          given.push(m);
          return answer(m);
        },
      },
    }),
  );
  return given;
}

const email = (to: string, n: number) =>
  transaction(t.db, (trx) => queueEmail(trx, { to, subject: `Message ${n}`, template: 'test', data: { n } }));

const byStatus = (status: OutboxMessage['status']) => () => outboxMessages(t.db, { status });

describe('the outbox', () => {
  it('sends nothing for a change that rolled back', async () => {
    await expect(
      transaction(t.db, async (trx) => {
        await queueEmail(trx, { to: 'a@example.ac.uk', subject: 'Lost', template: 'test', data: {} });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await outboxMessages(t.db, {})).toEqual([]);
  });

  it("sends each destination's messages once, in the order of their changes", async () => {
    const given = worker(() => ({ outcome: 'sent' }));
    for (let n = 1; n <= 5; n += 1) await email(n % 2 ? 'odd@example.ac.uk' : 'even@example.ac.uk', n);
    const sent = await until(byStatus('sent'), (rows) => rows.length === 5);
    expect(sent).toHaveLength(5);
    const order = (to: string) => given.filter((m) => m.destination === to).map((m) => m.payload.data);
    expect(order('odd@example.ac.uk')).toEqual([{ n: 1 }, { n: 3 }, { n: 5 }]);
    expect(order('even@example.ac.uk')).toEqual([{ n: 2 }, { n: 4 }]);
    expect(sent.every((m) => m.attempts === 1 && m.sentAt !== null)).toBe(true);
  });

  it('retries a failure with the same id, and later messages of its destination wait for it', async () => {
    let failures = 2;
    const given = worker(() =>
      failures-- > 0 ? { outcome: 'retry', error: 'connection refused' } : { outcome: 'sent' },
    );
    await email('x@example.ac.uk', 1);
    await email('x@example.ac.uk', 2);
    const sent = await until(byStatus('sent'), (rows) => rows.length === 2);
    expect(sent).toHaveLength(2);
    const first = sent.find((m) => (m.payload.data as { n: number }).n === 1)!;
    expect(first.attempts).toBe(3);
    expect(given.map((m) => [m.id, (m.payload.data as { n: number }).n])).toEqual([
      [first.id, 1],
      [first.id, 1],
      [first.id, 1],
      [expect.any(String), 2],
    ]);
  });

  it('does not retry a refusal: the message is failed with its error', async () => {
    const given = worker(() => ({ outcome: 'reject', error: '550 mailbox unavailable', statusCode: 550 }));
    await email('gone@example.ac.uk', 1);
    const failed = await until(byStatus('failed'), (rows) => rows.length === 1);
    expect(failed[0]).toMatchObject({ attempts: 1, lastError: '550 mailbox unavailable', lastStatusCode: 550 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(given).toHaveLength(1);
  });

  it('holds what no sender can send now', async () => {
    worker(() => ({ outcome: 'hold' }));
    await email('later@example.ac.uk', 1);
    const held = await until(byStatus('held'), (rows) => rows.length === 1);
    expect(held[0]).toMatchObject({ destination: 'later@example.ac.uk', attempts: 0 });
  });

  it('two workers over one database send each message once', async () => {
    const first = worker(() => ({ outcome: 'sent' }));
    const second = worker(() => ({ outcome: 'sent' }));
    for (let n = 1; n <= 40; n += 1) await email(`person${n % 4}@example.ac.uk`, n);
    await until(byStatus('sent'), (rows) => rows.length === 40);
    const ids = [...first, ...second].map((m) => m.id);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
  });
});
