import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { IdParams } from '../../http/validate';
import { presentDeploymentNotificationList } from './deployments.present';
import { DeploymentNotificationList, DeploymentNotificationQuery } from './deployments.schemas';
import { DEPLOYMENT_DELETERS, deploymentNotificationsService } from './deployments.service';

/** GET/DELETE /api/notifications/deployments (behind the session and bearer middleware). */
export function deploymentNotificationsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Deployments');
  const notifications = deploymentNotificationsService(db);

  api.get(
    '/notifications/deployments',
    {
      operationId: 'listDeploymentNotifications',
      summary: 'Recent deployment notifications',
      description:
        'What the webhooks stored (POST /api/webhook/watchtower and /api/webhook/github), newest first. limit defaults to 50, max 100; ' +
        'total counts every stored notification. Fields a source does not give are null. The raw payloads are kept in the database ' +
        'but not listed (a GitHub push payload alone can be tens of KB).',
      access: 'manager',
      query: DeploymentNotificationQuery,
      responses: {
        200: { description: 'Notifications', schema: DeploymentNotificationList },
        400: { description: 'Invalid limit', schema: ValidationErrorBody },
      },
    },
    async (req, res) => {
      const { limit } = req.input.query;
      res.json(presentDeploymentNotificationList(await notifications.list(limit)));
    },
  );

  api.delete(
    '/notifications/deployments/:id',
    {
      operationId: 'deleteDeploymentNotification',
      summary: 'Delete a deployment notification',
      description: 'A GitHub delivery redelivered after its notification was deleted is stored again.',
      access: DEPLOYMENT_DELETERS,
      params: IdParams,
      responses: { 204: 'Deleted', 404: { description: 'Deployment notification not found', schema: MessageBody } },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await notifications.delete(id);
      res.status(204).end();
    },
  );

  return api.router;
}
