import { z } from 'zod';
import '../../http/openapi';

const CategoryBrief = z.object({ id: z.number().int(), name: z.string(), color: z.string().nullable() });

export const DashboardStats = z
  .object({
    totalItems: z.number().int(),
    lowStockItems: z.number().int(),
    totalValue: z.number(),
    activeUsers: z.number().int(),
  })
  .openapi('DashboardStats');
export type DashboardStats = z.infer<typeof DashboardStats>;

export const LowStockItem = z
  .object({
    id: z.number().int(),
    name: z.string(),
    sku: z.string(),
    currentStock: z.number(),
    minimumStock: z.number(),
    price: z.string(),
    category: CategoryBrief,
  })
  .openapi('LowStockItem');
export type LowStockItem = z.infer<typeof LowStockItem>;
export const LowStockItems = z.array(LowStockItem);

export const CategoryStat = z
  .object({ category: CategoryBrief, itemCount: z.number().int(), totalValue: z.number() })
  .openapi('CategoryStat');
export type CategoryStat = z.infer<typeof CategoryStat>;
export const CategoryStats = z.array(CategoryStat);

export const DashboardStockCounts = z
  .object({
    days: z.number().int().openapi({ description: 'the period: 90 days' }),
    linesCounted: z.number().int().openapi({ description: 'lines of posted stocktakes counted in the period' }),
    linesExact: z.number().int().openapi({ description: 'of those, the lines whose count matched the expected stock' }),
    stockAccuracy: z.number().nullable().openapi({
      description: 'linesExact / linesCounted as a percentage (one decimal place); null when nothing was counted',
    }),
    itemsOverdue: z.number().int().openapi({
      description: 'active items not counted by a posted stocktake in the period (never counted: overdue)',
    }),
  })
  .openapi('DashboardStockCounts');
export type DashboardStockCounts = z.infer<typeof DashboardStockCounts>;

export const DashboardLotExpiry = z
  .object({
    warningDays: z.number().int().openapi({ description: 'the setting lots.expiryWarningDays (unset 30)' }),
    expiringLots: z.number().int().openapi({
      description:
        'lots holding stock whose expiry is within the warning days (GET /api/lots?status=expiring; the page /lots?status=expiring)',
    }),
    expiredLots: z.number().int().openapi({
      description:
        'lots past their expiry still holding stock (GET /api/lots?status=expired; the page /lots?status=expired)',
    }),
  })
  .openapi('DashboardLotExpiry');
export type DashboardLotExpiry = z.infer<typeof DashboardLotExpiry>;
