import { Router, type RequestHandler } from 'express';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Knex } from 'knex';
import type { z } from 'zod';
import { requireAuth, requirePermission, requireRole } from '../auth/guards';
import type { PermissionKey } from '../auth/permissions';
import type { Role } from '../modules/users/users.schemas';
import type { Deps } from '../deps';

/** Who may call a route. There is no way to declare a route without saying. */
export type Access = 'public' | 'auth' | Role | { permission: PermissionKey };

type ResponseDoc = string | { description: string; schema?: z.ZodType; contentType?: string };

export type RouteDoc = {
  summary: string;
  description?: string;
  access: Access;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** the JSON request body */
  body?: z.ZodType;
  /** the multipart/form-data request body (file uploads); a route may take both forms */
  formBody?: z.ZodType;
  responses: Record<number, ResponseDoc>;
};

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

function guardFor(access: Access, db: Knex): RequestHandler[] {
  if (access === 'public') return [];
  if (access === 'auth') return [requireAuth];
  if (typeof access === 'string') return [requireRole(access)];
  return [requirePermission(db, access.permission)];
}

function accessNote(access: Access): string {
  if (access === 'public') return 'No authentication.';
  if (access === 'auth') return 'Any signed-in user or bearer token.';
  if (typeof access === 'string') return access === 'admin' ? 'Admin only.' : `Role ${access} or higher.`;
  return `Requires permission \`${access.permission}\` (admins hold every permission).`;
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

  /** deps: where routes are documented, and the database the permission guards read */
  constructor(
    deps: Pick<Deps, 'docs' | 'db'>,
    private readonly mountPath: string,
    private readonly tag: string,
  ) {
    this.docs = deps.docs;
    this.db = deps.db;
  }

  get(path: string, doc: RouteDoc, ...handlers: RequestHandler[]) {
    this.add('get', path, doc, handlers);
  }
  post(path: string, doc: RouteDoc, ...handlers: RequestHandler[]) {
    this.add('post', path, doc, handlers);
  }
  put(path: string, doc: RouteDoc, ...handlers: RequestHandler[]) {
    this.add('put', path, doc, handlers);
  }
  patch(path: string, doc: RouteDoc, ...handlers: RequestHandler[]) {
    this.add('patch', path, doc, handlers);
  }
  delete(path: string, doc: RouteDoc, ...handlers: RequestHandler[]) {
    this.add('delete', path, doc, handlers);
  }

  private add(method: Method, path: string, doc: RouteDoc, handlers: RequestHandler[]) {
    this.docs.registerPath(this.describe(method, path, doc));
    this.router[method](path, ...guardFor(doc.access, this.db), ...handlers);
  }

  private describe(method: Method, path: string, doc: RouteDoc): RouteConfig {
    const responses: RouteConfig['responses'] = {};
    for (const [status, response] of Object.entries(doc.responses)) {
      const r = typeof response === 'string' ? { description: response } : response;
      responses[status] = r.schema
        ? { description: r.description, content: { [r.contentType ?? 'application/json']: { schema: r.schema } } }
        : { description: r.description };
    }
    const bodies = { 'application/json': doc.body, 'multipart/form-data': doc.formBody };
    const content = Object.fromEntries(Object.entries(bodies).flatMap(([type, schema]) => (schema ? [[type, { schema }]] : [])));
    return {
      method,
      path: toOpenApiPath(this.mountPath + path),
      tags: [this.tag],
      summary: doc.summary,
      description: [doc.description, accessNote(doc.access)].filter(Boolean).join('\n\n'),
      security: doc.access === 'public' ? [] : [{ session: [] }, { bearer: [] }],
      request: {
        params: doc.params,
        query: doc.query,
        body: doc.body || doc.formBody ? { content, required: true } : undefined,
      },
      responses,
    };
  }
}
