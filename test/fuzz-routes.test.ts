import { createHash } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredRoutesOf } from '../src/app';
import type { Access, DeclaredRoute } from '../src/http/api-router';
import { isProfileAccess } from '../src/auth/access-profile';
import { tokensService } from '../src/auth/tokens.service';
import { SYSTEM_ACTOR } from '../src/modules/audit/audit.actor';
import { testApp, type TestApp } from './helpers/app';
import { buildItem, buildUser } from './helpers/factories';
import { buildItemSource, buildOrder, buildSupplier } from './helpers/purchasing-factories';
import { buildChargeCode } from './helpers/sales-factories';
import { buildMcpKey } from './helpers/mcp-factories';

/**
 * Every operation of the OpenAPI document, called with bodies, query strings and path parameters
 * made from its documented schemas and from their violations (wrong types, missing fields, huge,
 * negative and fractional numbers, 100,000-character strings, NUL and control characters, deep
 * JSON, unicode). Whatever comes in, the answer is never a 5xx, its status is one the document
 * lists for the operation, and a JSON answer matches the schema documented for that status.
 *
 * Seeded: FUZZ_SEED (default below) and the operation's key give each operation its own seed, so
 * FUZZ_ONLY='POST /api/sales' FUZZ_SEED=<seed> replays one operation's requests. FUZZ_RUNS sets the
 * requests per operation (default 15, some 2,500 in all, within npm test's ten minutes; FUZZ_RUNS=200 digs deeper). A failure prints the seed, the
 * fast-check path and the shrunk request.
 */

const BASE_SEED = Number(process.env.FUZZ_SEED ?? 16_2026);
const RUNS = Number(process.env.FUZZ_RUNS ?? 15);
const ONLY = process.env.FUZZ_ONLY;
/** Shrinking a failure re-sends requests; it stops after this long per operation and reports the smallest failure so far. */
const SHRINK_MS = Number(process.env.FUZZ_SHRINK_MS ?? 5_000);

/** Operations not fuzzed, or not with valid input, and why. */
const NOT_FUZZED: Record<string, string> = {
  'POST /api/backups':
    'each call runs pg_dump over the whole database (test/backups.test.ts covers it); it takes no input to fuzz',
};
/** Operations sent only input their own schema refuses: a valid request starts work that outlives the test. */
const INVALID_ONLY: Record<string, string> = {
  'POST /api/mcp/test': 'a valid request starts a test run of the vitest suites in a child process',
};

type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  nullable?: boolean;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean | number;
  exclusiveMaximum?: boolean | number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
};
type Parameter = { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema?: Schema };
type Operation = {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
  security?: Record<string, unknown>[];
};
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** How the body goes out: JSON mostly; sometimes cut short (malformed JSON), nested 3,000 deep instead, as a form, or as plain text. */
type Encoding = 'json' | 'truncated-json' | 'deep-json' | 'form' | 'text';
type FuzzRequest = {
  path: Record<string, string>;
  query: [string, string][];
  body?: unknown;
  encoding: Encoding;
  credential: Credential;
};
/** Who sends it: an admin's or a plain user's bearer token, the MCP key, or nobody; only callers the route admits. */
type Credential = 'admin' | 'user' | 'mcp' | 'none';

let t: TestApp;
let doc: Doc;
let adminId: string;
let userId: string;
let token = '';
let userToken = '';
let mcpKey = { id: 0, key: '' };
let ajv: Ajv;

beforeAll(async () => {
  t = await testApp({ WEBHOOK_SECRET: 'fuzz-webhook-secret' });
  adminId = (await buildUser(t.db, { role: 'admin' })).id;
  userId = (await buildUser(t.db, { role: 'user' })).id;
  doc = (await t.request.get('/api/docs').expect(200)).body as Doc;
  ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  (addFormatsModule as unknown as (a: Ajv) => void)(ajv);
  await credentials();
  await seedRows();
  ajv.addSchema({
    $id: 'doc',
    components: {
      schemas: Object.fromEntries(Object.entries(doc.components.schemas).map(([k, v]) => [k, toJsonSchema(v)])),
    },
  });
});
afterAll(() => t?.close());

/** A live bearer token of the user: the one given, or a new one when a fuzzed request revoked it (DELETE /api/auth/tokens/{id} with a lucky id). */
async function liveToken(owner: string, current: string): Promise<string> {
  const live = await t
    .db('api_tokens')
    .where({ user_id: owner })
    .andWhere('expires_at', '>', t.db.fn.now())
    .first('id');
  if (current && live) return current;
  return (await tokensService(t.db).create(owner, 'fuzz', 30, { ...SYSTEM_ACTOR, userId: owner })).token;
}

/**
 * The fuzzer's admin and user as they started (a fuzzed request may have named their id: demoted,
 * deactivated or deleted them), and their bearer tokens and the MCP key, made again when revoked.
 */
async function credentials() {
  for (const [id, role] of [
    [adminId, 'admin'],
    [userId, 'user'],
  ] as const) {
    const kept = await t.db('users').where({ id }).update({ role, is_active: true });
    if (kept === 0) {
      const fresh = (await buildUser(t.db, { role })).id;
      if (role === 'admin') [adminId, token, mcpKey] = [fresh, '', { id: 0, key: '' }];
      else [userId, userToken] = [fresh, ''];
    }
  }
  token = await liveToken(adminId, token);
  userToken = await liveToken(userId, userToken);
  const key = mcpKey.id ? await t.db('mcp_api_keys').where({ id: mcpKey.id }).first('id') : undefined;
  if (!key) mcpKey = await buildMcpKey(t.db, { scopes: ['read', 'write'], createdBy: adminId });
  // the MCP allowances (100 data requests a minute) would otherwise stop the fuzzing after a few runs
  await t.db('rate_limits').delete();
}

/** OpenAPI 3.0 to the JSON Schema Ajv reads: boolean exclusive bounds become numbers, refs point into the 'doc' schema. */
function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema))
    out[k] = k === '$ref' && typeof v === 'string' ? `doc${v}` : toJsonSchema(v);
  if (out.exclusiveMinimum === true) [out.exclusiveMinimum, out.minimum] = [out.minimum, undefined];
  if (out.exclusiveMaximum === true) [out.exclusiveMaximum, out.maximum] = [out.maximum, undefined];
  if (out.exclusiveMinimum === false) delete out.exclusiveMinimum;
  if (out.exclusiveMaximum === false) delete out.exclusiveMaximum;
  if (out.nullable === true && !out.type) {
    // nullable beside a $ref or a combination: Ajv only reads nullable next to a type
    delete out.nullable;
    return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

const deref = (schema: Schema | undefined): Schema => {
  let s = schema ?? {};
  while (s.$ref) s = doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] ?? {};
  return s;
};

// ---------- ids that exist ----------

/**
 * Values of id-like fields seen in the answers (id, code, *Id, filename), by the path they came
 * from, so a path parameter sometimes names a row that exists and the route goes past its 404.
 * Seeded with a few rows of each kind before the fuzzing starts.
 */
const seen = new Map<string, string[]>();
const ID_FIELD = /^(id|code|filename|.*Id)$/;
const POOL_MARK = '\u{F0000}pool:';

function harvest(prefix: string, value: unknown, depth = 0): void {
  if (depth > 6 || !value || typeof value !== 'object') return;
  if (Array.isArray(value)) return value.slice(0, 20).forEach((v) => harvest(prefix, v, depth + 1));
  for (const [k, v] of Object.entries(value)) {
    if (ID_FIELD.test(k) && (typeof v === 'string' || typeof v === 'number') && String(v).length <= 200) {
      for (const bucket of [`${prefix} ${k}`, `* ${k}`]) {
        const values = seen.get(bucket) ?? [];
        if (!values.includes(String(v))) values.push(String(v));
        if (values.length > 50) values.shift();
        seen.set(bucket, values);
      }
    } else harvest(prefix, v, depth + 1);
  }
}

/** The resource a path belongs to, for the pool: /api/items/{id}/stock and /api/items are both /api/items. */
const resourceOf = (path: string) => path.split('/{')[0].replace(/\/$/, '');

function fromPool(path: string, param: string, pick: number): string | undefined {
  const resource = resourceOf(path);
  const candidates = [
    `${resource} ${param}`,
    `* ${param}`,
    ...(param === 'id' || /Id$/.test(param) ? [`${resource} id`] : []),
  ];
  for (const bucket of candidates) {
    const values = seen.get(bucket);
    if (values?.length) return values[pick % values.length];
  }
  return undefined;
}

async function seedRows() {
  const headers = { Authorization: `Bearer ${token}` };
  for (let i = 0; i < 3; i += 1) {
    const item = await buildItem(t.db, { currentStock: 1000, minimumStock: 5 });
    const supplier = await buildSupplier(t.db);
    await buildItemSource(t.db, supplier.id, item.id);
    await buildOrder(t.db, supplier.id, [{ itemId: item.id, name: item.name, quantity: '3', unitCost: '1.50' }]);
    const code = await buildChargeCode(t.db);
    await t.request
      .post('/api/sales')
      .set(headers)
      .send({ chargeCode: code.code, items: [{ itemId: item.id, quantity: 1 }] });
    await t.request
      .post('/api/notes')
      .set(headers)
      .send({ referenceType: 'item', referenceId: String(item.id), text: 'fuzz' });
  }
  // the lists name them all
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (!methods.get || path.includes('{')) continue;
    const mcpOnly = (methods.get.security ?? []).every((s) => 'mcpKey' in s) && (methods.get.security ?? []).length > 0;
    const res = await t.request.get(path).set('Authorization', `Bearer ${mcpOnly ? mcpKey.key : token}`);
    if (res.type === 'application/json') harvest(resourceOf(path), res.body);
  }
}

// ---------- values ----------

/** Nested arrays and objects, deeper than any schema goes. */
const deep = (depth: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i += 1) value = i % 2 ? [value] : { a: value };
  return value;
};

const HOSTILE_TEXT = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0001\u0002\u0007\b\t\n\u000b\f\r\u001b[31m\u007f',
  '\ud800',
  '\udfff\ud800',
  '🙂👩‍👩‍👧‍👦',
  'é́́́',
  'ﷺ‮RTL',
  "'; DROP TABLE items;--",
  '../../../etc/passwd',
  '%00',
  '%',
  '=cmd|/C calc!A0',
  '<script>alert(1)</script>',
  '-1',
  '1.5',
  '1e309',
  'NaN',
  'Infinity',
  '0x10',
  '１２',
  '2147483648',
  '99999999999999999999999',
  '00000000-0000-0000-0000-000000000000',
  'true',
  'null',
  '[]',
  '{}',
];

/** A string no sane client sends. In a URL it stays under Node's 16 KB header limit; in a body it may be 100,000 characters. */
const hostileText = (inBody: boolean) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    {
      weight: 1,
      arbitrary: fc.string({
        unit: fc.constantFrom('\u0000', '\u0001', '\u001f', '\u2028', '\ufeff', 'a'),
        maxLength: 20,
      }),
    },
    { weight: 1, arbitrary: fc.constantFrom(inBody ? 100_000 : 4_000, 1_001).map((n) => 'x'.repeat(n)) },
  );

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileText(true) },
  {
    weight: 3,
    arbitrary: fc.constantFrom<unknown>(
      null,
      true,
      false,
      0,
      -0,
      -1,
      -0.5,
      0.1,
      1.5,
      2 ** 31,
      -(2 ** 31) - 1,
      2 ** 53 + 1,
      1e21,
      1e308,
      -1e308,
      Number.MIN_VALUE,
    ),
  },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer({ min: -(2 ** 31), max: 2 ** 31 }) },
  { weight: 1, arbitrary: fc.constantFrom(2_000, 200).map(deep) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      [],
      {},
      [null],
      [{}],
      { __proto__: { admin: true } },
      { constructor: { prototype: { x: 1 } } },
    ),
  },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.constant(Array.from({ length: 5_000 }, (_, i) => i)) },
);

/** A value the schema describes: within its bounds, formats and enums where it names them. */
function valid(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = deref(schema);
  let arb = validBase(s, depth);
  if (s.nullable) arb = fc.option(arb, { nil: null, freq: 6 });
  return arb;
}

function validBase(s: Schema, depth: number): fc.Arbitrary<unknown> {
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.allOf?.length) {
    const parts = s.allOf.map(deref);
    if (parts.every((p) => p.type === 'object' || p.properties)) {
      return validBase(
        {
          type: 'object',
          properties: Object.assign({}, ...parts.map((p) => p.properties)),
          required: parts.flatMap((p) => p.required ?? []),
        },
        depth,
      );
    }
    return valid(parts[0], depth);
  }
  if (s.anyOf?.length || s.oneOf?.length) return fc.oneof(...(s.anyOf ?? s.oneOf)!.map((x) => valid(x, depth + 1)));
  switch (s.type) {
    case 'string':
      return validString(s);
    case 'integer': {
      const min = s.minimum ?? -1_000;
      const max = s.maximum ?? 1_000_000;
      return fc.integer({
        min: Math.ceil(min + (s.exclusiveMinimum === true ? 1 : 0)),
        max: Math.floor(max - (s.exclusiveMaximum === true ? 1 : 0)),
      });
    }
    case 'number':
      return fc.oneof(
        fc.integer({ min: Math.ceil(s.minimum ?? -1_000), max: Math.floor(s.maximum ?? 1_000_000) }),
        fc
          .double({ min: s.minimum ?? -1_000, max: s.maximum ?? 1_000_000, noNaN: true, noDefaultInfinity: true })
          .map((n) => Math.round(n * 100) / 100),
      );
    case 'boolean':
      return fc.boolean();
    case 'array':
      if (depth > 4) return fc.constant([]);
      return fc.array(valid(s.items, depth + 1), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 4, Math.max(s.minItems ?? 0, 4)),
      });
    case 'object':
    default: {
      if (!s.properties)
        return s.type === 'object'
          ? fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 })
          : fc.jsonValue({ maxDepth: 2 });
      if (depth > 4) return fc.constant({});
      const props = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, valid(v, depth + 1)]));
      return fc.record(props, { requiredKeys: (s.required ?? []).filter((k) => k in props) });
    }
  }
}

function validString(s: Schema): fc.Arbitrary<string> {
  const max = Math.min(s.maxLength ?? 30, 30);
  const min = Math.min(s.minLength ?? 0, max);
  if (s.format === 'uuid') return fc.uuid();
  if (s.format === 'email') return fc.emailAddress();
  if (s.format === 'date-time')
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString());
  if (s.format === 'date')
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
  if (s.format === 'binary') return fc.string({ maxLength: 20 });
  if (s.pattern) {
    try {
      // (no filter on the length: a filter nothing passes never ends; a pattern's text of the wrong length is a violation worth sending too)
      return fc.stringMatching(new RegExp(s.pattern));
    } catch {
      // a pattern JavaScript does not read: plain text
    }
  }
  const samples = ['1', '10.00', '2026-01-01', 'ABC123', 'test', 'correct horse battery staple'].filter(
    (v) => v.length >= min && v.length <= (s.maxLength ?? Infinity),
  );
  const text = fc.string({ minLength: Math.max(min, 1), maxLength: Math.max(max, min, 1) });
  return samples.length ? fc.oneof(text, fc.constantFrom(...samples)) : text;
}

function bodyOf(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const s = deref(schema);
  const props = Object.keys(s.properties ?? {});
  const mutated = props.length
    ? fc
        .tuple(valid(s), fc.constantFrom(...props), hostileValue, fc.constantFrom('replace', 'delete', 'extra'))
        .map(([value, prop, bad, how]) => {
          if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
          const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
          if (how === 'replace') copy[prop] = bad;
          else if (how === 'delete') delete copy[prop];
          else copy[`${prop}\u0000extra`] = bad;
          return copy;
        })
    : hostileValue;
  return fc.oneof(
    { weight: 3, arbitrary: valid(s) },
    { weight: 4, arbitrary: mutated },
    { weight: 1, arbitrary: hostileValue },
  );
}

/** A parameter as text: its documented form or a hostile string. */
function paramText(schema: Schema | undefined): fc.Arbitrary<string> {
  const asText = valid(schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return fc.oneof({ weight: 3, arbitrary: asText }, { weight: 2, arbitrary: hostileText(false) });
}

function requestOf(op: Operation, credential: Credential[]): fc.Arbitrary<FuzzRequest> {
  const params = op.parameters ?? [];
  // an empty, '.' or '..' segment would be another URL (/api/suppliers/ is the list), not a bad parameter
  const segment = (schema: Schema | undefined) =>
    fc.oneof(
      { weight: 3, arbitrary: paramText(schema).filter((v) => v !== '' && v !== '.' && v !== '..') },
      { weight: 2, arbitrary: fc.nat(1_000).map((n) => `${POOL_MARK}${n}`) },
    );
  const path = fc.record(
    Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, segment(p.schema)])),
  );
  const queryParams = params.filter((p) => p.in === 'query');
  const query = fc
    .tuple(
      ...queryParams.map((p) =>
        fc.option(
          paramText(p.schema).map((v) => [p.name, v] as [string, string]),
          { nil: undefined, freq: 2 },
        ),
      ),
      fc.option(fc.tuple(fc.constantFrom('page', 'limit', 'unknown', 'search'), hostileText(false)), {
        nil: undefined,
        freq: 4,
      }),
    )
    .map((entries) => entries.filter((e): e is [string, string] => e !== undefined));
  const json =
    op.requestBody?.content['application/json']?.schema ?? op.requestBody?.content['multipart/form-data']?.schema;
  const body = op.requestBody ? bodyOf(json) : fc.constant(undefined);
  const encoding = fc.oneof(
    { weight: 12, arbitrary: fc.constant<Encoding>('json') },
    { weight: 1, arbitrary: fc.constantFrom<Encoding>('truncated-json', 'deep-json', 'form', 'text') },
  );
  return fc.record({ path, query, body, encoding, credential: fc.constantFrom(...credential) });
}

// ---------- checks ----------

const validators = new Map<string, ValidateFunction>();
function validatorFor(key: string, schema: Schema): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = ajv.compile(toJsonSchema(schema) as object)));
  return validate;
}

type Answer = { status: number; type: string; body: unknown; text: string };

function problemsWith(opKey: string, op: Operation, res: Answer): string | undefined {
  if (res.status >= 500) return `answered ${res.status}: ${res.text.slice(0, 300)}`;
  const documented =
    op.responses[String(res.status)] ?? op.responses[`${String(res.status)[0]}XX`] ?? op.responses.default;
  if (!documented)
    return `answered ${res.status}, which the document does not list (it lists ${Object.keys(op.responses).join(', ')}): ${res.text.slice(0, 300)}`;
  const declaredTypes = Object.keys(documented.content ?? {});
  // a body in a content type the document does not declare for the status (a CSV where only JSON is documented)
  if (res.type && declaredTypes.length > 0 && !declaredTypes.includes(res.type)) {
    return `answered ${res.status} with ${res.type}, which the document does not declare for it (it declares ${declaredTypes.join(', ')})`;
  }
  if (res.type !== 'application/json') return undefined;
  const schema = documented.content?.['application/json']?.schema;
  if (!schema) return undefined;
  const validate = validatorFor(`${opKey} ${res.status}`, schema);
  if (validate(res.body)) return undefined;
  const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(root)'} ${e.message}`);
  return `answered ${res.status} with a body that does not match its documented schema: ${errors.join('; ')}; body ${res.text.slice(0, 300)}`;
}

/** 3,000 `[` then 3,000 `]`: 6 KB that a recursive walk of the parsed body cannot get through (it was a 500). */
const DEEP_JSON = '['.repeat(3_000) + ']'.repeat(3_000);
const TOO_DEEP = 'Request body is nested too deeply (more than 64 levels)';

/** A route whose body the API's JSON parser reads (not a webhook's raw body, not a multipart upload). */
const readsJsonBody = (op: Operation, route: DeclaredRoute) =>
  Boolean(op.requestBody?.content['application/json'] && !route.doc.rawBody);

/** A deeply nested body, where the route reads JSON, is refused as such: 400 (or the MCP key's 429 once its allowance is spent). */
function deepBodyProblem(answer: Answer): string | undefined {
  if (answer.status === 429) return undefined;
  const message =
    (answer.body as { message?: string; error?: { message?: string } } | undefined)?.message ??
    (answer.body as { error?: { message?: string } })?.error?.message;
  if (answer.status === 400 && message === TOO_DEEP) return undefined;
  return `answered ${answer.status} to a body nested 3,000 deep, not 400 '${TOO_DEEP}': ${answer.text.slice(0, 300)}`;
}

/** encodeURIComponent, except that a lone surrogate goes out as its (invalid) UTF-8 bytes instead of throwing. */
function encodeSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...text]
      .map((ch) => {
        const code = ch.charCodeAt(0);
        if (ch.length > 1 || code < 0xd800 || code > 0xdfff) return encodeURIComponent(ch);
        return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
          .map((b) => `%${b.toString(16).toUpperCase()}`)
          .join('');
      })
      .join('');
  }
}

/** The request's path, a pool pick replaced by an id seen in an earlier answer (or a made-up one when none was seen). */
function urlOf(pathTemplate: string, req: FuzzRequest): string {
  return pathTemplate.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = req.path[name] ?? '';
    if (!value.startsWith(POOL_MARK)) return encodeSegment(value);
    return encodeSegment(fromPool(pathTemplate, name, Number(value.slice(POOL_MARK.length))) ?? '2147483000');
  });
}

async function send(method: string, pathTemplate: string, req: FuzzRequest): Promise<Answer> {
  await credentials();
  const path = urlOf(pathTemplate, req);
  const query = new URLSearchParams(req.query).toString();
  let request = (t.request as unknown as Record<string, (url: string) => supertest.Test>)[method](
    query ? `${path}?${query}` : path,
  );
  // what an MCP client sends (POST /mcp answers 406 without it); JSON everywhere else
  request = request.set('Accept', 'application/json, text/event-stream');
  if (req.credential === 'admin') request = request.set('Authorization', `Bearer ${token}`);
  if (req.credential === 'user') request = request.set('Authorization', `Bearer ${userToken}`);
  if (req.credential === 'mcp') request = request.set('Authorization', `Bearer ${mcpKey.key}`);
  if (req.body !== undefined) {
    const json = JSON.stringify(req.body) ?? 'null';
    if (req.encoding === 'json') request = request.set('Content-Type', 'application/json').send(json);
    else if (req.encoding === 'deep-json') request = request.set('Content-Type', 'application/json').send(DEEP_JSON);
    else if (req.encoding === 'truncated-json')
      request = request.set('Content-Type', 'application/json').send(json.slice(0, Math.max(1, json.length - 1)));
    else if (req.encoding === 'form')
      request = request
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(`body=${encodeURIComponent(json.slice(0, 10_000))}`);
    else request = request.set('Content-Type', 'text/plain').send(json.slice(0, 10_000));
  }
  const res = await request;
  if (res.status < 300 && res.type === 'application/json') harvest(resourceOf(pathTemplate), res.body);
  return { status: res.status, type: res.type, body: res.body as unknown, text: res.text ?? '' };
}

/** A request as a failure report shows it: long strings cut, so the report stays readable. */
const shown = (req: FuzzRequest) =>
  JSON.stringify(req, (_k, v: unknown) =>
    typeof v === 'string' && v.length > 200 ? `${v.slice(0, 60)}…(${v.length} characters)` : v,
  ).slice(0, 2_000);

/** The callers the route admits, among those the fuzzer has. */
function callersOf(access: Access): Credential[] {
  if (access === 'public') return ['none', 'admin', 'user'];
  // the fuzz runs under access.profile spec, where a profile access admits any signed-in user
  if (access === 'auth' || access === 'user' || isProfileAccess(access)) return ['admin', 'user'];
  if (access === 'auth-or-mcp-key') return ['admin', 'user', 'mcp'];
  if (access === 'mcp-key') return ['mcp'];
  return ['admin'];
}

const seedOf = (key: string) => (BASE_SEED ^ createHash('sha256').update(key).digest().readInt32BE(0)) | 0;

describe('every operation of the OpenAPI document, fuzzed', () => {
  it(`never answers a 5xx, an undocumented status or a body off its schema (FUZZ_SEED=${BASE_SEED}, FUZZ_RUNS=${RUNS} per operation)`, async () => {
    const table = declaredRoutesOf(t.app);
    const failures: string[] = [];
    let operations = 0;
    let requests = 0;
    const statuses = new Map<number, number>();
    const succeeded = new Set<string>();
    const started = Date.now();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const opKey = `${method.toUpperCase()} ${path}`;
        if (NOT_FUZZED[opKey] || (ONLY && ONLY !== opKey)) continue;
        operations += 1;
        const route = table.find(
          (r) => `${r.method.toUpperCase()} ${r.path.replace(/:(\w+)/g, '{$1}').replace(/\/$/, '')}` === opKey,
        );
        expect(route, `${opKey} in the route table`).toBeDefined();
        let arb = requestOf(op, callersOf(route!.access));
        if (INVALID_ONLY[opKey]) arb = arb.filter((req) => !route?.doc.body?.safeParse(req.body).success);
        const seed = seedOf(opKey);
        const opStarted = Date.now();
        const details = await fc.check(
          fc.asyncProperty(arb, async (req) => {
            requests += 1;
            const answer = await send(method, path, req);
            statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
            if (answer.status < 300) succeeded.add(opKey);
            const problem =
              problemsWith(opKey, op, answer) ??
              (req.encoding === 'deep-json' && readsJsonBody(op, route!) ? deepBodyProblem(answer) : undefined);
            if (problem)
              throw new Error(`${problem}\n  sent: ${method.toUpperCase()} ${urlOf(path, req).slice(0, 300)}`);
          }),
          { seed, numRuns: RUNS, endOnFailure: SHRINK_MS === 0, interruptAfterTimeLimit: SHRINK_MS + 30_000 },
        );
        if (process.env.FUZZ_VERBOSE)
          console.log(
            `${opKey} ${details.numRuns} runs ${details.numShrinks} shrinks ${Date.now() - opStarted} ms${details.failed ? ' FAILED' : ''}`,
          );
        if (details.failed) {
          const cause =
            details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
          failures.push(
            `${opKey}: ${cause}\n  replay: FUZZ_ONLY='${opKey}' FUZZ_SEED=${BASE_SEED} (operation seed ${seed}, path ${details.counterexamplePath})\n  shrunk request: ${details.counterexample ? shown(details.counterexample[0]) : '?'}`,
          );
        }
      }
    }
    const byStatus = [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
    console.info(
      `fuzzed ${operations} operations with ${requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${BASE_SEED}); ${succeeded.size} operations answered a 2xx at least once; statuses ${byStatus}`,
    );
    if (!ONLY) expect(operations).toBeGreaterThanOrEqual(150);
    expect(requests).toBeGreaterThanOrEqual(operations * Math.min(RUNS, 1));
    expect(failures, failures.join('\n\n')).toEqual([]);
  }, 600_000);
});

describe('answers in other content types', () => {
  it('the CSV forms of the sales report, the recharges and the audit trail are declared text/csv, beside their JSON', async () => {
    const csvRoutes = ['/api/sales/reports', '/api/finance/recharges', '/api/audit'];
    for (const path of csvRoutes) {
      const res = await t.request.get(`${path}?format=csv`).set('Authorization', `Bearer ${token}`).expect(200);
      expect(res.type, path).toBe('text/csv');
      expect(
        problemsWith(`GET ${path}`, doc.paths[path].get, {
          status: res.status,
          type: res.type,
          body: res.body as unknown,
          text: res.text,
        }),
        path,
      ).toBeUndefined();
      expect(Object.keys(doc.paths[path].get.responses['200'].content ?? {}), path).toEqual(
        expect.arrayContaining(['application/json', 'text/csv']),
      );
    }
  });
});

describe('what the fuzzing found', () => {
  it('400 for a body nested 3,000 deep on every operation that reads a JSON body, for every caller it admits; it was a 500 (RangeError in the NUL check)', async () => {
    const table = declaredRoutesOf(t.app);
    const problems: string[] = [];
    let sent = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const opKey = `${method.toUpperCase()} ${path}`;
        const route = table.find(
          (r) => `${r.method.toUpperCase()} ${r.path.replace(/:(\w+)/g, '{$1}').replace(/\/$/, '')}` === opKey,
        );
        if (!route || !readsJsonBody(op, route) || NOT_FUZZED[opKey]) continue;
        for (const credential of callersOf(route.access)) {
          sent += 1;
          const pathParams = Object.fromEntries(
            (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => [p.name, `${POOL_MARK}0`]),
          );
          const answer = await send(method, path, {
            path: pathParams,
            query: [],
            body: null,
            encoding: 'deep-json',
            credential,
          });
          const problem = deepBodyProblem(answer);
          if (problem) problems.push(`${opKey} as ${credential}: ${problem}`);
        }
      }
    }
    expect(sent).toBeGreaterThan(50);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('400 naming the path for a path parameter that is not percent-encoded UTF-8 (a lone surrogate), on the API and on a page; it was a 500', async () => {
    const res = await t.request.get('/api/items/%ED%A0%80').set('Authorization', `Bearer ${token}`).expect(400);
    expect(res.body).toEqual({
      message: 'Validation failed',
      errors: [{ field: '(path)', message: 'must be valid percent-encoded UTF-8' }],
    });
    const mcp = await t.request.get('/api/mcp/test/%ED%A0%80').set('Authorization', `Bearer ${mcpKey.key}`).expect(400);
    expect(mcp.body.error.code).toBe('MCP_INVALID_REQUEST');
    const page = await t.request.get('/items/%ED%A0%80').redirects(0);
    expect(page.status).not.toBe(500);
  });
});
