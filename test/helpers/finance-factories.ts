import type { Knex } from 'knex';
import type supertest from 'supertest';

export type SoldSale = { id: number; saleId: string };

/** Records a sale through POST /api/sales (priced by the service, as at the counter). */
export async function sell(
  agent: supertest.Agent,
  chargeCode: string,
  items: { itemId: number; quantity: number }[],
  opts: { vatApplied?: boolean } = {},
): Promise<SoldSale> {
  const res = await agent.post('/api/sales').send({ chargeCode, items, vatApplied: opts.vatApplied ?? true });
  if (res.status !== 201) throw new Error(`sale refused: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.sale.id, saleId: res.body.sale.saleId };
}

/** Refunds quantities of a sale through PATCH /api/sales/{id}/refund (the agent needs sales.refund). */
export async function refund(
  agent: supertest.Agent,
  sale: SoldSale,
  items: { itemId: number; refundQty: number }[],
): Promise<void> {
  await agent.patch(`/api/sales/${sale.id}/refund`).send({ items }).expect(200);
}

/** Moves a sale to another recording time (its refunds keep theirs). */
export async function recordedAt(db: Knex, sale: SoldSale, at: string): Promise<void> {
  await db('sales')
    .where({ id: sale.id })
    .update({ created_at: new Date(at) });
}

/** Moves every refund line of a sale to another recording time. */
export async function refundsRecordedAt(db: Knex, sale: SoldSale, at: string): Promise<void> {
  await db('sale_refund_lines')
    .where({ sale_id: sale.id })
    .update({ recorded_at: new Date(at) });
}
