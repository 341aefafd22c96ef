import type { Db } from '../../db/knex';
import { hashPassword } from '../../auth/passwords';
import type { PermissionKey } from '../../auth/permissions';
import type { Role, User, UserRef } from './users.schemas';

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
  created_at: Date;
  updated_at: Date;
};

/** The only way a user leaves the service: the password hash never does. */
export function presentUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    role: row.role,
    isActive: row.is_active,
    showPickingList: row.show_picking_list,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function presentUserRef(row: Pick<UserRow, 'id' | 'email' | 'first_name' | 'last_name'>): UserRef {
  return { id: row.id, email: row.email, firstName: row.first_name, lastName: row.last_name };
}

export type NewUser = { email: string; firstName: string; lastName: string; role: Role; password?: string; oidcSubject?: string };

export function usersService(db: Db) {
  return {
    findById(id: string): Promise<UserRow | undefined> {
      return db<UserRow>('users').where({ id }).first();
    },

    findByEmail(email: string): Promise<UserRow | undefined> {
      return db<UserRow>('users').whereRaw('lower(email) = lower(?)', [email]).first();
    },

    async create(input: NewUser): Promise<UserRow> {
      const [row] = await db<UserRow>('users')
        .insert({
          email: input.email.toLowerCase(),
          first_name: input.firstName,
          last_name: input.lastName,
          role: input.role,
          password_hash: input.password ? await hashPassword(input.password) : null,
          oidc_subject: input.oidcSubject ?? null,
        })
        .returning('*');
      return row;
    },

    async count(): Promise<number> {
      const [{ count }] = await db('users').count<{ count: number }[]>('* as count');
      return count;
    },

    async hasPermission(user: Pick<UserRow, 'id' | 'role'>, permission: PermissionKey): Promise<boolean> {
      if (user.role === 'admin') return true;
      const row = await db('user_permissions').where({ user_id: user.id, permission }).first('permission');
      return row !== undefined;
    },
  };
}
