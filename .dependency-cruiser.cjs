// The module boundaries of docs/ARCHITECTURE.md ("Boundaries"), checked by `npm run lint`
// (scripts/boundaries.mjs runs dependency-cruiser with this file).

// What one module may take from another module beside its service, schemas and queries:
// role files that are another entry point of the owner, each named with why.
const PUBLIC_ROLE_FILES = [
  'audit/audit.actor.ts', // who acted: the Actor every audited write records
  'audit/audit.carry.ts', // the audit trail's carry across a restore, listed in backups' CARRIES
  'sales/sales.carry.ts', // the sale-number counters' carry across a restore, listed in backups' CARRIES
  'mcp-keys/mcp-keys.carry.ts', // deleted MCP keys stay deleted across a restore, listed in backups' CARRIES
  'outbound-webhooks/outbound-webhooks.carry.ts', // rotated webhook secrets keep their newest value across a restore (CARRIES)
  'users/users.carry.ts', // changed passwords and deactivations outlive a restore (CARRIES)
  'chargecodes/chargecodes.carry.ts', // changed charge-code PINs keep their newest value across a restore (CARRIES)
  'stock-movements/stock-movements.ledger.ts', // the one way to change stock
  'lots/lots.picking.ts', // the lot rules of a stock change: status, sellable, first-expiry-first-out
  'items/items.bulk.ts', // bulk edit and import of items
  'items/items.unknown-code.ts', // the refusal of a code no item answers to, which the pages word their own way
  'items/items.export.ts', // the items' CSV and XLSX export
  'items/items.policy.ts', // who manages items and sees inactive ones: the API's check and the items page's
  'sales/sales.figures.ts', // the one implementation of the sales figures
  'sales/sales.filters.ts', // the sales filter fragment (salesWhere), built by its owner
  'sales/sales.analytics.ts', // sales analytics (most sold, daily sales, stock check)
  'sales/sales.reports.ts', // sales reports and their CSV rows
  'sales/sales.policy.ts', // who marks a sale paid or unpaid: the API's guard and the page's buttons
  'invoices/invoices.matching.ts', // invoice lines matched to items
  'invoices/invoices.pdf.ts', // reading an uploaded invoice PDF (and checking any uploaded PDF: a safety data sheet), and its limits
  'orders/orders.receive.ts', // receiving an order into stock
  'orders/orders.import.ts', // importing an order from an invoice or a CSV
  'suppliers/suppliers.policy.ts', // who deletes a supplier: the API's guard and the page's buttons
  'orders/orders.policy.ts', // who may change an order and when it may be cancelled: the API's guard and service, and the page's buttons
  'finance/finance.batches.ts', // recharge batches
  'chargecodes/chargecodes.policy.ts', // the charge-code policy (settings) and its hold guard
  'chargecodes/chargecodes.validation.ts', // the checks a sale's charge code must pass
  'backups/backups.schedule.ts', // the backup schedule, run by the job and shown by the page
  'backups/backups.pg-tools.ts', // pg_dump and pg_restore as the backups run them (the MCP system check runs them too)
  'backups/backups.policy.ts', // who manages backups: the API's guard, the backups pages and the dashboard's warning
  'backups/backups.files.ts', // where the backup files live (the MCP system check looks at the folder)
  'invoices/invoices.parser.ts', // an invoice's text read into lines (an order imported from one)
  'sales/sales.charge-code-status.ts', // a charge code's spending and limits (its page and the MCP tool)
  'emails/emails.sender.ts', // the outbox's email sender (src/jobs/outbox-delivery.ts)
  'notifications/notifications.digest.ts', // the daily low-stock digest (src/jobs/scheduler.ts)
  'outbox/outbox.worker.ts', // the outbox's delivery worker, started with each channel's sender (src/jobs/outbox-delivery.ts)
  'outbound-webhooks/outbound-webhooks.sender.ts', // the outbox's webhook sender (src/jobs/outbox-delivery.ts)
].map((file) => `^src/modules/${file.replace(/[.]/g, '[.]')}$`);

const SERVICE_OR_SCHEMAS = '^src/modules/[^/]+/[^/]+[.](service|schemas)[.]ts$';
const QUERIES = '^src/modules/[^/]+/[^/]+[.]queries[.]ts$';
const PRESENTER = '^src/modules/[^/]+/[^/]+[.]present[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle: move the shared part to a leaf file, or pass a function in.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'foundations-below-features',
      comment: 'http/, db/ and lib/ serve everything, so they import no module, page, MCP server or job.',
      severity: 'error',
      from: { path: '^src/(http|db|lib)/' },
      to: { path: '^src/(modules|pages|mcp|jobs)/' },
    },
    {
      name: 'features-below-consumers',
      comment: 'auth/ and the modules are called by the pages and the MCP server, never the reverse.',
      severity: 'error',
      from: { path: '^src/(auth|modules)/' },
      to: { path: '^src/(pages|mcp)/' },
    },
    {
      name: 'module-present-via-presenters',
      comment:
        "Another module's presenter builds the shape it owns inside this module's answers (the user reference, an item's category): only a presenter or a routes file may call it.",
      severity: 'error',
      from: { path: '^src/(modules/([^/]+)|auth)/', pathNot: '[.](present|routes)[.]ts$' },
      to: { path: PRESENTER, pathNot: '^src/modules/$2/' },
    },
    {
      name: 'module-public-files-only',
      comment:
        'A module (or auth/, or a job) takes from another module only its service, schemas, queries, a public role file (.dependency-cruiser.cjs PUBLIC_ROLE_FILES), or in a presenter or routes file its presenters: never its routes or internals.',
      severity: 'error',
      from: { path: '^src/(modules/([^/]+)|auth|jobs)/' },
      to: {
        path: '^src/modules/',
        pathNot: ['^src/modules/$2/', SERVICE_OR_SCHEMAS, QUERIES, PRESENTER, ...PUBLIC_ROLE_FILES],
      },
    },
    {
      name: 'consumer-public-files-only',
      comment:
        'A page or the MCP server takes from a module only its service, schemas, presenters or a public role file: never its routes, queries or internals.',
      severity: 'error',
      from: { path: '^src/(pages|mcp)/' },
      // a record's type may come from where it is built
      to: {
        path: '^src/modules/',
        pathNot: [SERVICE_OR_SCHEMAS, PRESENTER, ...PUBLIC_ROLE_FILES],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'consumers-do-not-query',
      comment: 'A page or the MCP server reaches the database through services; it may name the Db type to hand it on.',
      severity: 'error',
      from: { path: '^src/(pages|mcp)/' },
      to: { path: '^src/db/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'pages-and-mcp-apart',
      comment: 'The pages and the MCP server are two consumers of the same services; neither imports the other.',
      severity: 'error',
      from: { path: '^src/pages/' },
      to: { path: '^src/mcp/' },
    },
    {
      name: 'mcp-and-pages-apart',
      comment: 'The pages and the MCP server are two consumers of the same services; neither imports the other.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/pages/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // type-only imports count: a cycle or a reach across a boundary through types is still one
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
