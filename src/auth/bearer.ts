import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import { Unauthorized } from '../http/errors';
import { isMcpClientRoute, McpAuthInvalid } from '../http/mcp-errors';
import { MCP_KEY_PREFIX, mcpKeysService } from '../modules/mcp-keys/mcp-keys.service';
import { tokensService } from './tokens.service';

/**
 * `Authorization: Bearer <token>` acts as the token's user; `Bearer mcp_...` is an MCP API key,
 * which opens only the routes declared for it. A bad token or key is a 401, never a fallback to the session.
 */
export function bearerAuth(db: Knex): RequestHandler {
  const tokens = tokensService(db);
  const mcpKeys = mcpKeysService(db);
  return async (req, _res, next) => {
    const header = req.get('authorization');
    if (!header) return next();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return next(Unauthorized('Malformed Authorization header'));
    const secret = match[1];
    // only a key opens an MCP route: any other credential there is a bad key, not a missing one
    if (!secret.startsWith(MCP_KEY_PREFIX) && isMcpClientRoute(req)) return next(McpAuthInvalid());
    if (secret.startsWith(MCP_KEY_PREFIX)) {
      const key = await mcpKeys.authenticate(secret);
      if (!key) return next(McpAuthInvalid());
      req.mcpKey = key;
      req.authMethod = 'mcp-key';
      return next();
    }
    const user = await tokens.authenticate(secret);
    if (!user) return next(Unauthorized('Invalid or expired token'));
    req.user = user;
    req.authMethod = 'bearer';
    next();
  };
}
