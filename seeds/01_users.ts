import type { Knex } from 'knex';
import { usersService } from '../src/modules/users/users.service';

/** Demo accounts (printed in README). The first admin comes from start-up, not from here. */
export const DEMO_USERS = [
  {
    email: 'manager@example.ac.uk',
    firstName: 'Morgan',
    lastName: 'Manager',
    role: 'manager',
    password: 'manager-demo-password',
  },
  { email: 'user@example.ac.uk', firstName: 'Uma', lastName: 'User', role: 'user', password: 'user-demo-password' },
] as const;

export async function seed(knex: Knex): Promise<void> {
  const users = usersService(knex);
  for (const demo of DEMO_USERS) {
    if (await users.findByEmail(demo.email)) continue;
    await users.create({ ...demo });
  }
}
