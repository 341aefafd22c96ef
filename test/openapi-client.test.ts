import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { buildStockedItem, stockOf } from './helpers/inventory-factories';
import { buildChargeCode } from './helpers/sales-factories';

/** Inside the project, so the generated client resolves openapi-fetch from node_modules as a user's project would. */
const OUT = path.join(import.meta.dirname, '.generated-client');

/** What a person writing a script against the service writes, with the generated types. */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './api';

export async function sellTwo(baseUrl: string, token: string, chargeCode: string, search: string) {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });
  const listed = await api.GET('/api/items', { params: { query: { search, limit: 5 } } });
  if (!listed.data) throw new Error(\`list: \${listed.response.status}\`);
  const item = listed.data.items[0];
  const saved = await api.POST('/api/sales/quotes', { body: { sessionId: 'nightly-script', chargeCode, items: [{ itemId: item.id, quantity: 2 }] } });
  if (!saved.data) throw new Error(\`save: \${saved.response.status} \${JSON.stringify(saved.error)}\`);
  const processed = await api.POST('/api/sales/quotes/{id}/process', { params: { path: { id: saved.data.quote.id } }, body: {} });
  if (!processed.data) throw new Error(\`process: \${processed.response.status} \${JSON.stringify(processed.error)}\`);
  return { total: listed.data.total, itemId: item.id, quoteId: saved.data.quote.id, sale: processed.data.sale };
}
`;

let t: TestApp;
let server: http.Server;
let baseUrl: string;
beforeAll(async () => {
  t = await testApp();
  server = http.createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await fs.rm(OUT, { recursive: true, force: true });
  await fs.mkdir(OUT, { recursive: true });
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
  await fs.rm(OUT, { recursive: true, force: true });
});

describe('a typed client generated from /api/docs', () => {
  it('type-checks, then signs in with a token, lists items, saves and processes a quote against the service', async () => {
    const document = (await t.request.get('/api/docs').expect(200)).body;
    await fs.writeFile(path.join(OUT, 'api.d.ts'), astToString(await openapiTS(document)));
    const clientFile = path.join(OUT, 'client.ts');
    await fs.writeFile(clientFile, CLIENT);

    const program = ts.createProgram([clientFile], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);

    const user = await buildUser(t.db);
    const signedIn = await t.loginAs(user);
    const token: string = (await signedIn.post('/api/auth/tokens').send({ name: 'generated client' }).expect(201)).body
      .token;
    const item = await buildStockedItem(t.db, 10, { name: 'Typed client beaker' });
    const code = await buildChargeCode(t.db);

    await build({
      entryPoints: [clientFile],
      bundle: true,
      format: 'esm',
      platform: 'node',
      outfile: path.join(OUT, 'client.mjs'),
      logLevel: 'silent',
    });
    const client = (await import(pathToFileURL(path.join(OUT, 'client.mjs')).href)) as {
      sellTwo: (...args: string[]) => Promise<Record<string, unknown>>;
    };
    const result = await client.sellTwo(baseUrl, token, code.code, 'Typed client beaker');

    expect(result).toMatchObject({
      total: 1,
      itemId: item.id,
      sale: {
        saleId: expect.stringMatching(/^SALE-/),
        items: [expect.objectContaining({ itemId: item.id, quantity: '2.00' })],
      },
    });
    expect(await stockOf(t.db, item.id)).toBe('8.00');
  });
});
