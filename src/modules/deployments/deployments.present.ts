import type { DeploymentNotification, DeploymentNotificationList } from './deployments.schemas';
import type { DeploymentNotificationRow } from './deployments.service';

export function presentDeploymentNotification(row: DeploymentNotificationRow): DeploymentNotification {
  return {
    id: row.id,
    source: row.source,
    event: row.event,
    service: row.service,
    image: row.image,
    tag: row.tag,
    status: row.status,
    host: row.host,
    message: row.message,
    repository: row.repository,
    ref: row.ref,
    commit: row.commit_sha,
    actor: row.actor,
    summary: row.summary,
    deliveryId: row.delivery_id,
    receivedAt: row.received_at.toISOString(),
  };
}

export function presentDeploymentNotificationList(page: {
  notifications: DeploymentNotificationRow[];
  total: number;
}): DeploymentNotificationList {
  return { notifications: page.notifications.map(presentDeploymentNotification), total: page.total };
}

/** GitHub's ping: which events this service stores. */
export const presentPing = (storedEvents: string[]) => ({
  message: `Ping received; ${storedEvents.join(', ')} events are stored`,
});

export const presentIgnoredEvent = (event: string) => ({ message: `Event '${event}' ignored` });
