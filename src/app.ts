import express, { type Express, type Router } from 'express';
import helmet from 'helmet';
import { Passport } from 'passport';
import type { Knex } from 'knex';
import type { Pool } from 'pg';
import type { Config } from './config';
import type { Logger } from './logger';
import { bearerAuth } from './auth/bearer';
import { refuseMcpKey, requireStaff } from './auth/guards';
import { MANAGER_UNDER_STRICT, requireUnderProfile } from './auth/access-profile';
import { crossSiteGuard, requireJsonBody } from './auth/csrf';
import { configurePassportSessions, sessionMiddleware } from './auth/session';
import { passwordChangeGate } from './auth/password-change-gate';
import { authRoutes } from './auth/auth.routes';
import { oidcRoutes } from './auth/oidc';
import { apiNotFound, errorMiddleware } from './http/error-middleware';
import { requestLogger } from './http/request-log';
import { createDocsRegistry, generateOpenApiDocument } from './http/openapi';
import { describedRegistry, routeTable, type DeclaredRoute } from './http/api-router';
import { APP_VERSION } from './lib/version';
import { createMaintenance, type Maintenance } from './db/maintenance';
import { primaryOnly, type ReadRouter } from './db/replicas';
import { createLifecycle, type Lifecycle } from './http/lifecycle';
import { jsonBody } from './http/json-body';
import { registerWebhookPresenters } from './event-presenters';
import type { Deps } from './deps';
import { healthRoutes } from './modules/health/health.routes';
import { usersRoutes } from './modules/users/users.routes';
import { settingsRoutes } from './modules/settings/settings.routes';
import { suppliersRoutes } from './modules/suppliers/suppliers.routes';
import { sourcesRoutes } from './modules/sources/sources.routes';
import { itemCountInCategory } from './modules/items/items.queries';
import { itemsRoutes } from './modules/items/items.routes';
import { categoriesRoutes } from './modules/categories/categories.routes';
import { labelsRoutes } from './modules/labels/labels.routes';
import { stockMovementsRoutes } from './modules/stock-movements/stock-movements.routes';
import { lotControlRoutes } from './modules/lot-control/lot-control.routes';
import { vatRatesRoutes } from './modules/vat-rates/vat-rates.routes';
import { hazardsRoutes } from './modules/hazards/hazards.routes';
import { hazardRegisterRoutes } from './modules/hazard-register/hazard-register.routes';
import { notesRoutes } from './modules/notes/notes.routes';
import { dashboardRoutes } from './modules/dashboard/dashboard.routes';
import { notificationsRoutes } from './modules/notifications/notifications.routes';
import { emailsRoutes } from './modules/emails/emails.routes';
import { systemAlertsRoutes } from './modules/system-alerts/system-alerts.routes';
import { ordersRoutes } from './modules/orders/orders.routes';
import { ordersService } from './modules/orders/orders.service';
import { catalogueRoutes } from './modules/catalogue/catalogue.routes';
import { requestsRoutes } from './modules/requests/requests.routes';
import { stocktakesRoutes } from './modules/stocktakes/stocktakes.routes';
import { replenishmentRoutes } from './modules/replenishment/replenishment.routes';
import { invoicesRoutes } from './modules/invoices/invoices.routes';
import { safetyDataSheetsRoutes } from './modules/safety-data-sheets/safety-data-sheets.routes';
import { chargeCodesRoutes } from './modules/chargecodes/chargecodes.routes';
import { salesOnChargeCode } from './modules/sales/sales.queries';
import { salesRoutes } from './modules/sales/sales.routes';
import { financeRoutes } from './modules/finance/finance.routes';
import { mcpAnalyticsRoutes } from './modules/mcp-analytics/mcp-analytics.routes';
import { mcpKeysRoutes } from './modules/mcp-keys/mcp-keys.routes';
import { mcpRunsRoutes } from './modules/mcp-runs/mcp-runs.routes';
import { mcpDataRoutes } from './modules/mcp-data/mcp-data.routes';
import { mcpServerRoutes } from './mcp/mcp-server.routes';
import { auditRoutes } from './modules/audit/audit.routes';
import { mcpLimiters } from './auth/mcp-limits';
import { backupsRoutes } from './modules/backups/backups.routes';
import { archivesRoutes } from './modules/archives/archives.routes';
import { deploymentNotificationsRoutes } from './modules/deployments/deployments.routes';
import { webhookRoutes } from './modules/deployments/webhooks.routes';
import { outboundWebhooksRoutes } from './modules/outbound-webhooks/outbound-webhooks.routes';
import { outboxRoutes } from './modules/outbox/outbox.routes';
import { configureViews } from './pages/page-render';
import { markPageRequests, pageRoutes } from './pages/pages';
import { composeOwners } from './owners';

export type AppOptions = {
  db: Knex;
  /** the session connection to the primary (DATABASE_DIRECT_URL); db by default */
  directDb?: Knex;
  /** DATABASE_DIRECT_URL (default DATABASE_URL): pg_dump and pg_restore connect there */
  databaseUrl: string;
  /** shared with the scheduler, which skips its jobs during a restore; one of its own by default */
  maintenance?: Maintenance;
  /** the read replicas (DATABASE_REPLICA_URLS); every read on db by default */
  reads?: ReadRouter;
  /** set by the shutdown: /api/health answers 503 from then on; one of its own by default */
  lifecycle?: Lifecycle;
  config: Config;
  logger: Logger;
  sessionSecret: string;
  /** pg pool of the session store; it has its own error listener */
  sessionPool: Pool;
};

/** The API modules, each mounted at /api and registering its own paths and docs. */
const API_MODULES: ((deps: Deps) => Router)[] = [
  authRoutes,
  oidcRoutes,
  usersRoutes,
  settingsRoutes,
  suppliersRoutes,
  sourcesRoutes,
  ordersRoutes,
  invoicesRoutes,
  (deps) => itemsRoutes(deps, ordersService(deps.db)),
  (deps) => categoriesRoutes(deps, itemCountInCategory),
  hazardsRoutes,
  hazardRegisterRoutes,
  labelsRoutes,
  safetyDataSheetsRoutes,
  stockMovementsRoutes,
  lotControlRoutes,
  vatRatesRoutes,
  notesRoutes,
  dashboardRoutes,
  notificationsRoutes,
  emailsRoutes,
  systemAlertsRoutes,
  (deps) => chargeCodesRoutes(deps, salesOnChargeCode),
  salesRoutes,
  financeRoutes,
  mcpKeysRoutes,
  mcpRunsRoutes,
  mcpDataRoutes,
  mcpAnalyticsRoutes,
  backupsRoutes,
  archivesRoutes,
  deploymentNotificationsRoutes,
  auditRoutes,
  replenishmentRoutes,
  stocktakesRoutes,
  catalogueRoutes,
  requestsRoutes,
  outboundWebhooksRoutes,
  outboxRoutes,
];

const ROUTE_TABLE = 'stores route table';

/** Every API route the app serves through an ApiRouter, with its declared access, MCP limit and docs (see routeTable). */
export function declaredRoutesOf(app: Express): readonly DeclaredRoute[] {
  return app.get(ROUTE_TABLE) as readonly DeclaredRoute[];
}

export function buildApp(opts: AppOptions): Express {
  const { db, config, logger } = opts;
  // the owners' functions reach the modules that ask them here, not by imports that would close cycles
  composeOwners();
  registerWebhookPresenters();
  const app = express();
  const docs = createDocsRegistry();
  const passport = new Passport();
  const maintenance = opts.maintenance ?? createMaintenance();
  const reads = opts.reads ?? primaryOnly(db);
  const deps: Deps = {
    db,
    directDb: opts.directDb ?? db,
    databaseUrl: opts.databaseUrl,
    maintenance,
    reads,
    config,
    logger,
    docs,
    passport,
    mcpLimiters: mcpLimiters(db),
  };

  app.set(ROUTE_TABLE, routeTable(docs));
  app.disable('x-powered-by');
  // X-Forwarded-* are believed only from the proxies TRUST_PROXY names (default: loopback)
  app.set('trust proxy', config.trustProxy);
  // HSTS and upgrade-insecure-requests over plain http would make browsers refuse the service (or
  // ask for an https that is not there), so only a PUBLIC_URL under https turns them on
  const https = config.publicUrl.startsWith('https://');
  app.use(
    helmet({
      strictTransportSecurity: https,
      contentSecurityPolicy: {
        directives: {
          upgradeInsecureRequests: https ? [] : null,
          // the camera's barcode reader where the browser has none: ZXing compiled to WebAssembly
          // (compiling WebAssembly, nothing more: no eval, no inline script)
          scriptSrc: ["'self'", "'wasm-unsafe-eval'"],
        },
      },
    }),
  );
  configureViews(app, config.env !== 'development');
  app.use(requestLogger(logger));
  app.use(
    healthRoutes(db, docs, opts.lifecycle ?? createLifecycle(), { reads, config, databaseUrl: opts.databaseUrl }),
  );
  app.use(markPageRequests);
  // a restore replaces every table, sessions included: nothing but /health and the assets runs meanwhile
  app.use(maintenance.gate);
  app.use('/api', webhookRoutes(deps));

  app.use(['/api', '/mcp'], requireJsonBody);
  app.use(['/api', '/mcp'], bearerAuth(db));
  configurePassportSessions(passport, db);
  const sessions = sessionMiddleware({
    config,
    secret: opts.sessionSecret,
    pool: opts.sessionPool,
    passport,
  });
  // A bearer token or MCP key request never touches the session store.
  app.use((req, res, next) => (req.authMethod ? next() : runAll(sessions, req, res, next)));
  app.use(passwordChangeGate);
  // read-your-writes: when replicas are configured, a signed-in person's successful write is remembered
  app.use(reads.recordWrites);
  app.use('/api', crossSiteGuard(config.publicUrl));
  // Bodies are read once the route's guard has let the caller in (ApiRouter: 1 MB of JSON, then the
  // NUL-character check), so a refused caller is answered before a byte is parsed. Bulk import takes up
  // to 10 MB, read here only for a caller its route admits (any member of staff, a manager under access.profile strict).
  app.use(
    '/api/items/bulk-import',
    refuseMcpKey,
    requireStaff,
    requireUnderProfile(db, MANAGER_UNDER_STRICT),
    jsonBody('10mb'),
  );

  for (const module of API_MODULES) app.use('/api', module(deps));
  app.use(mcpServerRoutes(deps));

  let openApiDocument: unknown;
  app.get('/api/docs', (_req, res) => {
    openApiDocument ??= generateOpenApiDocument(describedRegistry(docs), APP_VERSION);
    res.json(openApiDocument);
  });
  app.use('/api', apiNotFound);
  app.use(pageRoutes(deps));
  app.use(errorMiddleware(logger, config.env !== 'production'));
  return app;
}

function runAll(
  handlers: express.RequestHandler[],
  req: express.Request,
  res: express.Response,
  done: express.NextFunction,
) {
  const step = (index: number) => (err?: unknown) => {
    if (err || index === handlers.length) return done(err);
    handlers[index](req, res, step(index + 1));
  };
  step(0)();
}
