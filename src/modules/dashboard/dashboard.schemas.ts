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
