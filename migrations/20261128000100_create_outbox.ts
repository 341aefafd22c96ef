import type { Knex } from 'knex';

// Issue 32: one transactional outbox for everything that leaves the service (emails, outbound
// webhook deliveries), and the outbound webhook endpoints whose deliveries it holds.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE outbound_webhooks (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      url text NOT NULL,
      events text[] NOT NULL,
      description text,
      secret text NOT NULL,
      active boolean NOT NULL DEFAULT true,
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- an event's subscribers are read in the transaction of the change that causes it
    CREATE INDEX outbound_webhooks_active_events ON outbound_webhooks USING gin (events) WHERE active;

    CREATE TABLE outbox_messages (
      -- the stable id a receiver de-duplicates by (X-Stores-Delivery, the email's Message-ID)
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      -- the order of the changes that wrote them: one destination's messages are sent in it
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      channel text NOT NULL CHECK (channel IN ('email', 'webhook')),
      -- an email's kind (order_received, ...) or a webhook's event type (sale.created, ...)
      kind text NOT NULL,
      -- an email address, or the id of the outbound webhook
      destination text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'held', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      last_error text,
      last_status_code integer,
      last_duration_ms integer,
      created_at timestamptz NOT NULL DEFAULT now(),
      -- retried until then, then failed (Retry now gives a failed message a new day)
      retry_until timestamptz NOT NULL DEFAULT now() + interval '24 hours',
      sent_at timestamptz,
      failed_at timestamptz
    );
    -- the worker's claim: the due pending messages in order, and each destination's earliest
    CREATE INDEX outbox_messages_pending ON outbox_messages (seq) WHERE status = 'pending';
    CREATE INDEX outbox_messages_pending_destination ON outbox_messages (channel, destination, seq)
      WHERE status = 'pending';
    -- the admin list (newest first, by status and kind) and an endpoint's deliveries
    CREATE INDEX outbox_messages_listed ON outbox_messages (created_at DESC, seq DESC);
    CREATE INDEX outbox_messages_destination ON outbox_messages (destination, seq DESC);
    CREATE INDEX outbox_messages_failed ON outbox_messages (failed_at) WHERE status = 'failed';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS outbox_messages; DROP TABLE IF EXISTS outbound_webhooks');
}
