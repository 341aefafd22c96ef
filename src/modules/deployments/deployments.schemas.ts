import { z } from 'zod';
import { MessageBody } from '../../http/openapi';
import { limitParam } from '../../http/pagination';

export const NOTIFICATION_SOURCES = ['watchtower', 'github'] as const;
export type NotificationSource = (typeof NOTIFICATION_SOURCES)[number];

const optionalText = (description: string) => z.string().nullable().openapi({ description });

export const DeploymentNotification = z
  .object({
    id: z.number().int(),
    source: z.enum(NOTIFICATION_SOURCES),
    event: z
      .string()
      .openapi({ description: "GitHub's X-GitHub-Event (push, release, workflow_run); 'notification' for Watchtower" }),
    service: optionalText('Watchtower: the container updated (or that failed)'),
    image: optionalText('Watchtower: the image name without its tag'),
    tag: optionalText('Watchtower: the image tag'),
    status: optionalText(
      "updated or failed (Watchtower); the release action; the workflow run's conclusion, or its status until completed",
    ),
    host: optionalText('Watchtower: the host it runs on'),
    message: optionalText(
      "Watchtower: the notification text; GitHub: the head commit's message, the release name or the run's title",
    ),
    repository: optionalText('GitHub: owner/name'),
    ref: optionalText('GitHub: the branch or tag name'),
    commit: optionalText('GitHub: the commit sha'),
    actor: optionalText('GitHub: the login of the user who caused the event'),
    summary: optionalText('one human-readable line, e.g. "alice pushed 3 commits to main"'),
    deliveryId: optionalText("GitHub's X-GitHub-Delivery"),
    receivedAt: z.string().datetime(),
  })
  .openapi('DeploymentNotification');
export type DeploymentNotification = z.infer<typeof DeploymentNotification>;

export const DeploymentNotificationList = z
  .object({
    notifications: z.array(DeploymentNotification),
    total: z.number().int().openapi({ description: 'all stored notifications, whatever the limit' }),
  })
  .openapi('DeploymentNotificationList');
export type DeploymentNotificationList = z.infer<typeof DeploymentNotificationList>;

export const DeploymentNotificationQuery = z.object({ limit: limitParam(50, 100) });

/** The fields a webhook payload may yield; the rest stays null. */
export type NotificationFields = Partial<
  Record<
    'service' | 'image' | 'tag' | 'status' | 'host' | 'message' | 'repository' | 'ref' | 'commit' | 'actor' | 'summary',
    string | null
  >
>;

export type NewDeploymentNotification = NotificationFields & {
  source: NotificationSource;
  event: string;
  deliveryId?: string | null;
  /** the payload as JSON text, stored as jsonb */
  payloadJson: string;
};

export const WatchtowerPayload = z
  .looseObject({
    title: z
      .string()
      .optional()
      .openapi({ description: 'e.g. "Watchtower updates on prod-1" (the host is taken from it)' }),
    message: z.string().optional().openapi({ description: "Watchtower's notification text" }),
    service: z.string().optional(),
    container: z.string().optional(),
    image: z.string().optional().openapi({ description: 'name or name:tag' }),
    tag: z.string().optional(),
    status: z.string().optional(),
    host: z.string().optional(),
    report: z
      .looseObject({})
      .optional()
      .openapi({ description: "Watchtower's json.v1 template: {report, title, host, entries}" }),
  })
  .openapi('WatchtowerPayload');

/** POST /api/webhook/github's 200: a ping's message, or the record a redelivery stored the first time. */
export const GitHubDeliveryAnswer = z.union([MessageBody, DeploymentNotification]);

export const GitHubPayload = z
  .looseObject({})
  .openapi('GitHubWebhookPayload', { description: "GitHub's event payload" });
