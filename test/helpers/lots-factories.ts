import type supertest from 'supertest';

/** The UK calendar date (YYYY-MM-DD) `days` from today: lot expiries are dates on the stores' calendar (issue 42). */
export const day = (days: number): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date(Date.now() + days * 86_400_000));

/** YYMMDD of a YYYY-MM-DD, as GS1's (17) carries it. */
export const yymmdd = (date: string): string => date.slice(2).replaceAll('-', '');

let serial = 0;

/**
 * An item made through POST /api/items by `agent` (a manager), tracked by lot unless told, priced 5.00 unless
 * told, with a SKU no other test uses: `<prefix>-<now>-<n>`. `name` is the name, or makes it from the SKU;
 * `body` adds to (or overrides) the request. Gives the item's id, SKU, name and the created item as answered.
 */
export async function createItem(
  agent: supertest.Agent,
  options: {
    categoryId: number;
    prefix: string;
    name?: string | ((sku: string) => string);
    price?: string;
    tracking?: 'lot' | 'none';
    body?: Record<string, unknown>;
  },
): Promise<{ id: number; sku: string; name: string; created: Record<string, unknown> }> {
  const sku = `${options.prefix}-${Date.now()}-${++serial}`;
  const name = typeof options.name === 'function' ? options.name(sku) : (options.name ?? sku);
  const res = await agent
    .post('/api/items')
    .send({
      name,
      sku,
      categoryId: options.categoryId,
      price: options.price ?? '5.00',
      tracking: options.tracking ?? 'lot',
      ...options.body,
    })
    .expect(201);
  return { id: res.body.id as number, sku, name, created: res.body as Record<string, unknown> };
}

/** A manual stock `in` of `quantity` into lot `lotNumber` of item `id` (the request, for the caller to expect on). */
export const stockInLot = (
  agent: supertest.Agent,
  id: number,
  lotNumber: string,
  quantity: number,
  expiresOn?: string | null,
) => agent.post(`/api/items/${id}/stock`).send({ type: 'in', quantity, lotNumber, expiresOn });
