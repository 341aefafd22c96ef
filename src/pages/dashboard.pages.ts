import { Router } from 'express';
import type { Deps } from '../deps';
import { dashboardService } from '../modules/dashboard/dashboard.service';
import { salesAnalytics } from '../modules/sales/sales.analytics';
import { systemAlertsService } from '../modules/system-alerts/system-alerts.service';
import { requirePage } from './page-guards';

const LOW_STOCK_SHOWN = 10;
const SALES_DAYS = 30;

/** `/`: the day's overview, from the same services as the dashboard API. */
export function dashboardPages({ db }: Deps): Router {
  const pages = Router();
  const dashboard = dashboardService(db);
  const alerts = systemAlertsService(db);
  const analytics = salesAnalytics(db);

  pages.get('/', requirePage(), async (_req, res) => {
    const [stats, systemAlerts, lowStock, categories, dailySales] = await Promise.all([
      dashboard.stats(),
      alerts.alerts(),
      dashboard.lowStock(),
      dashboard.categoryStats(),
      analytics.dailySales(SALES_DAYS),
    ]);
    const valuedCategories = categories.filter((c) => c.itemCount > 0);
    res.render('dashboard/index', {
      title: 'Dashboard',
      scripts: ['/assets/chart.js/chart.umd.min.js', '/assets/js/dashboard.js'],
      stats,
      systemAlerts,
      lowStock: lowStock.slice(0, LOW_STOCK_SHOWN),
      lowStockMore: Math.max(0, lowStock.length - LOW_STOCK_SHOWN),
      categories: valuedCategories,
      dailySales,
      salesDays: SALES_DAYS,
      // what the charts draw; the same figures are in the tables beside them
      chartData: {
        categories: { labels: valuedCategories.map((c) => c.category.name), values: valuedCategories.map((c) => Number(c.totalValue)) },
        sales: { labels: dailySales.map((d) => d.day), counts: dailySales.map((d) => d.sales), values: dailySales.map((d) => Number(d.value)) },
      },
    });
  });

  return pages;
}
