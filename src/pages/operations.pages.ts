import { Router } from 'express';
import type { Deps } from '../deps';
import { humanSize } from '../modules/archives/archives.present';
import { archivesPages } from './operations.archives';
import { auditPages } from './operations.audit';
import { backupsPages } from './operations.backups';
import { notificationsPages } from './operations.notifications';

/** The back office's operations pages: backups, archives, notifications and the audit trail, one module each. */
export function operationsPages(deps: Deps): Router {
  const pages = Router();
  pages.use(['/backups', '/archives', '/notifications', '/audit'], (_req, res, next) => {
    res.locals.stylesheets = ['/assets/css/operations.css'];
    // file sizes as the archive preview gives them (binary units)
    res.locals.humanSize = humanSize;
    next();
  });
  pages.use(backupsPages(deps));
  pages.use(archivesPages(deps));
  pages.use(notificationsPages(deps));
  pages.use(auditPages(deps));
  return pages;
}
