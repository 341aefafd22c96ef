import { z } from 'zod';
import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import '../../http/openapi';
import { dashboardService } from './dashboard.service';

const CategoryBrief = z.object({ id: z.number().int(), name: z.string(), color: z.string().nullable() });
const Stats = z
  .object({ totalItems: z.number().int(), lowStockItems: z.number().int(), totalValue: z.number(), activeUsers: z.number().int() })
  .openapi('DashboardStats');
const LowStockItem = z
  .object({ id: z.number().int(), name: z.string(), sku: z.string(), currentStock: z.number(), minimumStock: z.number(), price: z.string(), category: CategoryBrief })
  .openapi('LowStockItem');
const CategoryStat = z.object({ category: CategoryBrief, itemCount: z.number().int(), totalValue: z.number() }).openapi('CategoryStat');

export function dashboardRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Dashboard');
  const dashboard = dashboardService(db);

  api.get(
    '/dashboard/stats',
    {
      summary: 'Inventory figures',
      description:
        'Over active items: totalItems, lowStockItems (currentStock <= minimumStock), totalValue = sum(price x currentStock) as a number; activeUsers counts active users.',
      access: 'auth',
      responses: { 200: { description: 'Stats', schema: Stats } },
    },
    async (_req, res) => {
      res.json(await dashboard.stats());
    },
  );

  api.get(
    '/dashboard/low-stock',
    {
      summary: 'Active items at or below their minimum stock',
      description: 'Ordered by how far below the minimum they are.',
      access: 'auth',
      responses: { 200: { description: 'Items', schema: z.array(LowStockItem) } },
    },
    async (_req, res) => {
      res.json(await dashboard.lowStock());
    },
  );

  api.get(
    '/dashboard/category-stats',
    {
      summary: 'Per category: active item count and stock value',
      description: 'Every category appears, also those without items; totalValue is a number.',
      access: 'auth',
      responses: { 200: { description: 'Stats', schema: z.array(CategoryStat) } },
    },
    async (_req, res) => {
      res.json(await dashboard.categoryStats());
    },
  );

  return api.router;
}
