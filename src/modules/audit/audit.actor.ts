import type { Request } from 'express';

/** Who made a change, copied into its audit row: the kind of credential, and the person behind it. */
export type Actor = {
  kind: 'session' | 'token' | 'mcp-key' | 'system' | 'anonymous';
  userId: string | null;
  email: string | null;
  mcpKeyId: number | null;
  ip: string | null;
};

/** The scheduler and other work no request asked for. */
export const SYSTEM_ACTOR: Actor = { kind: 'system', userId: null, email: null, mcpKeyId: null, ip: null };

/** The actor of a request: its user by session or API token, or an MCP key acting for its creator. */
export function actorOf(req: Request): Actor {
  const ip = req.ip ?? null;
  if (req.mcpKey)
    return {
      kind: 'mcp-key',
      userId: req.mcpKey.creator.id,
      email: req.mcpKey.creator.email,
      mcpKeyId: req.mcpKey.id,
      ip,
    };
  if (req.user)
    return {
      kind: req.authMethod === 'bearer' ? 'token' : 'session',
      userId: req.user.id,
      email: req.user.email,
      mcpKeyId: null,
      ip,
    };
  return { kind: 'anonymous', userId: null, email: null, mcpKeyId: null, ip };
}
