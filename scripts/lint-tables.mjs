// Each table belongs to one module (docs/ARCHITECTURE.md, "Boundaries"), and so do its columns. In a file
// outside a table's owner (OWNERS), `npm run lint` fails on each of these, listed as file:line:
//
// 1. A statement that names the table: "items (owned by src/modules/items/)". A table is seen where SQL
//    names it: a knex call (db('t'), trx('t'), .from('t'), .join('t'), ...), sql.raw('t') and
//    sql.ident('t'), and raw SQL after FROM, JOIN, INTO, UPDATE, TABLE, USING or TRUNCATE (upper case,
//    as this code writes SQL), comments left out. A table name that is also a word (items, notes, sales,
//    settings) is never matched outside those places.
// 2. A column named through an alias of the table: "i.name (alias of items, owned by src/modules/items/)".
//    A file binds an alias to another module's table where it names the table with one ('items as i',
//    'items i', FROM items i: a violation of 1 too), or where it passes a string literal as the alias to
//    a function it imports from the owner's files: the argument of a parameter named `alias` (or
//    `...Alias`), or the `alias` property of an options object (itemsAs('i'), userRefColumns('u', 'creator_'),
//    joinUserRef(query, { alias: 'u', ... })). Then alias.column and alias.* in any string or template
//    literal of the file, and sql.ident('alias', 'column'), are violations. The whole file is the
//    scope, since a fragment written in one statement is often used in another; but where the file
//    also gives the alias to a table of its own (FROM stocktake_counts c), only the statements that
//    bind it to the other module's table are. (A CTE or a subquery of the other module's rows is no
//    table of the file's own: its columns are still the other module's.) The caller reads the
//    owner's columns through the owner's fragments, which take the alias and name the columns
//    themselves, or through its functions. A read model (a fragment that names no table before the
//    alias, such as (SELECT id AS category_id, ... FROM categories) c) gives its rows the names after
//    its AS (in the fragment and the file's constants it uses): alias.<one of those> is no violation.
// 3. An import of a table handle: "itemsAs imports the table handle of items (owned by ...)". No table
//    handle leaves its module. A handle is an exported function that returns nothing but a table's name
//    with the caller's alias (sql`items ${sql.ident(alias)}`, `items as ${alias}`), whatever its name.
// 4. A table named at run time (FROM ??, FROM ${sql.ident(name)}) in a file outside every owner: the
//    lint cannot tell which table it is, so only an owner's file may do it, on its own tables.
//
// A reviewed exception is an entry of EXEMPT.
//   node scripts/lint-tables.mjs   lists the violations in src/, exits 1 on any
import { readdir, readFile } from 'node:fs/promises';
import { join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Each module folder and the tables it owns. */
export const OWNERS = {
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
  'src/modules/safety-data-sheets/': ['safety_data_sheets'],
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
  'src/modules/stock-movements/': ['stock_movements', 'stock_movement_lots'],
  'src/modules/lots/': ['stock_lots'],
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

/** The module folder that owns `file`'s tables, if any. */
const ownerFolderOf = (file) => Object.keys(OWNERS).find((owner) => file.startsWith(owner));

/** Whether `file` may name `table`: it lies in the table's owner, or EXEMPT lets it. */
const mayName = (file, table) => file.startsWith(ownerOf.get(table)) || EXEMPT[file]?.tables.includes(table);

/** Rule 1: each statement of `file` that names another module's table. */
function tableNames(file, source) {
  const text = withoutComments(source);
  const found = new Map();
  for (const pattern of PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const table = match[1];
      if (mayName(file, table)) continue;
      const line = text.slice(0, match.index + match[0].indexOf(table)).split('\n').length;
      found.set(`${line}:${table}`, { file, line, message: `${table} (owned by ${ownerOf.get(table)})` });
    }
  }
  return found.values();
}

/** Words that follow a table in SQL and so are no alias of it (FROM items WHERE ...). */
const SQL_WORDS = new Set(
  `as on using where set join left right inner outer full cross natural lateral group order limit offset
   returning union except intersect window having values default select from with for and or not`.split(/\s+/),
);
/** A knex table string with an alias: 'items as i', 'items i'. */
const KNEX_TABLE_ALIAS = /^\s*([A-Za-z_]\w*)\s+(?:[Aa][Ss]\s+)?([A-Za-z_]\w*)\s*$/;
/** SQL text that names a table with an alias: FROM items i, JOIN items AS i, UPDATE items i. */
const SQL_TABLE_ALIAS =
  /\b(?:FROM|JOIN|UPDATE|USING|INTO)\s+(?:ONLY\s+)?(?:public\.)?"?([A-Za-z_]\w*)"?\s+(?:AS\s+)?([A-Za-z_]\w*)/g;
/** A table named at run time by knex's identifier placeholder: FROM ?? */
const PLACEHOLDER_TABLE = /\b(FROM|JOIN|INTO|UPDATE|TABLE|USING|TRUNCATE)\s+(?:ONLY\s+)?\?\?/g;
/** SQL text that ends where a table's name goes: `... FROM ${...}`. */
const BEFORE_TABLE = /\b(FROM|JOIN|INTO|UPDATE|TABLE|USING|TRUNCATE)\s+(?:ONLY\s+)?$/;
/** A parameter that takes the caller's alias for the owner's table. */
const ALIAS_PARAMETER = /^alias$|Alias$/;

const isExported = (statement) => statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
const isLiteral = (node) =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node);
const isStringLiteral = (node) => ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node);
/** `sql.<method>`, the sql template's helper (src/db/sql.ts). */
const isSqlHelper = (node, method) =>
  ts.isPropertyAccessExpression(node) &&
  ts.isIdentifier(node.expression) &&
  node.expression.text === 'sql' &&
  node.name.text === method;

/** The statement `node` is part of: its ancestor that stands in a block or at the top of the file. */
function statementOf(node) {
  const inList = (parent) =>
    ts.isSourceFile(parent) || ts.isBlock(parent) || ts.isModuleBlock(parent) || ts.isCaseOrDefaultClause(parent);
  while (node.parent && !inList(node.parent)) node = node.parent;
  return node;
}

/** Calls `onNode` on `node` and its descendants, skipping the children of a node for which it returns false. */
function visit(node, onNode) {
  if (onNode(node) !== false) ts.forEachChild(node, (child) => visit(child, onNode));
}

/**
 * Which argument of a function takes the alias: { index, local } of a parameter, or { index, property,
 * local } of an options object's; `local` is the alias's name inside the function.
 */
function aliasArgument(parameters) {
  for (const [index, { name }] of parameters.entries()) {
    if (ts.isIdentifier(name) && ALIAS_PARAMETER.test(name.text)) return { index, local: name.text };
    if (ts.isObjectBindingPattern(name)) {
      const element = name.elements.find((e) => ALIAS_PARAMETER.test((e.propertyName ?? e.name).text));
      if (element) return { index, property: (element.propertyName ?? element.name).text, local: element.name.text };
    }
  }
  return undefined;
}

/** The expression a function returns, when it is one: an arrow's expression or a lone return statement's. */
function returned(fn) {
  if (!ts.isBlock(fn.body)) return fn.body;
  const [statement, ...more] = fn.body.statements;
  return more.length === 0 && statement && ts.isReturnStatement(statement) ? statement.expression : undefined;
}

/** The SQL text of a returned template: sql`...` and sql.raw(`...`) give their template. */
function template(expression) {
  if (!expression) return undefined;
  if (ts.isParenthesizedExpression(expression) || ts.isAsExpression(expression)) return template(expression.expression);
  if (ts.isTaggedTemplateExpression(expression)) return template(expression.template);
  if (ts.isCallExpression(expression) && isSqlHelper(expression.expression, 'raw')) {
    return template(expression.arguments[0]);
  }
  return ts.isTemplateExpression(expression) ? expression : undefined;
}

/** Whether `expression` puts the alias `local` into SQL text: `${alias}` or `${sql.ident(alias)}`. */
function isAlias(expression, local) {
  const [argument, ...more] =
    ts.isCallExpression(expression) && isSqlHelper(expression.expression, 'ident')
      ? expression.arguments
      : [expression];
  return more.length === 0 && ts.isIdentifier(argument) && argument.text === local;
}

/**
 * The functions that a file of the module owning `tables` exports and that take an alias, by name:
 * which argument takes it, the table it names with the alias (`users ${sql.ident(alias)} ON ...`,
 * `users as ${alias}`) if it does, and whether the function is that table's handle (rule 3): it returns
 * nothing else.
 */
function exportedFunctions(sourceFile, tables) {
  const tableThenAlias = `(${tables.join('|')})(?:\\s+[Aa][Ss])?\\s+$`;
  const tableBeforeAlias = new RegExp(`(?<![\\w.])${tableThenAlias}`);
  const onlyTable = new RegExp(`^\\s*${tableThenAlias}`);
  const functions = new Map();
  for (const statement of sourceFile.statements.filter(isExported)) {
    const declared = ts.isFunctionDeclaration(statement)
      ? [[statement.name?.text, statement]]
      : ts.isVariableStatement(statement)
        ? statement.declarationList.declarations
            .filter(
              (d) => d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer)),
            )
            .map((d) => [d.name.text, d.initializer])
        : [];
    for (const [name, fn] of declared) {
      const alias = aliasArgument(fn.parameters);
      if (!alias || !fn.body) continue;
      let table;
      visit(fn.body, (node) => {
        if (table || !ts.isTemplateExpression(node)) return;
        node.templateSpans.forEach(({ expression }, index) => {
          const before = index === 0 ? node.head.text : node.templateSpans[index - 1].literal.text;
          if (isAlias(expression, alias.local)) table ??= tableBeforeAlias.exec(before)?.[1];
        });
      });
      const sql = template(returned(fn));
      const handle =
        table !== undefined &&
        sql?.templateSpans.length === 1 &&
        onlyTable.test(sql.head.text) &&
        isAlias(sql.templateSpans[0].expression, alias.local) &&
        sql.templateSpans[0].literal.text.trim() === '';
      functions.set(name, {
        aliasArgument: alias,
        table,
        handleOf: handle ? table : undefined,
        columns: table === undefined ? namedColumns(sourceFile, fn.body) : new Set(),
      });
    }
  }
  return functions;
}

/**
 * The column names a read model gives its rows (every `AS name` in the function's SQL, and in the
 * file's top-level constants it uses, followed through constants that use others): the names a
 * caller may read through the alias it passes.
 */
function namedColumns(sourceFile, body) {
  const constants = new Map(
    sourceFile.statements
      .filter(ts.isVariableStatement)
      .flatMap((statement) => statement.declarationList.declarations)
      .filter((d) => ts.isIdentifier(d.name) && d.initializer)
      .map((d) => [d.name.text, d.initializer]),
  );
  const columns = new Set();
  const seen = new Set();
  const collect = (node) => {
    for (const [, name] of node.getText(sourceFile).matchAll(/\bAS\s+"?([A-Za-z_]\w*)/g)) columns.add(name);
    visit(node, (inner) => {
      if (!ts.isIdentifier(inner) || seen.has(inner.text) || !constants.has(inner.text)) return;
      seen.add(inner.text);
      collect(constants.get(inner.text));
    });
  };
  collect(body);
  return columns;
}

/**
 * What `file` imports from another owner's files: its named imports by local name, and its namespace
 * imports (import * as x) by name, each with the file it comes from and that file's owner.
 */
function foreignImports(file, sourceFile, files) {
  const named = new Map();
  const namespaces = new Map();
  for (const statement of sourceFile.statements) {
    if (!ts.isImportDeclaration(statement) || statement.importClause?.isTypeOnly) continue;
    const specifier = statement.moduleSpecifier.text;
    if (!specifier.startsWith('.')) continue;
    const base = posix.join(posix.dirname(file), specifier);
    const from = [`${base}.ts`, base.replace(/\.js$/, '.ts'), base, `${base}/index.ts`].find((f) => files.has(f));
    const owner = from && ownerFolderOf(from);
    if (!owner || owner === ownerFolderOf(file)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) namespaces.set(bindings.name.text, { from, owner });
    for (const element of bindings && ts.isNamedImports(bindings) ? bindings.elements : []) {
      if (element.isTypeOnly) continue;
      const name = (element.propertyName ?? element.name).text;
      named.set(element.name.text, { name, from, owner, position: element.getStart(sourceFile) });
    }
  }
  return { named, namespaces };
}

/** Rules 2, 3 and 4 in `file`; `exportsOf(file)` gives exportedFunctions of an owner's file. */
function ownersColumns(file, sourceFile, files, exportsOf) {
  const violations = [];
  const at = (position, message) =>
    violations.push({ file, line: sourceFile.getLineAndCharacterOfPosition(position).line + 1, message });
  const inOwner = ownerFolderOf(file) !== undefined;
  const { named, namespaces } = foreignImports(file, sourceFile, files);
  const importedAs = (callee) => {
    if (ts.isIdentifier(callee)) return named.get(callee.text);
    if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
      const namespace = namespaces.get(callee.expression.text);
      return namespace && { ...namespace, name: callee.name.text, position: callee.getStart(sourceFile) };
    }
    return undefined;
  };
  const noHandle = (imported) => {
    const table = exportsOf(imported.from).get(imported.name)?.handleOf;
    if (table && !mayName(file, table)) {
      at(
        imported.position,
        `${imported.name} imports the table handle of ${table} (owned by ${imported.owner}): no table handle leaves its module`,
      );
    }
  };
  for (const imported of named.values()) noHandle(imported);

  // alias -> { table, owner } or, from a fragment that names no table, { via, owner }
  const aliases = new Map();
  // alias -> the statements that bind it to another module's table
  const bindingStatements = new Map();
  // the aliases that the file also gives a table it may name
  const ownAliases = new Set();
  // alias -> the columns the read models it is bound to name, which the file may read through it
  const readModelColumns = new Map();
  const bind = (alias, binding, node, columns = new Set()) => {
    if (SQL_WORDS.has(alias.toLowerCase())) return;
    readModelColumns.set(alias, new Set([...(readModelColumns.get(alias) ?? []), ...columns]));
    if (!aliases.get(alias)?.table) aliases.set(alias, binding);
    bindingStatements.set(alias, [...(bindingStatements.get(alias) ?? []), statementOf(node)]);
  };
  const bindTable = (table, alias, node) => {
    if (!ownerOf.has(table) || SQL_WORDS.has(alias.toLowerCase())) return;
    if (mayName(file, table)) ownAliases.add(alias);
    else bind(alias, { table, owner: ownerOf.get(table) }, node);
  };
  const literals = [];
  const identifiers = [];
  visit(sourceFile, (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return false;
    if (isLiteral(node)) {
      literals.push(node);
      const knexTable = isStringLiteral(node) && KNEX_TABLE_ALIAS.exec(node.text);
      if (knexTable) bindTable(knexTable[1], knexTable[2], node);
      for (const [, table, alias] of node.text.matchAll(SQL_TABLE_ALIAS)) bindTable(table, alias, node);
      if (!inOwner) {
        for (const match of node.getText(sourceFile).matchAll(PLACEHOLDER_TABLE)) {
          at(node.getStart(sourceFile) + match.index, `${match[1]} ?? names a table at run time outside its owner`);
        }
      }
    } else if (ts.isCallExpression(node)) {
      const imported = importedAs(node.expression);
      const fn = imported && exportsOf(imported.from).get(imported.name);
      const argument = fn?.aliasArgument && node.arguments[fn.aliasArgument.index];
      const given = fn?.aliasArgument?.property
        ? argument &&
          ts.isObjectLiteralExpression(argument) &&
          argument.properties.find((p) => p.name?.text === fn.aliasArgument.property)?.initializer
        : argument;
      if (given && isStringLiteral(given) && !(fn.table && mayName(file, fn.table))) {
        bind(
          given.text,
          fn.table ? { table: fn.table, owner: imported.owner } : { via: imported.name, owner: imported.owner },
          node,
          fn.columns,
        );
      }
      if (
        isSqlHelper(node.expression, 'ident') &&
        node.arguments.length === 2 &&
        node.arguments.every(isStringLiteral)
      ) {
        identifiers.push(node);
      }
    } else if (ts.isTemplateExpression(node) && !inOwner) {
      node.templateSpans.forEach(({ expression }, index) => {
        const before = index === 0 ? node.head.text : node.templateSpans[index - 1].literal.text;
        const keyword = BEFORE_TABLE.exec(before)?.[1];
        const namedAtRunTime =
          ts.isCallExpression(expression) &&
          (isSqlHelper(expression.expression, 'ident') || isSqlHelper(expression.expression, 'raw')) &&
          !expression.arguments.every(isStringLiteral);
        if (keyword && namedAtRunTime) {
          at(
            expression.getStart(sourceFile),
            `${keyword} ${expression.getText(sourceFile)} names a table at run time outside its owner`,
          );
        }
      });
    } else if (
      ts.isPropertyAccessExpression(node) &&
      ts.isIdentifier(node.expression) &&
      namespaces.has(node.expression.text)
    ) {
      noHandle(importedAs(node));
    }
  });

  if (aliases.size === 0) return violations;
  const column = (alias, name) => {
    const { table, via, owner } = aliases.get(alias);
    return `${alias}.${name} (${table ? `alias of ${table}` : `alias from ${via}`}, owned by ${owner})`;
  };
  // an alias the file gives one of its own tables too is another module's only in the statements binding it so
  const throughForeignAlias = (alias, position) =>
    !ownAliases.has(alias) || bindingStatements.get(alias).some((s) => s.pos <= position && position < s.end);
  const isReadModelColumn = (alias, name) => !aliases.get(alias).table && readModelColumns.get(alias).has(name);
  const reference = new RegExp(`(?<![\\w$.])(${[...aliases.keys()].join('|')})\\.(\\*|[A-Za-z_]\\w*)`, 'g');
  for (const node of literals) {
    for (const match of node.getText(sourceFile).matchAll(reference)) {
      const position = node.getStart(sourceFile) + match.index;
      if (throughForeignAlias(match[1], position) && !isReadModelColumn(match[1], match[2])) {
        at(position, column(match[1], match[2]));
      }
    }
  }
  for (const call of identifiers) {
    const [alias, name] = call.arguments.map((a) => a.text);
    const position = call.getStart(sourceFile);
    if (aliases.has(alias) && throughForeignAlias(alias, position) && !isReadModelColumn(alias, name)) {
      at(position, column(alias, name));
    }
  }
  return violations;
}

/**
 * The violations in the src/ folder of `root` (the tests give fixture trees), sorted, each as
 * "file:line: what" with file relative to root.
 */
export async function lintTables(root = '.') {
  const paths = await sourceFiles(join(root, 'src'));
  const files = new Set(paths.map((path) => relative(root, path).split(sep).join('/')).sort());
  const texts = new Map();
  await Promise.all([...files].map(async (file) => texts.set(file, await readFile(join(root, file), 'utf8'))));
  const parsed = new Map();
  const parse = (file) => {
    if (!parsed.has(file)) parsed.set(file, ts.createSourceFile(file, texts.get(file), ts.ScriptTarget.Latest, true));
    return parsed.get(file);
  };
  const exported = new Map();
  const exportsOf = (file) => {
    if (!exported.has(file)) exported.set(file, exportedFunctions(parse(file), OWNERS[ownerFolderOf(file)]));
    return exported.get(file);
  };
  const violations = [...files].flatMap((file) => [
    ...tableNames(file, texts.get(file)),
    ...ownersColumns(file, parse(file), files, exportsOf),
  ]);
  violations.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return [...new Set(violations.map((v) => `${v.file}:${v.line}: ${v.message}`))];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const violations = await lintTables();
  for (const violation of violations) console.log(violation);
  if (violations.length > 0) {
    console.log(`\n${violations.length} references to another module's tables or columns (scripts/lint-tables.mjs).`);
    process.exitCode = 1;
  }
}
