import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../../src/modules/audit/audit.actor';
import { mcpKeysService } from '../../src/modules/mcp-keys/mcp-keys.service';
import type { McpScope } from '../../src/modules/mcp-keys/mcp-keys.schemas';
import { buildUser } from './factories';

/** A live MCP API key, created by a new admin unless told otherwise: its id, secret and creator's id. */
export async function buildMcpKey(
  db: Knex,
  overrides: Partial<{ name: string; scopes: McpScope[]; createdBy: string; expiresInDays: number }> = {},
): Promise<{ id: number; key: string; createdBy: string }> {
  const createdBy = overrides.createdBy ?? (await buildUser(db, { role: 'admin' })).id;
  const { row, key } = await mcpKeysService(db).create(
    { ...SYSTEM_ACTOR, userId: createdBy },
    {
      name: overrides.name ?? 'Test assistant',
      scopes: overrides.scopes ?? ['read'],
      expiresInDays: overrides.expiresInDays,
    },
  );
  return { id: row.id, key, createdBy };
}

export const withKey = (key: string) => ({ Authorization: `Bearer ${key}` });

export type McpCallResult = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent: Record<string, unknown>;
};

export type McpTestServer = {
  url: URL;
  /** A client of the SDK's own, speaking with `key`; it has read the tool list (so that it checks each result against its output schema) unless told not to. */
  connect(
    key: string,
    options?: { listTools?: boolean },
  ): Promise<{ client: Client; call: (name: string, args?: Record<string, unknown>) => Promise<McpCallResult> }>;
  /** Closes the clients connected so far (after each test). */
  closeClients(): Promise<void>;
  /** Closes the server and its connections (after all). */
  close(): Promise<void>;
};

/** `app` on a local port of its own, with its /mcp URL, for the SDK's client. */
export async function mcpTestServer(app: http.RequestListener): Promise<McpTestServer> {
  const server = http.createServer(app);
  // the client's pool keeps connections between tests: the server must not close one idle under a busy machine's pauses
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  let clients: Client[] = [];
  return {
    url,
    async connect(key, { listTools = true } = {}) {
      const client = new Client({ name: 'stores-test-client', version: '1.0.0' });
      clients.push(client);
      await client.connect(
        new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
      );
      if (listTools) await client.listTools();
      const call = async (name: string, args: Record<string, unknown> = {}) =>
        (await client.callTool({ name, arguments: args })) as McpCallResult;
      return { client, call };
    },
    async closeClients() {
      await Promise.all(clients.map((c) => c.close()));
      clients = [];
    },
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
    },
  };
}
