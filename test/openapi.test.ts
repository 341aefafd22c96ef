import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/**
 * Every `.openapi('Name')` call, with where it was made. zod-to-openapi keeps one component per
 * name and silently lets a second schema of the same name replace the first, so two places
 * naming a schema alike is a collision. Recorded from before any schema module loads.
 */
const named = await vi.hoisted(async () => {
  const { z } = await import('zod');
  const { extendZodWithOpenApi } = await import('@asteasolutions/zod-to-openapi');
  extendZodWithOpenApi(z);
  const calls: { name: string; site: string }[] = [];
  const prototype = z.ZodType.prototype as unknown as { openapi: (...args: unknown[]) => unknown };
  const openapi = prototype.openapi;
  prototype.openapi = function (this: unknown, ...args: unknown[]) {
    if (typeof args[0] === 'string') {
      const frames = (new Error().stack ?? '').split('\n').slice(2);
      const site = frames.find((f) => !f.includes('node_modules')) ?? frames[0] ?? '?';
      calls.push({
        name: args[0],
        site: site
          .trim()
          .replace(/^at\s+(?:.*\()?/, '')
          .replace(/\)$/, '')
          .replace(`${process.cwd()}/`, ''),
      });
    }
    return openapi.apply(this, args);
  };
  return calls;
});

import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { OpenAPIRegistry } from '../src/http/openapi';
import { testApp, type TestApp } from './helpers/app';

const registered: RouteConfig[] = [];
const registerPath = OpenAPIRegistry.prototype.registerPath;
vi.spyOn(OpenAPIRegistry.prototype, 'registerPath').mockImplementation(function (
  this: OpenAPIRegistry,
  route: RouteConfig,
) {
  registered.push(route);
  return registerPath.call(this, route);
});

/** The parts of Express 5's router (the `router` package) that the walk reads. */
type Layer = {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  match: (path: string) => false | { path: string };
};
type RouterRoute = { method: string; path: string; layer: Layer };

/** Success answers without a body besides 204: the MCP transport answers a body of JSON-RPC notifications 202 and nothing else. */
const NO_BODY = ['POST /mcp 202'];

/** Routes that answer but are deliberately not in the API description. */
const UNDOCUMENTED = ['GET /api/docs'];

let t: TestApp;
let routes: RouterRoute[];
type Operation = {
  operationId?: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
};
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
beforeAll(async () => {
  t = await testApp();
  routes = routesOf((t.app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  doc = (await t.request.get('/api/docs').expect(200)).body;
});
afterAll(() => t.close());

/** Every route of the app's router and the routers mounted in it, in the order Express tries them. */
function routesOf(stack: Layer[], prefix: string): RouterRoute[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      if (typeof layer.route.path !== 'string') throw new Error(`a route path that is not a string under ${prefix}`);
      const path = `${prefix}${layer.route.path}`;
      return Object.keys(layer.route.methods)
        .filter((m) => m !== '_all')
        .map((method) => ({ method: method.toUpperCase(), path, layer }));
    }
    if (!layer.handle.stack) return [];
    if (typeof layer.rawPath !== 'string') throw new Error(`a router mounted at a non-string path under ${prefix}`);
    return routesOf(layer.handle.stack, layer.rawPath === '/' ? prefix : `${prefix}${layer.rawPath}`);
  });
}

/** The route layer Express would run first for method and url, walking mounted routers as it does. */
function firstRoute(stack: Layer[], method: string, url: string): Layer | undefined {
  for (const layer of stack) {
    const match = layer.match(url);
    if (!match) continue;
    if (layer.route) {
      if (layer.route.methods[method.toLowerCase()] || layer.route.methods._all) return layer;
    } else if (layer.handle.stack) {
      const found = firstRoute(layer.handle.stack, method, url.slice(match.path.length) || '/');
      if (found) return found;
    }
  }
  return undefined;
}

const toOpenApi = (path: string) => path.replace(/:(\w+)/g, '{$1}').replace(/\/$/, '') || '/';
const key = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;
const repeated = (keys: string[]) => [...new Set(keys.filter((k, i) => keys.indexOf(k) !== i))].sort();

describe('GET /api/docs', () => {
  it('documents no operation twice (each module is mounted and registered once)', () => {
    expect(repeated(registered.map(key))).toEqual([]);
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.length).toBe(registered.length);
    const operationIds = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op.operationId ? [op.operationId] : [])),
    );
    expect(repeated(operationIds)).toEqual([]);
  });

  it('every success answer with a body names its schema (only 204 has none)', () => {
    const missing = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, op]) =>
        Object.entries(op.responses)
          .filter(
            ([status, response]) =>
              status.startsWith('2') &&
              status !== '204' &&
              !NO_BODY.includes(`${method.toUpperCase()} ${path} ${status}`) &&
              !Object.values(response.content ?? {}).some((c) => c.schema),
          )
          .map(([status]) => `${method.toUpperCase()} ${path} ${status}`),
      ),
    );
    expect(missing).toEqual([]);
  });

  it('every API route of the routers is documented exactly once, and every documented operation is a route', () => {
    // the pages are for people, not an API contract; they are not in the OpenAPI document (/health and /mcp are)
    const apiRoutes = routes.filter(
      (r) => r.path.startsWith('/api/') || r.path === '/health' || r.path.startsWith('/mcp'),
    );
    const routerKeys = apiRoutes.map((r) => key({ method: r.method, path: toOpenApi(r.path) }));
    expect(repeated(routerKeys), 'routes registered twice').toEqual([]);
    const documented = registered.map(key);
    expect(
      routerKeys.filter((k) => !documented.includes(k) && !UNDOCUMENTED.includes(k)),
      'routes without documentation',
    ).toEqual([]);
    expect(
      documented.filter((k) => !routerKeys.includes(k)),
      'documented operations without a route',
    ).toEqual([]);
    expect(apiRoutes.length).toBeGreaterThanOrEqual(100);
  });

  it('no route is unreachable behind an earlier one (fixed paths are tried before parameters)', () => {
    const stack = (t.app as unknown as { router: { stack: Layer[] } }).router.stack;
    const shadowed = routes.flatMap((route) => {
      const url = route.path.replace(/:(\w+)/g, 'sample-$1');
      const winner = firstRoute(stack, route.method, url);
      if (winner === route.layer) return [];
      const by = routes.find((r) => r.layer === winner && r.method === route.method);
      return [
        `${key(route)} is answered by ${!by ? 'nothing' : key(by) === key(route) ? 'an earlier copy of itself' : key(by)}`,
      ];
    });
    expect(shadowed).toEqual([]);
  });

  it('gives every component schema name to one schema only', () => {
    const sites = new Map<string, Set<string>>();
    for (const { name, site } of named) sites.set(name, (sites.get(name) ?? new Set()).add(site));
    const clashes = [...sites]
      .filter(([, where]) => where.size > 1)
      .map(([name, where]) => `${name}: ${[...where].sort().join(' and ')}`);
    expect(clashes).toEqual([]);
    expect(named.length).toBeGreaterThan(10);
    for (const name of Object.keys(doc.components.schemas)) expect(sites.has(name), name).toBe(true);
  });
});
