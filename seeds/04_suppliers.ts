import type { Knex } from 'knex';
import { D, money } from '../src/lib/money';

/** Two demo suppliers, each linked to a few items when the inventory seed has made some. */
export async function seed(knex: Knex): Promise<void> {
  const suppliers = [
    {
      id: 'fisher-scientific',
      name: 'Fisher Scientific UK',
      contact: 'Customer Services',
      email: 'orders@fisher.example.com',
      phone: '01509 555 200',
      address: 'Bishop Meadow Road, Loughborough LE11 5RG',
    },
    {
      id: 'vwr-international',
      name: 'VWR International',
      contact: 'Account Manager',
      email: 'uk.sales@vwr.example.com',
      phone: '01455 555 000',
      address: 'Hunter Boulevard, Lutterworth LE17 4XN',
    },
  ];
  await knex('suppliers').insert(suppliers).onConflict('id').ignore();

  // Link by looking the items up: none yet means nothing to link.
  const items = await knex('items').where({ is_active: true }).orderBy('id').limit(6).select('id', 'price');
  const links = items.map((item: { id: number; price: string }, i: number) => ({
    supplier_id: suppliers[i % 2].id,
    item_id: item.id,
    // the supplier's price: 60% of the counter price
    price: money(new D(item.price).times('0.6')),
    notes: i % 2 === 0 ? 'Next-day delivery' : 'Minimum order 5 units',
  }));
  if (links.length > 0) await knex('item_sources').insert(links).onConflict(['supplier_id', 'item_id']).ignore();
}
