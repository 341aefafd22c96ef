import type { Deps } from '../../deps';
import { currentMcpKey } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { McpErrorBody } from '../../http/openapi';
import { presentMcpStatus, presentTestRun, presentTestRunStarted } from './mcp-runs.present';
import { ExecutionParams, McpStatus, StartTestRun, TestRun, TestRunStarted } from './mcp-runs.schemas';
import { mcpRunsService } from './mcp-runs.service';
import { mcpStatusService } from './mcp-status.service';

const mcpError = (description: string) => ({ description, schema: McpErrorBody });
const refusals = {
  401: mcpError(
    'MCP_AUTH_REQUIRED without a key (a session or bearer token is refused); MCP_AUTH_INVALID for an unknown, revoked or expired key',
  ),
  429: mcpError('MCP_RATE_LIMITED, with Retry-After'),
};

/** GET /api/mcp/status and the test runs (POST /api/mcp/test, GET /api/mcp/test/{execution_id}). */
export function mcpRunsRoutes({ db, databaseUrl, config, logger, docs, mcpLimiters }: Deps) {
  const api = new ApiRouter({ docs, db, mcpLimiters }, '/api', 'MCP client');
  const status = mcpStatusService({ db, config });
  const runs = mcpRunsService({ db, databaseUrl, config, logger });

  api.get(
    '/mcp/status',
    {
      operationId: 'getMcpStatus',
      summary: 'The service, its database, the last test run and this instance’s resources',
      description:
        'database.connected and latency are of a real SELECT 1; system.status is "degraded" when it fails (the key itself is checked in the ' +
        'database, so with the database down the whole request answers 503 MCP_UNAVAILABLE). ' +
        'Resources are of the instance that answers: its memory (RSS over the machine’s memory), its CPU share since the previous status call, ' +
        'and the used share of the file system holding DATA_DIR. 60 requests per minute per key.',
      access: 'mcp-key',
      mcpLimit: 'status',
      responses: { 200: { description: 'Status', schema: McpStatus }, ...refusals },
    },
    async (_req, res) => {
      res.json(presentMcpStatus(await status.status()));
    },
  );

  api.post(
    '/mcp/test',
    {
      operationId: 'startMcpTestRun',
      summary: 'Start a test run',
      description:
        'One run at a time across every instance. unit, integration and e2e run the project’s own vitest suites in a child process against a ' +
        'throwaway embedded database (unit: the vitest project unit, pure code; integration: the projects api and api-fresh; e2e: ' +
        'the project browser, the page tests); they need the test tooling, which a production image does not install (400). sales runs the quote-to-sale flow ' +
        'through the services in a transaction that is rolled back; system checks the running service. Poll GET /api/mcp/test/{execution_id}. ' +
        '10 runs per hour per key.',
      access: 'mcp-key',
      mcpLimit: 'test',
      body: StartTestRun,
      responses: {
        202: { description: 'Started; it runs in the background', schema: TestRunStarted },
        400: mcpError('MCP_INVALID_REQUEST: a field refused, or the test tooling is not installed here'),
        409: mcpError('MCP_TEST_RUNNING: another run is in progress'),
        ...refusals,
      },
    },
    async (req, res) => {
      const body = req.input.body;
      res.status(202).json(presentTestRunStarted(await runs.start(body, currentMcpKey(req))));
    },
  );

  api.get(
    '/mcp/test/:execution_id',
    {
      operationId: 'getMcpTestRun',
      summary: 'A test run: running, completed (with its results) or failed (with its error)',
      access: 'mcp-key',
      mcpLimit: 'status',
      params: ExecutionParams,
      responses: {
        200: { description: 'The run', schema: TestRun },
        400: mcpError('MCP_INVALID_REQUEST: the id is not a UUID'),
        404: mcpError('MCP_NOT_FOUND'),
        ...refusals,
      },
    },
    async (req, res) => {
      const { execution_id } = req.input.params;
      res.json(presentTestRun(await runs.get(execution_id)));
    },
  );

  return api.router;
}
