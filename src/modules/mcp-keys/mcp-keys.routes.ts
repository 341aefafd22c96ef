import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { IdParams } from '../../http/validate';
import { presentCreatedMcpKey, presentMcpKey } from './mcp-keys.present';
import { CreateMcpKey, CreatedMcpKey, McpKeyList } from './mcp-keys.schemas';
import { mcpKeysService } from './mcp-keys.service';
import { actorOf } from '../audit/audit.actor';

/** Admins issue and revoke the keys machine clients (AI assistants) use on the MCP surface. */
export function mcpKeysRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'MCP keys');
  const keys = mcpKeysService(db);

  api.post(
    '/mcp/keys',
    {
      operationId: 'createMcpKey',
      summary: 'Create an MCP API key',
      description:
        'The key (`mcp_` + 32 random bytes, base64url) is shown once; only its hash is stored. scopes ["read"] (default) or ["read","write"]; ' +
        'write adds the MCP tools that change stock and create draft quotes, acting as the admin who created the key. ' +
        'A key stops working when it expires, is deleted, or its creator is deactivated.',
      access: 'admin',
      body: CreateMcpKey,
      responses: {
        201: { description: 'Created', schema: CreatedMcpKey },
        400: { description: 'Validation failed', schema: ValidationErrorBody },
      },
    },
    async (req, res) => {
      const body = req.input.body;
      res.status(201).json(presentCreatedMcpKey(await keys.create(actorOf(req), body)));
    },
  );

  api.get(
    '/mcp/keys',
    {
      operationId: 'listMcpKeys',
      summary: 'Every MCP API key (without secrets)',
      access: 'admin',
      responses: { 200: { description: 'Keys', schema: McpKeyList } },
    },
    async (_req, res) => {
      res.json((await keys.list()).map(presentMcpKey));
    },
  );

  api.delete(
    '/mcp/keys/:id',
    {
      operationId: 'revokeMcpKey',
      summary: 'Revoke an MCP API key',
      description: 'The key stops working at once.',
      access: 'admin',
      params: IdParams,
      responses: { 204: 'Revoked', 404: { description: 'Not found', schema: MessageBody } },
    },
    async (req, res) => {
      await keys.revoke(req.input.params.id, actorOf(req));
      res.status(204).end();
    },
  );

  return api.router;
}
