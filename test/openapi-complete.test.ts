import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredRoutesOf } from '../src/app';
import { apiNotFound } from '../src/http/error-middleware';
import { testApp, type TestApp } from './helpers/app';

/**
 * The OpenAPI document served at /api/docs is complete: walking the app's Express router, every
 * route outside the pages answers an operation of the document, and every operation of the
 * document is a route the router serves. (test/openapi.test.ts checks the registrations one by
 * one and that no route is shadowed; this one reads the served document.)
 */

/** The parts of Express 5's router (the `router` package) that the walk reads. */
type Layer = {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle: { stack?: Layer[] } & object;
};
type RouterRoute = { method: string; path: string; page: boolean };

/** Routes served outside the document on purpose, with the reason. */
const NOT_DOCUMENTED: Record<string, string> = {
  'GET /api/docs': 'the document itself',
  'GET /favicon.ico':
    'the site icon browsers ask for at this path; an asset like those under /assets, not part of the API',
};

let t: TestApp;
let routes: RouterRoute[];
let operations: string[];
beforeAll(async () => {
  t = await testApp();
  routes = walk((t.app as unknown as { router: { stack: Layer[] } }).router.stack);
  const doc = (await t.request.get('/api/docs').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
  operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
});
afterAll(() => t.close());

/** Every route of the app's router and of the routers mounted in it; what is mounted after the API's 404 is a page. */
function walk(stack: Layer[]): RouterRoute[] {
  const apiEnd = stack.findIndex((layer) => layer.handle === apiNotFound);
  expect(apiEnd, "the API's 404 in the app's stack").toBeGreaterThan(0);
  const inner = (layers: Layer[], prefix: string, page: boolean): RouterRoute[] =>
    layers.flatMap((layer) => {
      if (layer.route) {
        if (typeof layer.route.path !== 'string') throw new Error(`a route path that is not a string under ${prefix}`);
        const path = `${prefix}${layer.route.path}`;
        return Object.keys(layer.route.methods)
          .filter((m) => m !== '_all')
          .map((method) => ({ method: method.toUpperCase(), path, page }));
      }
      if (!layer.handle.stack) return [];
      if (typeof layer.rawPath !== 'string') throw new Error(`a router mounted at a non-string path under ${prefix}`);
      return inner(layer.handle.stack, layer.rawPath === '/' ? prefix : `${prefix}${layer.rawPath}`, page);
    });
  return stack.flatMap((layer, index) => inner([layer], '', index > apiEnd));
}

const toOpenApi = (path: string) => path.replace(/:(\w+)/g, '{$1}').replace(/\/$/, '') || '/';
const keyOf = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${toOpenApi(r.path)}`;

describe('GET /api/docs is complete', () => {
  it('documents every route outside the pages, and only routes the router serves', () => {
    const served = routes.filter((r) => !r.page).map(keyOf);
    expect(
      served.filter((k) => !operations.includes(k) && !NOT_DOCUMENTED[k]),
      'routes missing from the document',
    ).toEqual([]);
    expect(
      operations.filter((k) => !served.includes(k)),
      'documented operations no route serves',
    ).toEqual([]);
    expect(
      Object.keys(NOT_DOCUMENTED).filter((k) => !served.includes(k)),
      'stale NOT_DOCUMENTED entries',
    ).toEqual([]);
    expect(served.length).toBeGreaterThanOrEqual(150);
  });

  it('serves no page under /api, and no page answers a documented operation', () => {
    const pages = routes.filter((r) => r.page);
    expect(pages.length).toBeGreaterThanOrEqual(30);
    expect(pages.filter((r) => r.path.startsWith('/api/') || operations.includes(keyOf(r))).map(keyOf)).toEqual([]);
  });

  it('is the route table: each operation is one route an ApiRouter declared, with its guard', () => {
    const declared = declaredRoutesOf(t.app).map(keyOf);
    expect([...declared].sort()).toEqual([...operations].sort());
  });
});
