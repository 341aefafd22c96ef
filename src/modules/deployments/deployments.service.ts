import type { Db } from '../../db/knex';
import { allQueries } from '../../db/transaction';
import { NotFound } from '../../http/errors';
import type { NewDeploymentNotification, NotificationSource } from './deployments.schemas';
import { hasRole } from '../../auth/guards';
import type { Role } from '../../auth/roles';

/** Who deletes a stored deployment notification: the API's access of DELETE, and the page's buttons. */
export const DEPLOYMENT_DELETERS = 'admin' satisfies Role;

export const mayDeleteDeployments = (user: Express.User): boolean => hasRole(user, DEPLOYMENT_DELETERS);

export type DeploymentNotificationRow = {
  id: number;
  source: NotificationSource;
  event: string;
  service: string | null;
  image: string | null;
  tag: string | null;
  status: string | null;
  host: string | null;
  message: string | null;
  repository: string | null;
  ref: string | null;
  commit_sha: string | null;
  actor: string | null;
  summary: string | null;
  delivery_id: string | null;
  received_at: Date;
};

// The raw payload (tens of KB for a GitHub push) stays in the database; no answer carries it.
const COLUMNS = [
  'id',
  'source',
  'event',
  'service',
  'image',
  'tag',
  'status',
  'host',
  'message',
  'repository',
  'ref',
  'commit_sha',
  'actor',
  'summary',
  'delivery_id',
  'received_at',
] as const;

/** Notifications of deployments and repository events received by the webhooks. */
export function deploymentNotificationsService(db: Db) {
  const table = () => db<DeploymentNotificationRow>('deployment_notifications');

  /** Stores a notification; one whose delivery id is already stored is answered with that record instead. */
  async function record(
    input: NewDeploymentNotification,
  ): Promise<{ notification: DeploymentNotificationRow; created: boolean }> {
    const [inserted] = await db('deployment_notifications')
      .insert({
        source: input.source,
        event: input.event,
        service: input.service ?? null,
        image: input.image ?? null,
        tag: input.tag ?? null,
        status: input.status ?? null,
        host: input.host ?? null,
        message: input.message ?? null,
        repository: input.repository ?? null,
        ref: input.ref ?? null,
        commit_sha: input.commit ?? null,
        actor: input.actor ?? null,
        summary: input.summary ?? null,
        delivery_id: input.deliveryId ?? null,
        payload: db.raw('?::jsonb', [input.payloadJson]),
      })
      .onConflict('delivery_id')
      .ignore()
      .returning<DeploymentNotificationRow[]>(COLUMNS);
    if (inserted) return { notification: inserted, created: true };
    const existing = await table()
      .where({ delivery_id: input.deliveryId })
      .first(...COLUMNS);
    // deleted between the conflict and the read: the delivery is new again
    return existing ? { notification: existing, created: false } : record(input);
  }

  return {
    record,

    async list(limit: number): Promise<{ notifications: DeploymentNotificationRow[]; total: number }> {
      const [notifications, [{ total }]] = await allQueries(db, [
        () =>
          table()
            .select(...COLUMNS)
            .orderBy([
              { column: 'received_at', order: 'desc' },
              { column: 'id', order: 'desc' },
            ])
            .limit(limit),
        () => table().count({ total: '*' }),
      ]);
      return { notifications, total: Number(total) };
    },

    async delete(id: number): Promise<void> {
      const deleted = await table().where({ id }).delete();
      if (deleted === 0) throw NotFound('Deployment notification not found');
    },
  };
}
