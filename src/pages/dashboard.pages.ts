import type { Router } from 'express';
import type { Deps } from '../deps';
import { currentUser, isStaff } from '../auth/guards';
import { backupsService } from '../modules/backups/backups.service';
import { managesBackups } from '../modules/backups/backups.policy';
import { dashboardService } from '../modules/dashboard/dashboard.service';
import { salesAnalytics } from '../modules/sales/sales.analytics';
import { systemAlertsService } from '../modules/system-alerts/system-alerts.service';
import { CATALOGUE_FIRST_PAGE, catalogueViews } from './catalogue.pages';
import { PageRouter } from './page-route';

const LOW_STOCK_SHOWN = 10;
const SALES_DAYS = 30;

/** What an admin can do about a missing backup, linked beside the warning. */
const MAKE_A_BACKUP = { href: '/backups', label: 'Make one now on the Backups page' };

/** The page that lists what an alert counts, linked beside it. */
const ALERT_PAGES: Record<string, { href: string; label: string }> = {
  sds_missing_or_old: { href: '/reports/sds', label: 'See the items' },
};

/**
 * `/`: the day's overview, from the same services as the dashboard API; admins also see whether a
 * backup exists. A requester's home is the catalogue and their own requests instead.
 */
export function dashboardPages(deps: Deps): Router {
  const { db } = deps;
  const pages = new PageRouter(db);
  const dashboard = dashboardService(db);
  const backups = backupsService(deps);
  const alerts = systemAlertsService(db, deps.reads.alerts);
  const analytics = salesAnalytics(db);
  const { renderCatalogue } = catalogueViews(db);

  pages.get('/', { access: 'requester', ...CATALOGUE_FIRST_PAGE }, async (req, res) => {
    if (!isStaff(currentUser(req))) return renderCatalogue(req, res, { query: req.input.query });
    const [stats, stockCounts, lotExpiry, systemAlerts, backupAlerts, lowStock, categories, dailySales] =
      await Promise.all([
        dashboard.stats(),
        dashboard.stockCounts(),
        dashboard.lotExpiry(),
        alerts.alerts(),
        managesBackups(currentUser(req)) ? backups.missingBackupAlerts(new Date()) : [],
        dashboard.lowStock(LOW_STOCK_SHOWN),
        dashboard.categoryStats(),
        analytics.dailySales(SALES_DAYS),
      ]);
    const valuedCategories = categories.filter((c) => c.itemCount > 0);
    res.render('dashboard/index', {
      title: 'Dashboard',
      description: `The stores at a glance: system alerts, low stock, stock value by category and the sales of the last ${SALES_DAYS} days.`,
      // Chart.js itself is loaded by dashboard.js once a chart scrolls into view
      scripts: ['/assets/js/dashboard.js'],
      stats,
      stockCounts,
      lotExpiry,
      systemAlerts: [
        ...systemAlerts.map((alert) => ({ ...alert, action: ALERT_PAGES[alert.type] })),
        ...backupAlerts.map((alert) => ({ ...alert, action: MAKE_A_BACKUP })),
      ],
      lowStock,
      // the rest of the list, counted by the kept figures rather than read
      lowStockMore: Math.max(0, stats.lowStockItems - lowStock.length),
      categories: valuedCategories,
      dailySales,
      salesDays: SALES_DAYS,
      // what the charts draw; the same figures are in the tables beside them
      chartData: {
        categories: {
          labels: valuedCategories.map((c) => c.category.name),
          values: valuedCategories.map((c) => Number(c.totalValue)),
        },
        sales: {
          labels: dailySales.map((d) => d.day),
          counts: dailySales.map((d) => d.sales),
          values: dailySales.map((d) => Number(d.value)),
        },
      },
    });
  });

  return pages.router;
}
