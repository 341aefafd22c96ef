import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { ApiRouter } from '../src/http/api-router';
import { createDocsRegistry } from '../src/http/openapi';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('GET /api/docs under Redocly recommended rules', () => {
  it('has no errors: valid OpenAPI 3.0 (nullable beside a type), every operation with a unique operationId, with contact and licence', async () => {
    const document = (await t.request.get('/api/docs').expect(200)).body;
    const problems = await lintFromString({
      source: JSON.stringify(document),
      absoluteRef: 'stores-api.json',
      config: await createConfig({ extends: ['recommended'] }),
    });
    const errors = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    const operations = Object.values(
      document.paths as Record<string, Record<string, { operationId?: string }>>,
    ).flatMap((ops) => Object.values(ops));
    expect(operations.filter((op) => !op.operationId)).toEqual([]);
    expect(new Set(operations.map((op) => op.operationId)).size).toBe(operations.length);
    expect(problems.filter((p) => p.ruleId.startsWith('operation-operationId'))).toEqual([]);
    expect(document.info).toMatchObject({
      contact: { name: expect.any(String) },
      license: { name: expect.any(String) },
    });
  });
});

describe('ApiRouter', () => {
  it('refuses, when routes are declared, an operationId a route of the same app already has', () => {
    const api = new ApiRouter({ docs: createDocsRegistry(), db: t.db }, '/api', 'Test');
    const doc = { operationId: 'listThings', summary: 'Things', access: 'auth' as const, responses: { 200: 'Things' } };
    api.get('/things', doc, (_req, res) => void res.json([]));
    expect(() => api.get('/other-things', doc, (_req, res) => void res.json([]))).toThrow(
      "operationId 'listThings' of GET /api/other-things is already GET /api/things's",
    );
  });
});
