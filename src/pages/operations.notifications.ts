import type { Response, Router } from 'express';
import type { z } from 'zod';
import type { Deps } from '../deps';
import { currentUser } from '../auth/guards';
import { IdParams } from '../http/validate';
import { presentDeploymentNotificationList } from '../modules/deployments/deployments.present';
import { DeploymentNotificationQuery } from '../modules/deployments/deployments.schemas';
import {
  DEPLOYMENT_DELETERS,
  deploymentNotificationsService,
  mayDeleteDeployments,
} from '../modules/deployments/deployments.service';
import {
  presentCleared,
  presentNotification,
  presentNotificationList,
} from '../modules/notifications/notifications.present';
import { ItemIdParams } from '../modules/notifications/notifications.schemas';
import { lowStockNotificationsService } from '../modules/notifications/notifications.service';
import { usersService } from '../modules/users/users.service';
import { attempt, flash } from './forms';
import { PageRouter, type PageRequest } from './page-route';

/** The deployment list the page shows: the API's first page, whatever the address asks. */
const DEPLOYMENTS_SHOWN = { query: DeploymentNotificationQuery, fromQuery: () => ({}) };

/**
 * /notifications (managers and admins: the deployment list is the API's manager route, and so is
 * acknowledging): low-stock alerts with Acknowledge, and what the deployment webhooks stored.
 */
export function notificationsPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const lowStock = lowStockNotificationsService(db);
  const deployments = deploymentNotificationsService(db);
  const users = usersService(db);

  async function renderIndex(
    req: PageRequest<{ readonly query: z.output<typeof DeploymentNotificationQuery> }>,
    res: Response,
    refused: { status: number; message: string } | null = null,
  ) {
    const { limit } = req.input.query;
    const [alerts, deployed, people] = await Promise.all([lowStock.list(), deployments.list(limit), users.list()]);
    // an acknowledgement names its user by id; the page names the person
    const names = new Map(people.map((u) => [u.id, `${u.first_name} ${u.last_name}`]));
    res.status(refused?.status ?? 200).render('operations/notifications', {
      title: 'Notifications',
      lowStock: presentNotificationList(alerts),
      deployments: presentDeploymentNotificationList(deployed),
      nameOf: (id: string | null) => (id ? (names.get(id) ?? 'a removed user') : ''),
      message: refused?.message ?? null,
      canDeleteDeployments: mayDeleteDeployments(currentUser(req)),
    });
  }

  pages.get('/notifications', { access: 'manager', ...DEPLOYMENTS_SHOWN }, async (req, res) => {
    await renderIndex(req, res);
  });

  pages.post(
    '/notifications/low-stock/:itemId/acknowledge',
    { access: 'manager', params: ItemIdParams, ...DEPLOYMENTS_SHOWN },
    async (req, res) => {
      const { itemId } = req.input.params;
      // 400: the item went back above its minimum since the page was shown
      const result = await attempt(() => lowStock.acknowledge(itemId, currentUser(req).id), [400]);
      if (!result.ok) return renderIndex(req, res, result);
      flash(req, `Acknowledged: ${presentNotification(result.value).message}`);
      res.redirect(303, '/notifications');
    },
  );

  pages.post('/notifications/low-stock/clear', { access: 'manager' }, async (req, res) => {
    flash(req, presentCleared(await lowStock.clearAcknowledged()).message);
    res.redirect(303, '/notifications');
  });

  pages.post(
    '/notifications/deployments/:id/delete',
    { access: DEPLOYMENT_DELETERS, params: IdParams },
    async (req, res) => {
      const { id } = req.input.params;
      await deployments.delete(id);
      flash(req, `Deployment notification ${id} deleted`);
      res.redirect(303, '/notifications');
    },
  );

  return pages.router;
}
