import type { Db } from '../../db/knex';
import { countReferences, describeReferences } from '../../db/references';
import { hashPassword, verifyPassword } from '../../auth/passwords';
import { assertAcceptablePassword } from '../../auth/password-rule';
import { PERMISSIONS, type PermissionKey } from '../../auth/permissions';
import { revokeAllTokensOf } from '../../auth/revocation';
import { endSessionsOf } from '../../auth/sessions.queries';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../http/errors';
import type { Actor } from '../audit/audit.actor';
import { auditAs, type AuditEntry } from '../audit/audit.service';
import { transaction } from '../../db/transaction';
import type { Role } from '../../auth/roles';

// Presenters live in users.present.ts; this one stays importable from here only until
// stock-movements.service.ts imports it from there.

export type UserRow = {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  role: Role;
  is_active: boolean;
  show_picking_list: boolean;
  password_hash: string | null;
  oidc_subject: string | null;
  /** set for the first admin's generated password: every page and API call waits for its change */
  must_change_password: boolean;
  created_at: Date;
  updated_at: Date;
};

/**
 * References to a user that do not count as "owning records" for a safe delete: the
 * account's own credentials, grants and sale Idempotency-Keys (deleted with it, ON DELETE
 * CASCADE; a key always comes with the sale it recorded, which does count) and
 * administrative bookkeeping pointers (set to NULL). Every other foreign key pointing at
 * users (items created, stock movements performed, sales processed, notes written, ...)
 * keeps the user: such a user can only be deactivated.
 */
const NON_OWNING_REFERENCES = new Set([
  'user_permissions.user_id',
  'user_permissions.granted_by',
  'api_tokens.user_id',
  'sale_idempotency_keys.user_id',
  'mcp_api_keys.created_by',
  'settings.updated_by',
]);

export type UserWithPermissions = UserRow & { permissions: PermissionKey[] };

/** Whether a user can be deleted outright, and the records that prevent it. */
export type DeletionCheckRecord = { canDelete: boolean; reasons: string[] };

/** What a single sign-on changes on a user: names from the provider's claims, the link to its subject. */
export type SsoChanges = { firstName?: string; lastName?: string; oidcSubject?: string };

export type NewUser = {
  email: string;
  firstName: string;
  lastName: string;
  role: Role;
  password?: string;
  oidcSubject?: string;
  /** the password is one the service generated: the user changes it before anything else */
  mustChangePassword?: boolean;
};

/** passwordHashCost: scrypt's cost for the passwords this service sets (config.passwordHashCost; 17 when absent) */
export function usersService(db: Db, opts: { passwordHashCost?: number } = {}) {
  const hash = (password: string) => hashPassword(password, opts.passwordHashCost);
  return {
    findById(id: string): Promise<UserRow | undefined> {
      return db<UserRow>('users').where({ id }).first();
    },

    findByEmail(email: string): Promise<UserRow | undefined> {
      return db<UserRow>('users').whereRaw('lower(email) = lower(?)', [email]).first();
    },

    /** The user linked to a single sign-on subject. */
    findByOidcSubject(subject: string): Promise<UserRow | undefined> {
      return db<UserRow>('users').where({ oidc_subject: subject }).first();
    },

    /** Applies a single sign-on's changes (names, subject link); with none, the user as it is, without a write. */
    async applySsoChanges(user: UserRow, changes: SsoChanges): Promise<UserRow> {
      const columns = {
        ...(changes.oidcSubject !== undefined ? { oidc_subject: changes.oidcSubject } : {}),
        ...(changes.firstName !== undefined
          ? { first_name: changes.firstName, last_name: changes.lastName ?? '' }
          : {}),
      };
      if (Object.keys(columns).length === 0) return user;
      const [row] = await db<UserRow>('users')
        .where({ id: user.id })
        .update({ ...columns, updated_at: db.fn.now() })
        .returning('*');
      return row;
    },

    async create(input: NewUser): Promise<UserRow> {
      if (input.password !== undefined) await assertAcceptablePassword(input.password, input, 'password');
      const [row] = await db<UserRow>('users')
        .insert({
          email: input.email.toLowerCase(),
          first_name: input.firstName,
          last_name: input.lastName,
          role: input.role,
          password_hash: input.password ? await hash(input.password) : null,
          oidc_subject: input.oidcSubject ?? null,
          must_change_password: input.mustChangePassword ?? false,
        })
        .returning('*');
      return row;
    },

    /**
     * Rewrites a password hash made with older parameters (at sign-in, when the password is at
     * hand), unless the password changed meanwhile. Not an edit of the user: updated_at stays.
     */
    async rehashPassword(id: string, previousHash: string, password: string): Promise<void> {
      const hashed = await hash(password);
      await db('users').where({ id, password_hash: previousHash }).update({ password_hash: hashed });
    },

    async count(): Promise<number> {
      const [{ count }] = await db('users').count<{ count: number }[]>('* as count');
      return count;
    },

    list(): Promise<UserRow[]> {
      return db<UserRow>('users').orderBy([{ column: 'email' }]);
    },

    async get(id: string): Promise<UserRow> {
      const row = await db<UserRow>('users').where({ id }).first();
      if (!row) throw NotFound('User not found');
      return row;
    },

    /** Admin creation; the email is unique case-insensitively (409). */
    async createUnique(input: NewUser, actor: Actor): Promise<UserRow> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const users = usersService(trx, opts);
        if (await users.findByEmail(input.email))
          throw Conflict(`A user with email '${input.email.toLowerCase()}' already exists`);
        const row = await users.create(input);
        return { result: row, audit: userChange(row.id, 'create', null, row) };
      });
    },

    async setRole(id: string, role: Role, actor: Actor): Promise<UserRow> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const user = await trx<UserRow>('users').where({ id }).forUpdate().first();
        if (!user) throw NotFound('User not found');
        if (user.role === 'admin' && role !== 'admin') {
          if ((await otherActiveAdmins(trx, id)) === 0)
            throw BadRequest(
              id === actor.userId
                ? 'You are the last admin and cannot give up the role'
                : 'Cannot demote the last admin',
            );
        }
        const [row] = await trx<UserRow>('users')
          .where({ id })
          .update({ role, updated_at: trx.fn.now() })
          .returning('*');
        return {
          result: row,
          audit: user.role === role ? null : userChange(id, 'change_role', { role: user.role }, { role }),
        };
      });
    },

    /**
     * Deactivates the user and ends every session and token of theirs at once. The last active
     * admin cannot be deactivated (400), under the same lock as a demotion, so two admins
     * deactivating (or demoting) each other at once leave one.
     */
    async deactivate(id: string, actor: Actor): Promise<void> {
      if (id === actor.userId) throw BadRequest('You cannot remove your own account');
      await transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const user = await trx<UserRow>('users').where({ id }).forUpdate().first();
        if (!user) throw NotFound('User not found');
        if (user.role === 'admin' && user.is_active && (await otherActiveAdmins(trx, id)) === 0) {
          throw BadRequest('Cannot deactivate the last active admin');
        }
        await trx('users').where({ id }).update({ is_active: false, updated_at: trx.fn.now() });
        await endSessionsOf(trx, id);
        const revokedTokens = await revokeAllTokensOf(trx, id);
        return {
          result: undefined,
          audit: user.is_active
            ? userChange(id, 'deactivate', { is_active: true }, { is_active: false, revokedTokens })
            : null,
        };
      });
    },

    /**
     * Undoes a deactivation: the user can sign in again (sessions and API tokens ended by the
     * deactivation stay ended). Reactivating an active user changes nothing.
     */
    async reactivate(id: string, actor: Actor): Promise<UserRow> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const user = await trx<UserRow>('users').where({ id }).forUpdate().first();
        if (!user) throw NotFound('User not found');
        const [row] = await trx<UserRow>('users')
          .where({ id })
          .update({ is_active: true, updated_at: trx.fn.now() })
          .returning('*');
        return {
          result: row,
          audit: user.is_active ? null : userChange(id, 'reactivate', { is_active: false }, { is_active: true }),
        };
      });
    },

    /** An admin sets a new password; the user's sessions and API tokens end. */
    async resetPassword(id: string, password: string, actor: Actor): Promise<void> {
      const target = await this.get(id);
      await assertAcceptablePassword(password, ownerOf(target), 'password');
      const hashed = await hash(password);
      await transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const user = await trx<UserRow>('users').where({ id }).forUpdate().first();
        if (!user) throw NotFound('User not found');
        await trx('users').where({ id }).update({ password_hash: hashed, updated_at: trx.fn.now() });
        await endSessionsOf(trx, id);
        const revokedTokens = await revokeAllTokensOf(trx, id);
        return {
          result: undefined,
          audit: userChange(
            id,
            'reset_password',
            { password_hash: user.password_hash },
            { password_hash: hashed, revokedTokens },
          ),
        };
      });
    },

    /**
     * The user changes their own password; their other sessions and all their API tokens end, this
     * session stays. Says whether it was the generated one, which had to change (bootstrap-admin.ts).
     */
    async changeOwnPassword(
      id: string,
      { currentPassword, newPassword }: { currentPassword: string; newPassword: string },
      actor: Actor,
      keepSessionId?: string,
    ): Promise<{ generatedPasswordChanged: boolean }> {
      const user = await this.get(id);
      if (!user.password_hash) throw BadRequest('This account has no local password; it signs in with single sign-on');
      if (!(await verifyPassword(currentPassword, user.password_hash)))
        throw BadRequest('Current password is incorrect');
      await assertAcceptablePassword(newPassword, ownerOf(user), 'newPassword');
      const hashed = await hash(newPassword);
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        await trx('users')
          .where({ id })
          .update({ password_hash: hashed, must_change_password: false, updated_at: trx.fn.now() });
        await endSessionsOf(trx, id, keepSessionId);
        const revokedTokens = await revokeAllTokensOf(trx, id);
        return {
          result: { generatedPasswordChanged: user.must_change_password },
          audit: userChange(
            id,
            'change_password',
            { password_hash: user.password_hash },
            { password_hash: hashed, revokedTokens },
          ),
        };
      });
    },

    /** Users change their own picking-list preference; admins anyone's (403 otherwise). */
    assertMayChangePickingList(id: string, actor: Pick<UserRow, 'id' | 'role'>): void {
      if (id !== actor.id && actor.role !== 'admin')
        throw Forbidden('You can only change your own picking-list preference');
    },

    async setPickingList(id: string, show: boolean, actor: Actor): Promise<UserRow> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const user = await trx<UserRow>('users').where({ id }).forUpdate().first();
        if (!user) throw NotFound('User not found');
        const [row] = await trx<UserRow>('users')
          .where({ id })
          .update({ show_picking_list: show, updated_at: trx.fn.now() })
          .returning('*');
        const audit =
          user.show_picking_list === show
            ? null
            : userChange(id, 'update', { show_picking_list: user.show_picking_list }, { show_picking_list: show });
        return { result: row, audit };
      });
    },

    /** Reasons a user cannot be deleted outright: the records they own (see NON_OWNING_REFERENCES). */
    async deletionCheck(id: string): Promise<DeletionCheckRecord> {
      await this.get(id);
      const refs = (await countReferences(db, 'users', id)).filter(
        (r) => !NON_OWNING_REFERENCES.has(`${r.table}.${r.column}`),
      );
      const reasons = describeReferences(refs, 0);
      return { canDelete: reasons.length === 0, reasons };
    },

    /** Deletes a user who owns no records (409 with the reasons otherwise). */
    async safeDelete(id: string, actor: Actor): Promise<void> {
      if (id === actor.userId) throw BadRequest('You cannot remove your own account');
      await transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const user = await trx<UserRow>('users').where({ id }).forUpdate().first();
        if (!user) throw NotFound('User not found');
        const { canDelete, reasons } = await usersService(trx).deletionCheck(id);
        if (!canDelete) throw Conflict('Cannot delete a user who owns records; deactivate them instead', { reasons });
        await endSessionsOf(trx, id);
        await trx('users').where({ id }).delete();
        return { result: undefined, audit: userChange(id, 'delete', user, null) };
      });
    },

    async permissionsOf(ids: string[]): Promise<Map<string, PermissionKey[]>> {
      const rows = await db('user_permissions')
        .whereIn('user_id', ids)
        .orderBy('permission')
        .select<{ user_id: string; permission: PermissionKey }[]>('user_id', 'permission');
      const map = new Map<string, PermissionKey[]>(ids.map((id) => [id, []]));
      const known = new Set<string>(PERMISSIONS.map((p) => p.key));
      for (const r of rows) if (known.has(r.permission)) map.get(r.user_id)?.push(r.permission);
      return map;
    },

    async listWithPermissions(): Promise<UserWithPermissions[]> {
      const users = await this.list();
      const granted = await this.permissionsOf(users.map((u) => u.id));
      return users.map((u) => ({ ...u, permissions: granted.get(u.id) ?? [] }));
    },

    /** Grants or revokes one permission; idempotent (a repeat changes nothing and records nothing). */
    async setPermission(
      userId: string,
      permission: PermissionKey,
      granted: boolean,
      actor: Actor,
    ): Promise<UserWithPermissions> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const users = usersService(trx, opts);
        const user = await trx<UserRow>('users').where({ id: userId }).forUpdate().first();
        if (!user) throw NotFound('User not found');
        const before = (await users.permissionsOf([userId])).get(userId) ?? [];
        const changed = granted
          ? (
              await trx('user_permissions')
                .insert({ user_id: userId, permission, granted_by: actor.userId })
                .onConflict(['user_id', 'permission'])
                .ignore()
                .returning('permission')
            ).length > 0
          : (await trx('user_permissions').where({ user_id: userId, permission }).delete()) > 0;
        const permissions = (await users.permissionsOf([userId])).get(userId) ?? [];
        const audit = changed
          ? userChange(
              userId,
              granted ? 'grant_permission' : 'revoke_permission',
              { permissions: before },
              { permissions },
            )
          : null;
        return { result: { ...user, permissions }, audit };
      });
    },

    async hasPermission(user: Pick<UserRow, 'id' | 'role'>, permission: PermissionKey): Promise<boolean> {
      if (user.role === 'admin') return true;
      // a permission is a member of staff's: a requester holds none, even one granted before a role change
      if (user.role === 'requester') return false;
      const row = await db('user_permissions').where({ user_id: user.id, permission }).first('permission');
      return row !== undefined;
    },
  };
}

const userChange = (
  id: string,
  action: string,
  before: AuditEntry['before'],
  after: AuditEntry['after'],
): AuditEntry => ({ entityType: 'user', entityId: id, action, before, after });

/**
 * The active admins other than this user, counted under a transaction-wide lock that serialises
 * demotions and deactivations, so two admins cannot remove each other at once.
 */
async function otherActiveAdmins(trx: Db, id: string): Promise<number> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['users.admins']);
  const [{ count }] = await trx('users')
    .where({ role: 'admin', is_active: true })
    .whereNot({ id })
    .count<{ count: number }[]>('* as count');
  return Number(count);
}

const ownerOf = (user: UserRow) => ({ email: user.email, firstName: user.first_name, lastName: user.last_name });
