import { z } from 'zod';
import '../../http/openapi';
import { ItemStat, SalesFilter } from '../sales/sales.schemas';

export const DateRange = SalesFilter.pick({ chargeCode: true, startDate: true, endDate: true });

export const ChargeCodeAnalytics = z
  .object({
    totalSpending: z.number(),
    chargeCodeBreakdown: z.array(
      z.object({ code: z.string(), spent: z.number(), percentage: z.number(), salesCount: z.number() }),
    ),
    monthlyTrends: z.array(z.object({ month: z.string(), spending: z.number() })),
  })
  .openapi('ChargeCodeAnalytics');
export type ChargeCodeAnalytics = z.infer<typeof ChargeCodeAnalytics>;

export const TopSellers = z
  .object({ period: z.enum(['week', 'month', 'year', 'all']), items: z.array(ItemStat) })
  .openapi('TopSellers');
export type TopSellers = z.infer<typeof TopSellers>;

export const DepartmentPerformance = z
  .object({
    departments: z.array(
      z.object({
        department: z.string(),
        totalSales: z.number().int(),
        totalAmount: z.number(),
        refundedAmount: z.number(),
        netAmount: z.number(),
        averageSale: z.number(),
        chargeCodes: z.number().int(),
      }),
    ),
  })
  .openapi('DepartmentPerformance');
export type DepartmentPerformance = z.infer<typeof DepartmentPerformance>;
