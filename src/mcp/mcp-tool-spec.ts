import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { hasRole } from '../auth/guards';
import { Forbidden } from '../http/errors';
import type { Actor } from '../modules/audit/audit.actor';
import type { McpKeyHolder } from '../modules/mcp-keys/mcp-keys.service';
import type { Role } from '../auth/roles';

/** A tool: what the client's model reads about it, its schemas, and what it does (the structured result it returns). */
export type ToolSpec<I extends z.ZodObject, O extends z.ZodObject> = {
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  run: (args: z.output<I>) => Promise<z.output<O>>;
};

/** Registers one tool on a server; a tool that fails answers a tool error instead of failing the request. */
export type AddTool = <I extends z.ZodObject, O extends z.ZodObject>(name: string, spec: ToolSpec<I, O>) => void;

/** What a tool acts as: the key (whose creator's role and permissions still apply) and the audit actor of the request, kind 'mcp-key'. */
export type ToolContext = { key: McpKeyHolder; actor: Actor; canWrite: boolean };

/**
 * A tool that the API opens only to a role: the key's creator must still hold it (a creator demoted
 * since the key was issued has lost it).
 */
export function requireCreatorRole({ key }: ToolContext, role: Role, what: string): void {
  if (!hasRole(key.creator, role))
    throw Forbidden(`${what} need the ${role} role, which the key's creator no longer holds`);
}
