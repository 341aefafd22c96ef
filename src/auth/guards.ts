import type { Request, RequestHandler } from 'express';
import type { Knex } from 'knex';
import { Forbidden, Unauthorized } from '../http/errors';
import { McpAuthInvalid, McpAuthRequired } from '../http/mcp-errors';
import { usersService } from '../modules/users/users.service';
import { ROLES, STAFF, type Role } from './roles';
import type { McpKeyHolder } from '../modules/mcp-keys/mcp-keys.service';
import type { PermissionKey } from './permissions';

/** A role's rank: its place in ROLES (requester 0, user 1, manager 2, admin 3). */
const RANK = Object.fromEntries(ROLES.map((role, rank) => [role, rank])) as Record<Role, number>;

export function hasRole(user: Pick<Express.User, 'role'>, role: Role): boolean {
  return RANK[user.role] >= RANK[role];
}

/** The signed-in user; only call behind a guard. */
export function currentUser(req: Request): Express.User {
  if (!req.user) throw Unauthorized();
  return req.user;
}

/** Whether the user is stores staff (`user` and above), not a requester. */
export const isStaff = (user: Express.User): boolean => hasRole(user, STAFF);

/** Any signed-in person, a requester included (access 'any-signed-in'). */
export const requireAuth: RequestHandler = (req, _res, next) => {
  next(req.user ? undefined : Unauthorized());
};

/** The stores staff: any signed-in user of the `user` role and above (access 'auth'); a requester is 403. */
export const requireStaff: RequestHandler = (req, _res, next) => {
  if (!req.user) return next(Unauthorized());
  next(isStaff(req.user) ? undefined : Forbidden(`This action requires the ${STAFF} role`));
};

/** The MCP key that opened the request; only call behind requireMcpKey. */
export function currentMcpKey(req: Request): McpKeyHolder {
  if (!req.mcpKey) throw McpAuthRequired();
  return req.mcpKey;
}

/**
 * A key acts with no more than its creator's current role, read with the key on every request
 * (issue 40): every MCP tool and route reads what the API opens only to staff, so a key whose
 * creator is now a requester opens nothing (403 MCP_FORBIDDEN). A deactivated or deleted creator's
 * key is not authenticated at all (401 MCP_AUTH_INVALID). Tools needing more check it themselves
 * (requireCreatorRole, the refund permission).
 */
const creatorRefusal = (key: McpKeyHolder) =>
  isStaff(key.creator)
    ? undefined
    : Forbidden(
        `This MCP key's creator now has the ${key.creator.role} role; a key acts only for staff (${STAFF} and above)`,
      );

/** The MCP client routes: a key, and nothing else, opens them. */
export const requireMcpKey: RequestHandler = (req, _res, next) => {
  next(req.mcpKey ? creatorRefusal(req.mcpKey) : McpAuthRequired());
};

/** An MCP key, or a signed-in member of staff (a requester is 403). */
export const requireAuthOrMcpKey: RequestHandler = (req, _res, next) => {
  if (req.mcpKey) return next(creatorRefusal(req.mcpKey));
  if (!req.user) return next(Unauthorized());
  next(isStaff(req.user) ? undefined : Forbidden(`This action requires the ${STAFF} role`));
};

/** Every route outside the MCP surface: an MCP key opens none of them. */
export const refuseMcpKey: RequestHandler = (req, _res, next) => {
  next(
    req.mcpKey
      ? McpAuthInvalid(
          'An MCP API key opens only the MCP surface (/api/mcp/status, test, sales, inventory, the MCP analytics and /mcp)',
        )
      : undefined,
  );
};

/** requireRole('manager') lets managers and admins through. */
export function requireRole(role: Role): RequestHandler {
  return (req, _res, next) => {
    if (!req.user) return next(Unauthorized());
    next(hasRole(req.user, role) ? undefined : Forbidden(`This action requires the ${role} role`));
  };
}

export function requirePermission(db: Knex, permission: PermissionKey): RequestHandler {
  const users = usersService(db);
  return async (req, _res, next) => {
    if (!req.user) return next(Unauthorized());
    const allowed = await users.hasPermission(req.user, permission);
    next(allowed ? undefined : Forbidden(`This action requires the ${permission} permission`));
  };
}
