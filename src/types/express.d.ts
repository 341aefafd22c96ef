import type { McpKeyHolder } from '../modules/mcp-keys/mcp-keys.service';
import type { UserRow } from '../modules/users/users.service';

declare global {
  namespace Express {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface User extends UserRow {}
    interface Request {
      /** how the request was authenticated */
      authMethod?: 'session' | 'bearer' | 'mcp-key';
      /** the MCP API key that opened the request; such a request has no req.user */
      mcpKey?: McpKeyHolder;
    }
  }
}

declare module 'express-session' {
  interface SessionData {
    /** ms since epoch: the absolute lifetime counts from here */
    signedInAt?: number;
    /** ms since epoch of the last write; the store row is refreshed at most once a minute */
    lastSeenAt?: number;
    /** the signed-in user, read with the session by the store; never written back */
    loadedUser?: UserRow;
    /** ms since epoch of the last successful write (not GET) with read replicas configured: read-your-writes (src/db/replicas.ts) */
    lastWriteAt?: number;
    /** a message for the next page shown (post/redirect/get), removed once shown */
    flash?: string;
  }
}

export {};
