import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Knex } from 'knex';
import { z } from 'zod';
import {
  refuseMcpKey,
  requireAuth,
  requireAuthOrMcpKey,
  requireMcpKey,
  requirePermission,
  requireRole,
  requireStaff,
} from '../auth/guards';
import { isProfileAccess, requireUnderProfile, type ProfileAccess } from '../auth/access-profile';
import type { PermissionKey } from '../auth/permissions';
import type { McpLimit, McpLimiters } from '../auth/mcp-limits';
import { BadRequestBody, ErrorBody, McpErrorBody, ValidationErrorBody } from './openapi';
import { parsedOnFirstRead, refuseNulCharacters } from './validate';
import { jsonBody } from './json-body';
import type { Role } from '../auth/roles';
import type { Deps } from '../deps';

/**
 * Who may call a route. There is no way to declare a route without saying. 'auth' is any signed-in
 * member of staff (the `user` role and above: a requester is 403); 'any-signed-in' is anyone signed
 * in, a requester included (the catalogue, requests, the person's own account). An MCP API key opens
 * only the routes declared 'mcp-key' or 'auth-or-mcp-key' (a key, or staff). A ProfileAccess ({role,
 * profile: 'strict'}) is any member of staff unless the setting access.profile is strict, then that role and up.
 */
export type Access =
  | 'public'
  | 'any-signed-in'
  | 'auth'
  | Role
  | { permission: PermissionKey }
  | ProfileAccess
  | 'mcp-key'
  | 'auth-or-mcp-key';

type ResponseDoc =
  | string
  | {
      description: string;
      schema?: z.ZodType;
      contentType?: string;
      /** the same status in other content types the route answers with (a format=csv download): type -> schema */
      otherContent?: Record<string, z.ZodType>;
    };

/**
 * A route's declaration. Its params, query and body schemas document the route and are what its
 * handlers read, parsed, as `req.input` (see RouteInput).
 */
export type RouteDoc<
  P extends z.ZodObject = z.ZodObject,
  Q extends z.ZodObject = z.ZodObject,
  B extends z.ZodType = z.ZodType,
> = {
  /** the operation's stable name in the OpenAPI document (listItems, processQuote): client generators name their methods by it; unique */
  operationId: string;
  summary: string;
  description?: string;
  access: Access;
  params?: P;
  query?: Q;
  /** the JSON request body */
  body?: B;
  /** a request without a body is read as {} (a body whose every field is optional) */
  omittedBodyIsEmpty?: true;
  /** the multipart/form-data request body (file uploads); a route may take both forms */
  formBody?: z.ZodType;
  responses: Record<number, ResponseDoc>;
  /** the MCP limit a key's request spends (requests without a key are not counted) */
  mcpLimit?: McpLimit;
  /** the handler spends `mcpLimit` itself, once per JSON-RPC message of the body (POST /mcp), rather than once per request here */
  mcpLimitPerMessage?: true;
  /** the handlers read the raw body themselves (webhooks check a signature over its bytes): no JSON parsing or NUL check here */
  rawBody?: true;
};

/**
 * What a handler reads as `req.input`: the output of each schema its route declares (`params`,
 * `query`, `body`), parsed when the handler first reads it, so a handler checks its input in the
 * order it reads it, between its other checks, as a `parse` call of its own would.
 */
export type RouteInput<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType> = ([P] extends [never]
  ? unknown
  : { readonly params: z.output<P> }) &
  ([Q] extends [never] ? unknown : { readonly query: z.output<Q> }) &
  ([B] extends [never] ? unknown : { readonly body: z.output<B> });

export type InputRequest<I> = Request & { readonly input: I };

/** A route's handler, or a middleware before it (a RequestHandler is one): it reads the route's parsed input as req.input. */
export type InputHandler<I> = (req: InputRequest<I>, res: Response, next: NextFunction) => unknown;

/**
 * Declares a route: its path, its declaration and its handlers. The schemas the declaration names
 * type the handlers' `req.input`; an unnamed one is absent from it.
 */
type DeclareRoute = <P extends z.ZodObject = never, Q extends z.ZodObject = never, B extends z.ZodType = never>(
  path: string,
  doc: RouteDoc<P, Q, B>,
  ...handlers: InputHandler<RouteInput<P, Q, B>>[]
) => void;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One route as its ApiRouter declared it: the Express path it is served at, who may call it, what it spends and its docs. */
export type DeclaredRoute = Readonly<{
  method: Method;
  path: string;
  access: Access;
  mcpLimit?: McpLimit;
  doc: RouteDoc;
}>;

const routeTables = new WeakMap<Deps['docs'], DeclaredRoute[]>();
/** Each route's OpenAPI entry, described when the document is first asked for rather than at start. */
const undescribedPaths = new WeakMap<Deps['docs'], (() => RouteConfig)[]>();

/** The registry with every declared route's entry in it: what the OpenAPI document is generated from. */
export function describedRegistry(docs: Deps['docs']): Deps['docs'] {
  for (const describe of undescribedPaths.get(docs)?.splice(0) ?? []) docs.registerPath(describe());
  return docs;
}

/**
 * The route table: every route declared by the ApiRouters that document into `docs` (one app's
 * registry), in declaration order. It is what the guards and the OpenAPI document are made from,
 * so a tool that walks it (the authorization matrix, the route fuzzer) covers a new route unasked.
 */
export function routeTable(docs: Deps['docs']): readonly DeclaredRoute[] {
  return tableOf(docs);
}

function tableOf(docs: Deps['docs']): DeclaredRoute[] {
  let table = routeTables.get(docs);
  if (!table) routeTables.set(docs, (table = []));
  return table;
}

function guardFor(access: Access, db: Knex): RequestHandler[] {
  if (access === 'mcp-key') return [requireMcpKey];
  if (access === 'auth-or-mcp-key') return [requireAuthOrMcpKey];
  if (access === 'public') return [refuseMcpKey];
  if (access === 'any-signed-in') return [refuseMcpKey, requireAuth];
  if (access === 'auth') return [refuseMcpKey, requireStaff];
  if (typeof access === 'string') return [refuseMcpKey, requireRole(access)];
  if (isProfileAccess(access)) return [refuseMcpKey, requireUnderProfile(db, access)];
  return [refuseMcpKey, requirePermission(db, access.permission)];
}

function securityFor(access: Access): RouteConfig['security'] {
  if (access === 'public') return [];
  if (access === 'mcp-key') return [{ mcpKey: [] }];
  if (access === 'auth-or-mcp-key') return [{ session: [] }, { bearer: [] }, { mcpKey: [] }];
  return [{ session: [] }, { bearer: [] }];
}

function accessNote(access: Access): string {
  if (access === 'public') return 'No authentication.';
  if (access === 'any-signed-in') return 'Anyone signed in (session or bearer token), a requester included.';
  if (access === 'auth')
    return 'Any signed-in member of staff (role user or higher) or their bearer token; a requester is refused.';
  if (access === 'mcp-key')
    return 'An MCP API key only (`Authorization: Bearer mcp_...`); a session or bearer token is refused.';
  if (access === 'auth-or-mcp-key')
    return 'Any signed-in member of staff (role user or higher) or their bearer token, or an MCP API key.';
  if (typeof access === 'string') return access === 'admin' ? 'Admin only.' : `Role ${access} or higher.`;
  if (isProfileAccess(access))
    return `Any signed-in member of staff (role user or higher) or their bearer token; under the setting access.profile ${access.profile}, role ${access.role} or higher.`;
  return `Requires permission \`${access.permission}\` (admins hold every permission).`;
}

/** Routers mounted under /api and /mcp; the health checks (mounted at the root) answer before any of it, reading nothing. */
const behindApiMiddleware = (mountPath: string) =>
  mountPath === '/api' || mountPath.startsWith('/api/') || mountPath === '/mcp';

const STATE_CHANGING = new Set<Method>(['post', 'put', 'patch', 'delete']);

/**
 * The refusals a route can answer whatever its handler does, from the guards and the app's own
 * middleware; each is documented unless the route's declaration documents that status itself.
 * Routers mounted under /api (and /mcp) sit behind the app's /api middleware: the maintenance gate (503 during
 * a restore), the bearer-token and MCP-key check (401 for a bad Authorization header, whatever the
 * access), the JSON body (415 for another type, 413 over the limit, 400 when malformed) and the
 * NUL-character check on the path, the query and the body (400).
 */
function commonResponses(method: Method, mountPath: string, doc: RouteDoc): Record<number, ResponseDoc> {
  const { access } = doc;
  const behindApi = behindApiMiddleware(mountPath);
  const error = (description: string) => ({
    description,
    schema: access === 'mcp-key' ? McpErrorBody : access === 'auth-or-mcp-key' ? EitherErrorBody : ErrorBody,
  });
  const common: Record<number, ResponseDoc> = {};
  if (behindApi) {
    common[400] = {
      description:
        'Validation failed ({message, errors}: a parameter, the query or the body refused, a NUL character in any of them), or malformed JSON or nested over 64 levels ({message})',
      schema:
        access === 'mcp-key'
          ? McpErrorBody
          : access === 'auth-or-mcp-key'
            ? z.union([BadRequestBody, McpErrorBody])
            : BadRequestBody,
    };
    common[401] = {
      description:
        access === 'public'
          ? 'An Authorization header that is malformed, unknown or expired, or an MCP key, which opens only the MCP surface'
          : access === 'mcp-key'
            ? 'No MCP key, or one unknown, revoked or expired (a session or bearer token is refused)'
            : 'Not signed in, or an Authorization header that is malformed, unknown or expired (an MCP key opens only the MCP surface)',
      // an MCP key outside the MCP surface is refused in the MCP error format
      schema: access === 'mcp-key' ? McpErrorBody : EitherErrorBody,
    };
    if (STATE_CHANGING.has(method)) {
      common[413] = error('The request body is over the size limit');
      common[415] = error('The request body is neither JSON nor, where the route takes an upload, multipart/form-data');
    }
    common[503] = error('A backup restore is running, or the database is unavailable; try again shortly');
  }
  if (isProfileAccess(access))
    common[403] = error(`Under access.profile ${access.profile}, below the ${access.role} role`);
  else if (typeof access === 'object') common[403] = error(`Without the ${access.permission} permission`);
  else if (access === 'manager' || access === 'admin' || access === 'user' || access === 'requester')
    common[403] = error(`Below the ${access} role`);
  else if (access === 'auth' || access === 'auth-or-mcp-key')
    common[403] = error(
      STATE_CHANGING.has(method)
        ? 'A requester (below the user role), or a cross-site request carried by the session cookie'
        : 'A requester (below the user role)',
    );
  if (access === 'mcp-key')
    common[403] = error("MCP_FORBIDDEN: the key's creator is now a requester (below the user role)");
  if (access === 'auth-or-mcp-key')
    common[403] = error(
      `${(common[403] as { description: string }).description}, or an MCP key whose creator is now one`,
    );
  if (!common[403] && STATE_CHANGING.has(method) && access !== 'public' && access !== 'mcp-key') {
    common[403] = error('A cross-site request carried by the session cookie');
  }
  if (doc.mcpLimit)
    common[429] = {
      description: "The MCP key's allowance is spent (MCP_RATE_LIMITED, with Retry-After)",
      schema: McpErrorBody,
    };
  return common;
}

/** An error in the API's format, or in the MCP surface's when the request came with an MCP key. */
const EitherErrorBody = z.union([ErrorBody, McpErrorBody]);

/** A 400 is a validation failure ({message, errors}) or another refusal ({message}); a route declaring ValidationError says either. */
function documented400(response: ResponseDoc, access: Access): ResponseDoc {
  if (typeof response === 'string' || response.schema !== ValidationErrorBody) return response;
  return {
    ...response,
    schema: access === 'auth-or-mcp-key' ? z.union([BadRequestBody, McpErrorBody]) : BadRequestBody,
  };
}

/**
 * The body is read once the guard has let the caller in, so a caller the route refuses is answered
 * 401 or 403 before a byte of it is parsed: malformed JSON, a body over the limit or nested too deeply, or
 * a NUL character anywhere (path, query, body) is a 400 or 413 only for a caller the route admits.
 * (Bulk import reads its 10 MB itself behind its own guard in app.ts; express.json reads a body once.)
 */
const READ_BODY: RequestHandler[] = [jsonBody('1mb'), refuseNulCharacters];

const INPUT_PARTS = ['params', 'query', 'body'] as const;

/** Sets req.input: each declared part of the request, parsed with its schema on first read (a ZodError, a 400, when refused). */
function readInput(doc: RouteDoc): RequestHandler {
  return (req, _res, next) => {
    const parts = INPUT_PARTS.flatMap((part) => {
      const schema = doc[part];
      const raw = () => (part === 'body' && doc.omittedBodyIsEmpty ? (req.body ?? {}) : req[part]);
      return schema ? [[part, { schema, raw }] as const] : [];
    });
    Object.assign(req, { input: parsedOnFirstRead(Object.fromEntries(parts)) });
    next();
  };
}

const toOpenApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}').replace(/\/$/, '') || '/';

/**
 * An Express router whose every route is registered in the OpenAPI description and
 * guarded by its declared access, so the docs and the guards cannot drift from the code.
 */
export class ApiRouter {
  readonly router = Router();

  private readonly docs: Deps['docs'];
  private readonly db: Knex;
  private readonly mcpLimiters?: McpLimiters;

  /** deps: where routes are documented, the database the permission guards read, and the MCP limits of routes that declare one */
  constructor(
    deps: Pick<Deps, 'docs' | 'db'> & Partial<Pick<Deps, 'mcpLimiters'>>,
    private readonly mountPath: string,
    private readonly tag: string,
  ) {
    this.docs = deps.docs;
    this.db = deps.db;
    this.mcpLimiters = deps.mcpLimiters;
  }

  readonly get: DeclareRoute = (path, doc, ...handlers) => this.add('get', path, doc, handlers);
  readonly post: DeclareRoute = (path, doc, ...handlers) => this.add('post', path, doc, handlers);
  readonly put: DeclareRoute = (path, doc, ...handlers) => this.add('put', path, doc, handlers);
  readonly patch: DeclareRoute = (path, doc, ...handlers) => this.add('patch', path, doc, handlers);
  readonly delete: DeclareRoute = (path, doc, ...handlers) => this.add('delete', path, doc, handlers);

  private add<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType>(
    method: Method,
    path: string,
    doc: RouteDoc<P, Q, B>,
    handlers: InputHandler<RouteInput<P, Q, B>>[],
  ) {
    const clash = tableOf(this.docs).find((route) => route.doc.operationId === doc.operationId);
    if (clash)
      throw new Error(
        `operationId '${doc.operationId}' of ${method.toUpperCase()} ${this.mountPath + path} is already ${clash.method.toUpperCase()} ${clash.path}'s`,
      );
    let undescribed = undescribedPaths.get(this.docs);
    if (!undescribed) undescribedPaths.set(this.docs, (undescribed = []));
    undescribed.push(() => this.describe(method, path, doc));
    tableOf(this.docs).push({ method, path: this.mountPath + path, access: doc.access, mcpLimit: doc.mcpLimit, doc });
    this.router[method](
      path,
      ...guardFor(doc.access, this.db),
      ...this.limitFor(doc),
      ...(doc.rawBody || !behindApiMiddleware(this.mountPath) ? [] : READ_BODY),
      readInput(doc),
      // readInput has set the req.input they read, which Express's types cannot know
      ...(handlers as RequestHandler[]),
    );
  }

  private limitFor(doc: RouteDoc): RequestHandler[] {
    if (!doc.mcpLimit) return [];
    if (!this.mcpLimiters)
      throw new Error(`A route declares the MCP limit '${doc.mcpLimit}' but its router was given no mcpLimiters`);
    return doc.mcpLimitPerMessage ? [] : [this.mcpLimiters[doc.mcpLimit]];
  }

  private describe(method: Method, path: string, doc: RouteDoc): RouteConfig {
    const responses: RouteConfig['responses'] = {};
    const declared = { ...commonResponses(method, this.mountPath, doc), ...doc.responses };
    for (const [status, declaredResponse] of Object.entries(declared)) {
      const response = status === '400' ? documented400(declaredResponse, doc.access) : declaredResponse;
      const r = typeof response === 'string' ? { description: response } : response;
      const other = Object.entries(r.otherContent ?? {}).map(([type, schema]) => [type, { schema }] as const);
      responses[status] = r.schema
        ? {
            description: r.description,
            content: Object.fromEntries([[r.contentType ?? 'application/json', { schema: r.schema }], ...other]),
          }
        : { description: r.description };
    }
    const bodies = { 'application/json': doc.body, 'multipart/form-data': doc.formBody };
    const content = Object.fromEntries(
      Object.entries(bodies).flatMap(([type, schema]) => (schema ? [[type, { schema }]] : [])),
    );
    return {
      method,
      path: toOpenApiPath(this.mountPath + path),
      operationId: doc.operationId,
      tags: [this.tag],
      summary: doc.summary,
      description: [doc.description, accessNote(doc.access)].filter(Boolean).join('\n\n'),
      security: securityFor(doc.access),
      request: {
        params: doc.params,
        query: doc.query,
        body: doc.body || doc.formBody ? { content, required: true } : undefined,
      },
      responses,
    };
  }
}
