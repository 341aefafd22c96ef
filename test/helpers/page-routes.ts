import type { Express, RequestHandler } from 'express';
import { expect } from 'vitest';
import { isProfileAccess } from '../../src/auth/access-profile';
import { apiNotFound } from '../../src/http/error-middleware';
import { pageAccessOf, type PageAccess } from '../../src/pages/page-guards';

/** The parts of Express 5's router that the page walk reads. */
type Layer = {
  route?: { path: unknown; methods: Record<string, boolean>; stack: { handle: RequestHandler }[] };
  handle: { stack?: Layer[] };
  rawPath?: unknown;
};
export type PageRoute = { method: string; path: string; access?: PageAccess };

/** The page routes: every route of the routers mounted after the API's 404, with the access its guard declares. */
export function pageRoutesOf(app: Express): PageRoute[] {
  const walk = (stack: Layer[], prefix: string): PageRoute[] =>
    stack.flatMap((layer) => {
      if (layer.route) {
        const path = `${prefix}${String(layer.route.path)}`;
        const guards = layer.route.stack
          .map((l) => pageAccessOf(l.handle))
          .filter((a): a is PageAccess => a !== undefined);
        const access = guards.find((a) => 'permission' in a || isProfileAccess(a)) ?? guards[0];
        return Object.keys(layer.route.methods)
          .filter((m) => m !== '_all')
          .map((method) => ({ method: method.toUpperCase(), path, access }));
      }
      if (!layer.handle.stack) return [];
      return walk(
        layer.handle.stack,
        typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? `${prefix}${layer.rawPath}` : prefix,
      );
    });
  const stack = (app as unknown as { router: { stack: Layer[] } }).router.stack;
  const apiEnd = stack.findIndex((layer) => layer.handle === (apiNotFound as unknown));
  expect(apiEnd, "the API's 404 in the app's stack").toBeGreaterThan(0);
  return walk(stack.slice(apiEnd + 1), '');
}
