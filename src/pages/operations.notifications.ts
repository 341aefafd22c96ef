import { Router, type Request, type Response } from 'express';
import type { Deps } from '../deps';
import { currentUser, hasRole } from '../auth/guards';
import { IdParams, parse } from '../http/validate';
import { presentDeploymentNotificationList } from '../modules/deployments/deployments.present';
import { DeploymentNotificationQuery } from '../modules/deployments/deployments.schemas';
import { deploymentNotificationsService } from '../modules/deployments/deployments.service';
import {
  presentCleared,
  presentNotification,
  presentNotificationList,
} from '../modules/notifications/notifications.present';
import { ItemIdParams } from '../modules/notifications/notifications.schemas';
import { lowStockNotificationsService } from '../modules/notifications/notifications.service';
import { usersService } from '../modules/users/users.service';
import { attempt, flash } from './forms';
import { requirePage } from './page-guards';

/**
 * /notifications (managers and admins: the deployment list is the API's manager route, and so is
 * acknowledging): low-stock alerts with Acknowledge, and what the deployment webhooks stored.
 */
export function notificationsPages({ db }: Deps): Router {
  const pages = Router();
  const lowStock = lowStockNotificationsService(db);
  const deployments = deploymentNotificationsService(db);
  const users = usersService(db);

  async function renderIndex(req: Request, res: Response, refused: { status: number; message: string } | null = null) {
    const { limit } = parse(DeploymentNotificationQuery, {});
    const [alerts, deployed, people] = await Promise.all([lowStock.list(), deployments.list(limit), users.list()]);
    // an acknowledgement names its user by id; the page names the person
    const names = new Map(people.map((u) => [u.id, `${u.first_name} ${u.last_name}`]));
    res.status(refused?.status ?? 200).render('operations/notifications', {
      title: 'Notifications',
      lowStock: presentNotificationList(alerts),
      deployments: presentDeploymentNotificationList(deployed),
      nameOf: (id: string | null) => (id ? (names.get(id) ?? 'a removed user') : ''),
      message: refused?.message ?? null,
      // deleting one is the API's admin route
      canDeleteDeployments: hasRole(currentUser(req), 'admin'),
    });
  }

  pages.get('/notifications', requirePage('manager'), async (req, res) => {
    await renderIndex(req, res);
  });

  pages.post('/notifications/low-stock/:itemId/acknowledge', requirePage('manager'), async (req, res) => {
    const { itemId } = parse(ItemIdParams, req.params);
    // 400: the item went back above its minimum since the page was shown
    const result = await attempt(() => lowStock.acknowledge(itemId, currentUser(req).id), [400]);
    if (!result.ok) return renderIndex(req, res, result);
    flash(req, `Acknowledged: ${presentNotification(result.value).message}`);
    res.redirect(303, '/notifications');
  });

  pages.post('/notifications/low-stock/clear', requirePage('manager'), async (req, res) => {
    flash(req, presentCleared(await lowStock.clearAcknowledged()).message);
    res.redirect(303, '/notifications');
  });

  pages.post('/notifications/deployments/:id/delete', requirePage('admin'), async (req, res) => {
    const { id } = parse(IdParams, req.params);
    await deployments.delete(id);
    flash(req, `Deployment notification ${id} deleted`);
    res.redirect(303, '/notifications');
  });

  return pages;
}
