import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { isProfileAccess } from '../auth/access-profile';
import type { Role } from '../auth/roles';
import type { Knex } from 'knex';
import { parse, parsedOnFirstRead } from '../http/validate';
import { pageUpload } from './forms';
import { requirePage, requirePagePermission, requirePageUnderProfile, type PageAccess } from './page-guards';

/** What a form or query string sends: each field a string, a repeated one a list of them. */
export type Sent = Record<string, unknown>;

/**
 * A page route's declaration, as an API route's (ApiRouter): who may open it, and the schemas of its
 * path parameters, its query string and its form. The handlers read them parsed as `req.input`.
 */
export type PageDoc<P extends z.ZodObject, Q extends z.ZodType, F extends z.ZodType, C = undefined> = {
  /** a role and up (requester: anyone signed in), a permission's holders, or a role under access.profile strict */
  access: Role | PageAccess;
  params?: P;
  query?: Q;
  /** what the query schema reads, made from the query string (as sent unless given: `filledIn` drops a filter left empty) */
  fromQuery?: (query: Sent, req: Request) => unknown;
  /** the form: the API's body schema the typed fields must pass, or the schema of the form's action (a hold placed or released) */
  form?: F | ((body: Sent, req: Request) => F);
  /**
   * what the form schema reads, made from the fields as typed (as sent unless given) and, where the
   * form names something the handler finds first (the item a typed SKU names, the record being
   * edited), what it found: the handler then reads `req.input.formWith(found)`
   */
  fromForm?: (body: Sent, req: Request, found: C) => unknown;
  /** a multipart form (a file upload): multer reads it, then the form's CSRF token in it is checked */
  upload?: { field: string; maxBytes: number; maxFieldBytes?: number };
};

/**
 * What a handler reads as `req.input`: each declared schema's output, parsed on first read. A refused
 * parameter or query is a ZodError (the 400 page) unless the handler reads it inside `attempt`; a refused
 * form read inside `attempt(() => service(req.input.form))` comes back as the form's field errors.
 */
export type PageInput<P extends z.ZodObject, Q extends z.ZodType, F extends z.ZodType, C = undefined> = ([P] extends [
  never,
]
  ? unknown
  : { readonly params: z.output<P> }) &
  ([Q] extends [never] ? unknown : { readonly query: z.output<Q> }) &
  ([F] extends [never] ? unknown : { readonly form: z.output<F>; formWith(found: C): z.output<F> });

export type PageRequest<I> = Request & { readonly input: I };
export type PageHandler<I> = (req: PageRequest<I>, res: Response, next: NextFunction) => unknown;

type DeclarePage = <
  P extends z.ZodObject = never,
  Q extends z.ZodType = never,
  F extends z.ZodType = never,
  C = undefined,
>(
  path: string,
  doc: PageDoc<P, Q, F, C>,
  ...handlers: PageHandler<PageInput<P, Q, F, C>>[]
) => void;

const asSent = (sent: Sent) => sent;

/**
 * A router of page routes, each declared with its access and its input schemas: the guard comes from
 * the declaration (so a page route cannot be unguarded, and the authorization matrix reads its access),
 * then the upload and its CSRF check, then `req.input`. Mounted in pageRoutes, behind the form body,
 * the page-wide CSRF check and the page locals.
 */
export class PageRouter {
  readonly router = Router();

  constructor(private readonly db: Knex) {}

  readonly get: DeclarePage = (path, doc, ...handlers) => this.add('get', path, doc, handlers);
  readonly post: DeclarePage = (path, doc, ...handlers) => this.add('post', path, doc, handlers);

  /** Middleware for a part of the area (its stylesheets and scripts). */
  use(path: string | string[], ...handlers: RequestHandler[]): void {
    this.router.use(path, ...handlers);
  }

  private add<P extends z.ZodObject, Q extends z.ZodType, F extends z.ZodType, C>(
    method: 'get' | 'post',
    path: string,
    doc: PageDoc<P, Q, F, C>,
    handlers: PageHandler<PageInput<P, Q, F, C>>[],
  ) {
    this.router[method](
      path,
      ...this.guardFor(doc.access),
      ...(doc.upload ? pageUpload(doc.upload.field, doc.upload.maxBytes, doc.upload.maxFieldBytes) : []),
      readPageInput(doc as PageDoc<P, Q, F, unknown>),
      // readPageInput has set the req.input they read, which Express's types cannot know
      ...(handlers as RequestHandler[]),
    );
  }

  private guardFor(access: Role | PageAccess): RequestHandler[] {
    if (typeof access === 'string') return [requirePage(access)];
    if ('permission' in access) return requirePagePermission(this.db, access.permission);
    if (isProfileAccess(access)) return requirePageUnderProfile(this.db, access);
    return [requirePage(access.role)];
  }
}

function readPageInput(doc: PageDoc<z.ZodObject, z.ZodType, z.ZodType, unknown>): RequestHandler {
  return (req, _res, next) => {
    const { params, query, form, fromQuery = asSent, fromForm = asSent } = doc;
    const body = (req.body ?? {}) as Sent;
    const formSchema = form && (typeof form === 'function' ? form(body, req) : form);
    const parts = {
      ...(params ? { params: { schema: params, raw: () => req.params } } : {}),
      ...(query ? { query: { schema: query, raw: () => fromQuery(req.query, req) } } : {}),
      ...(formSchema ? { form: { schema: formSchema, raw: () => fromForm(body, req, undefined) } } : {}),
    };
    const input = parsedOnFirstRead(parts);
    if (formSchema)
      Object.defineProperty(input, 'formWith', {
        value: (found: unknown) => parse(formSchema, fromForm(body, req, found)),
      });
    Object.assign(req, { input });
    next();
  };
}
