import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { presentCategoryStat, presentLowStockItem, presentStats } from './dashboard.present';
import {
  CategoryStats,
  DashboardLotExpiry,
  DashboardStats,
  DashboardStockCounts,
  LowStockItems,
} from './dashboard.schemas';
import { dashboardService } from './dashboard.service';

export function dashboardRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Dashboard');
  const dashboard = dashboardService(db);

  api.get(
    '/dashboard/stats',
    {
      operationId: 'getDashboardStats',
      summary: 'Inventory figures',
      description:
        'Over active items: totalItems, lowStockItems (currentStock <= minimumStock), totalValue = sum(price x currentStock) as a number; activeUsers counts active users.',
      access: 'auth',
      responses: { 200: { description: 'Stats', schema: DashboardStats } },
    },
    async (_req, res) => {
      res.json(presentStats(await dashboard.stats()));
    },
  );

  api.get(
    '/dashboard/stock-counts',
    {
      operationId: 'getDashboardStockCounts',
      summary: 'Stock accuracy and the items overdue for a count',
      description:
        'Over the last 90 days: stockAccuracy = the share (a percentage) of the lines of posted stocktakes counted in the ' +
        'period whose count matched the expected stock (null when none was counted); itemsOverdue = active items not ' +
        'counted by a posted stocktake in the period (never counted: overdue).',
      access: 'auth',
      responses: { 200: { description: 'Figures', schema: DashboardStockCounts } },
    },
    async (_req, res) => {
      res.json(await dashboard.stockCounts());
    },
  );

  api.get(
    '/dashboard/lot-expiry',
    {
      operationId: 'getDashboardLotExpiry',
      summary: 'Lots expiring within the warning days, and expired lots still holding stock',
      description:
        'Over lots holding stock and not quarantined (issue 42): expiringLots = those whose expiresOn is within ' +
        'warningDays (the setting lots.expiryWarningDays, unset 30) from today, expiredLots = those past it. ' +
        'The lists behind them: GET /api/lots?status=expiring and ?status=expired.',
      access: 'auth',
      responses: { 200: { description: 'Figures', schema: DashboardLotExpiry } },
    },
    async (_req, res) => {
      res.json(await dashboard.lotExpiry());
    },
  );

  api.get(
    '/dashboard/low-stock',
    {
      operationId: 'listDashboardLowStock',
      summary: 'Active items at or below their minimum stock',
      description: 'Ordered by how far below the minimum they are.',
      access: 'auth',
      responses: { 200: { description: 'Items', schema: LowStockItems } },
    },
    async (_req, res) => {
      res.json((await dashboard.lowStock()).map(presentLowStockItem));
    },
  );

  api.get(
    '/dashboard/category-stats',
    {
      operationId: 'getDashboardCategoryStats',
      summary: 'Per category: active item count and stock value',
      description: 'Every category appears, also those without items; totalValue is a number.',
      access: 'auth',
      responses: { 200: { description: 'Stats', schema: CategoryStats } },
    },
    async (_req, res) => {
      res.json((await dashboard.categoryStats()).map(presentCategoryStat));
    },
  );

  return api.router;
}
