import type { Db } from '../../db/knex';
import { BadRequest, NotFound } from '../../http/errors';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { transaction } from '../../db/transaction';
import type { CreateVatRate, UpdateVatRate } from './vat-rates.schemas';

export type VatRateRow = {
  id: number;
  name: string;
  rate: string;
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
};

/** VAT rates; exactly one is the default, which applies to every item without its own rate. */
export function vatRatesService(db: Db) {
  async function get(id: number, forUpdate = false): Promise<VatRateRow> {
    const query = db<VatRateRow>('vat_rates').where({ id });
    if (forUpdate) query.forUpdate();
    const row = await query.first();
    if (!row) throw NotFound('VAT rate not found');
    return row;
  }

  /** Clears the current default (locked first, so concurrent switches queue). */
  async function clearDefault(trx: Db): Promise<void> {
    await trx('vat_rates').where({ is_default: true }).forUpdate().select('id');
    await trx('vat_rates').where({ is_default: true }).update({ is_default: false, updated_at: trx.fn.now() });
  }

  return {
    get,

    list(): Promise<VatRateRow[]> {
      return db<VatRateRow>('vat_rates').orderBy([
        { column: 'is_default', order: 'desc' },
        { column: 'rate', order: 'desc' },
        { column: 'id' },
      ]);
    },

    create(input: CreateVatRate, actor: Actor): Promise<VatRateRow> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        if (input.isDefault) await clearDefault(trx);
        const [row] = await trx<VatRateRow>('vat_rates')
          .insert({ name: input.name, rate: input.rate, is_default: input.isDefault })
          .returning('*');
        return { result: row, audit: { entityType: 'vat_rate', entityId: row.id, action: 'create', after: row } };
      });
    },

    update(id: number, input: UpdateVatRate, actor: Actor): Promise<VatRateRow> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const current = await vatRatesService(trx).get(id, true);
        if (input.isDefault === false && current.is_default) {
          throw BadRequest('The default VAT rate cannot be unset; make another rate the default instead');
        }
        if (input.isDefault === true && !current.is_default) await clearDefault(trx);
        const changes: Record<string, unknown> = { updated_at: trx.fn.now() };
        if (input.name !== undefined) changes.name = input.name;
        if (input.rate !== undefined) changes.rate = input.rate;
        if (input.isDefault !== undefined) changes.is_default = input.isDefault;
        const [row] = await trx<VatRateRow>('vat_rates').where({ id }).update(changes).returning('*');
        return {
          result: row,
          audit: { entityType: 'vat_rate', entityId: id, action: 'update', before: current, after: row },
        };
      });
    },

    delete(id: number, actor: Actor): Promise<void> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const row = await vatRatesService(trx).get(id, true);
        if (row.is_default) throw BadRequest('The default VAT rate cannot be deleted');
        await trx('vat_rates').where({ id, is_default: false }).delete();
        return { result: undefined, audit: { entityType: 'vat_rate', entityId: id, action: 'delete', before: row } };
      });
    },
  };
}
