// Each table belongs to one module (docs/ARCHITECTURE.md, "Boundaries"): a statement that names a
// table in a file outside its owner fails `npm run lint`, listed as file:line: table (owner).
// A table is seen where SQL names it: a knex call (db('t'), trx('t'), .from('t'), .join('t'), ...),
// sql.raw('t') and sql.ident('t'), and raw SQL after FROM, JOIN, INTO, UPDATE, TABLE, USING or
// TRUNCATE (upper case, as this code writes SQL), comments left out. A table name that is also a
// word (items, notes, sales, settings) is never matched outside those places.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Each module folder and the tables it owns. */
const OWNERS = {
  'src/auth/': ['sessions', 'api_tokens', 'failed_sign_ins', 'rate_limits'],
  'src/modules/users/': ['users', 'user_permissions'],
  'src/modules/items/': [
    'items',
    'item_counts',
    'item_stock_figures',
    'item_count_days',
    'item_search_generation',
    'item_barcodes',
  ],
  'src/modules/notifications/': ['low_stock_acknowledgements'],
  'src/modules/categories/': ['categories'],
  'src/modules/vat-rates/': ['vat_rates'],
  'src/modules/suppliers/': ['suppliers'],
  'src/modules/sources/': ['item_sources'],
  'src/modules/orders/': ['orders', 'order_items'],
  'src/modules/invoices/': ['order_invoices'],
  'src/modules/sales/': [
    'sales',
    'sale_items',
    'sale_refund_lines',
    'sales_daily_totals',
    'sale_idempotency_keys',
    'sale_number_counters',
    'quotes',
    'quote_items',
  ],
  'src/modules/chargecodes/': ['charge_codes', 'charge_code_authorised_users', 'charge_code_exclusions'],
  'src/modules/stock-movements/': ['stock_movements'],
  'src/modules/finance/': ['recharge_batches', 'recharge_batch_entries'],
  'src/modules/notes/': ['notes'],
  'src/modules/archives/': ['archives', 'archive_records'],
  'src/modules/audit/': ['audit_log'],
  'src/modules/backups/': ['backup_runs', 'backup_schedule'],
  'src/modules/system-alerts/': ['ledger_checks'],
  'src/modules/settings/': ['settings'],
  'src/modules/deployments/': ['deployment_notifications'],
  'src/modules/mcp-keys/': ['mcp_api_keys'],
  'src/modules/mcp-runs/': ['mcp_test_runs'],
  'src/modules/stocktakes/': ['stocktakes', 'stocktake_lines', 'stocktake_counts'],
  'src/modules/requests/': ['stock_requests', 'stock_request_items', 'stock_request_history'],
  'src/modules/catalogue/': ['request_baskets'],
  'src/modules/outbox/': ['outbox_messages'],
  'src/modules/outbound-webhooks/': ['outbound_webhooks'],
  'src/modules/emails/': ['email_preferences', 'email_runs'],
};

/**
 * Files that may name another module's tables, each a reviewed decision with its reason:
 * `'src/x.ts': { tables: ['t'], why: '...' }`. None today: the whole-database backup and restore
 * name no table (pg_dump, pg_restore, and a lock over pg_tables), and the carries name their own.
 */
const EXEMPT = {};

const ownerOf = new Map(Object.entries(OWNERS).flatMap(([owner, tables]) => tables.map((t) => [t, owner])));
const TABLE = `(${[...ownerOf.keys()].sort((a, b) => b.length - a.length).join('|')})`;
const NAME_END = `(?=\\s+as\\s|\\s+AS\\s|['"\`])`;
const PATTERNS = [
  // knex: db('items as i'), trx<Row>('items'), this.db('items')
  new RegExp(`(?<![\\w$])(?:db|trx|knex|tx)\\s*(?:<[^>()]*>)?\\(\\s*['"\`]${TABLE}${NAME_END}`, 'g'),
  // knex: .from('items'), .join('items as i', ...), .into('items'), .table('items')
  new RegExp(
    `\\.(?:from|into|table|join|innerJoin|leftJoin|leftOuterJoin|rightJoin|rightOuterJoin|fullOuterJoin|outerJoin|crossJoin)\\s*(?:<[^>()]*>)?\\(\\s*['"\`]${TABLE}${NAME_END}`,
    'g',
  ),
  // the sql template's raw text and identifiers: sql.raw('items'), sql.ident('items')
  new RegExp(`\\bsql\\.(?:raw|ident)\\(\\s*['"\`]${TABLE}\\b`, 'g'),
  // raw SQL: FROM items i, JOIN items, INSERT INTO items, UPDATE items, DELETE FROM items, ...
  new RegExp(
    `\\b(?:FROM|JOIN|INTO|UPDATE|TABLE|USING|TRUNCATE)\\s+(?:ONLY\\s+)?(?:public\\.)?"?${TABLE}"?(?![\\w(.])`,
    'g',
  ),
];

/** The text with its comments blanked out (line breaks kept), so a match's line is the source's. */
function withoutComments(text) {
  let out = '';
  const templates = []; // brace depth of each ${ } open inside a template literal
  let i = 0;
  const copyQuoted = (quote) => {
    const start = i++;
    while (i < text.length && text[i] !== quote && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
    out += text.slice(start, ++i);
  };
  const copyTemplate = () => {
    // from just after a ` or a closing } of ${ }, up to the closing ` or the next ${
    const start = i;
    while (i < text.length && text[i] !== '`' && !(text[i] === '$' && text[i + 1] === '{')) {
      i += text[i] === '\\' ? 2 : 1;
    }
    if (text[i] === '`') {
      out += text.slice(start, ++i);
    } else {
      out += text.slice(start, (i += 2));
      templates.push(0);
    }
  };
  let previous = ''; // the last code character that is not a space: tells a regex from a division
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
      const close = text[i + 1] === '/' ? '\n' : '*/';
      const found = text.indexOf(close, i + 2);
      const stop = found < 0 ? text.length : close === '\n' ? found : found + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === "'" || c === '"') {
      copyQuoted(c);
      previous = c;
    } else if (c === '`') {
      out += c;
      i++;
      copyTemplate();
      previous = '`';
    } else if (c === '/' && (previous === '' || '(,=:[!&|?{};+-*%<>~^'.includes(previous))) {
      const start = i++;
      let inClass = false;
      while (i < text.length && text[i] !== '\n' && (inClass || text[i] !== '/')) {
        if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i += text[i] === '\\' ? 2 : 1;
      }
      out += text.slice(start, ++i);
      previous = '/';
    } else if (templates.length > 0 && c === '}' && templates.at(-1) === 0) {
      templates.pop();
      out += c;
      i++;
      copyTemplate();
      previous = '`';
    } else {
      if (templates.length > 0 && c === '{') templates[templates.length - 1]++;
      if (templates.length > 0 && c === '}') templates[templates.length - 1]--;
      if (!/\s/.test(c)) previous = /[\w$]/.test(c) ? 'a' : c;
      out += c;
      i++;
    }
  }
  return out;
}

async function sourceFiles(dir) {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return sourceFiles(path);
      return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
    }),
  );
  return nested.flat();
}

const violations = [];
for (const file of (await sourceFiles('src')).sort()) {
  const text = withoutComments(await readFile(file, 'utf8'));
  const seen = new Set();
  for (const pattern of PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const table = match[1];
      const owner = ownerOf.get(table);
      if (file.startsWith(owner) || EXEMPT[file]?.tables.includes(table)) continue;
      const line = text.slice(0, match.index + match[0].indexOf(table)).split('\n').length;
      const key = `${line}:${table}`;
      if (seen.has(key)) continue;
      seen.add(key);
      violations.push({ file, line, table, owner });
    }
  }
}

violations.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
for (const v of violations) console.log(`${v.file}:${v.line}: ${v.table} (owned by ${v.owner})`);
if (violations.length > 0) {
  console.log(`\n${violations.length} statements name another module's table (scripts/lint-tables.mjs).`);
  process.exitCode = 1;
}
