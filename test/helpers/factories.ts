import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { hashPassword } from '../../src/auth/passwords';
import { TEST_PASSWORD_HASH_COST } from '../../src/config';
import type { Role } from '../../src/auth/roles';
import type { UserRow } from '../../src/modules/users/users.service';

export const TEST_PASSWORD = 'correct horse battery staple';

const unique = () => randomBytes(4).toString('hex');

let passwordHash: Promise<string> | undefined;

export async function buildUser(
  db: Knex,
  overrides: Partial<{
    email: string;
    firstName: string;
    lastName: string;
    role: Role;
    isActive: boolean;
    password: string;
  }> = {},
): Promise<UserRow> {
  // Hashing is deliberately slow; the shared test password is hashed once per file, at the
  // cost testApp() uses (NODE_ENV=test), so signing in does not rewrite it.
  passwordHash ??= hashPassword(TEST_PASSWORD, TEST_PASSWORD_HASH_COST);
  const [row] = await db<UserRow>('users')
    .insert({
      email: overrides.email ?? `user-${unique()}@example.ac.uk`,
      first_name: overrides.firstName ?? 'Test',
      last_name: overrides.lastName ?? 'User',
      role: overrides.role ?? 'user',
      is_active: overrides.isActive ?? true,
      password_hash: overrides.password
        ? await hashPassword(overrides.password, TEST_PASSWORD_HASH_COST)
        : await passwordHash,
    })
    .returning('*');
  return row;
}

export async function buildCategory(
  db: Knex,
  overrides: Partial<{ name: string; description: string; icon: string; color: string }> = {},
) {
  const [row] = await db('categories')
    .insert({
      name: overrides.name ?? `Category ${unique()}`,
      description: overrides.description ?? 'Test category',
      icon: overrides.icon ?? 'fa-box',
      color: overrides.color ?? 'blue',
    })
    .returning('*');
  return row as { id: number; name: string };
}

export async function buildItem(
  db: Knex,
  overrides: Partial<{
    name: string;
    sku: string;
    description: string;
    categoryId: number;
    price: string;
    vatRate: string | null;
    currentStock: string | number;
    minimumStock: string | number;
    isActive: boolean;
    createdBy: string;
  }> = {},
) {
  const categoryId = overrides.categoryId ?? (await buildCategory(db)).id;
  const [row] = await db('items')
    .insert({
      name: overrides.name ?? `Item ${unique()}`,
      sku: overrides.sku ?? `SKU-${unique()}`,
      description: overrides.description ?? null,
      category_id: categoryId,
      price: overrides.price ?? '10.00',
      vat_rate: overrides.vatRate ?? null,
      current_stock: overrides.currentStock ?? 0,
      minimum_stock: overrides.minimumStock ?? 0,
      is_active: overrides.isActive ?? true,
      created_by: overrides.createdBy ?? null,
    })
    .returning('*');
  return row as { id: number; name: string; sku: string; category_id: number; current_stock: string };
}
