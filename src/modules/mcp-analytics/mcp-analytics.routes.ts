import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { ValidationErrorBody } from '../../http/openapi';
import { PeriodQuery } from '../sales/sales.schemas';
import { presentChargeCodeAnalytics, presentDepartmentPerformance, presentTopSellers } from './mcp-analytics.present';
import { ChargeCodeAnalytics, DateRange, DepartmentPerformance, TopSellers } from './mcp-analytics.schemas';
import { mcpAnalyticsService } from './mcp-analytics.service';
const invalid = { description: 'Validation failed', schema: ValidationErrorBody };

/**
 * Analytics under /api/mcp, open to any signed-in user or bearer token, and to MCP API keys,
 * which spend their data allowance on them.
 */
export function mcpAnalyticsRoutes({ db, docs, mcpLimiters, reads }: Deps) {
  const api = new ApiRouter({ docs, db, mcpLimiters }, '/api', 'MCP analytics');
  // every analytics read goes to a read replica when one is healthy and has the caller's own writes (issue 44)
  const analytics = (req: Parameters<typeof reads.forReports>[0]) => mcpAnalyticsService(reads.forReports(req));

  api.get(
    '/mcp/charge-code-analytics',
    {
      operationId: 'getChargeCodeAnalytics',
      summary: 'Spending per charge code and per month',
      description:
        'Spending is net of refunds, VAT included. Optional filters chargeCode (partial), startDate, endDate (inclusive).',
      access: 'auth-or-mcp-key',
      mcpLimit: 'data',
      query: DateRange,
      responses: {
        200: { description: 'Analytics', schema: ChargeCodeAnalytics },
        400: invalid,
      },
    },
    async (req, res) => {
      res.json(presentChargeCodeAnalytics(await analytics(req).chargeCodeAnalytics(req.input.query)));
    },
  );

  api.get(
    '/mcp/top-sellers',
    {
      operationId: 'getTopSellers',
      summary: 'Best-selling items',
      description:
        '{period, items: [{itemId, itemName, itemSku, totalQuantity, totalRevenue, salesCount}]}: quantity net of refunds, revenue before VAT. limit default 10 (max 100); period week, month or year (trailing), default all time.',
      access: 'auth-or-mcp-key',
      mcpLimit: 'data',
      query: PeriodQuery,
      responses: { 200: { description: 'Top sellers', schema: TopSellers }, 400: invalid },
    },
    async (req, res) => {
      const { limit, period } = req.input.query;
      res.json(presentTopSellers(await analytics(req).topSellers(limit, period)));
    },
  );

  api.get(
    '/mcp/department-performance',
    {
      operationId: 'getDepartmentPerformance',
      summary: 'Sales per department (charge code cost centre)',
      description:
        '{departments: [{department, totalSales, totalAmount, refundedAmount, netAmount, averageSale, chargeCodes}]}, highest net first. Optional chargeCode, startDate, endDate.',
      access: 'auth-or-mcp-key',
      mcpLimit: 'data',
      query: DateRange,
      responses: { 200: { description: 'Department performance', schema: DepartmentPerformance }, 400: invalid },
    },
    async (req, res) => {
      res.json(presentDepartmentPerformance(await analytics(req).departmentPerformance(req.input.query)));
    },
  );

  return api.router;
}
