import type { VatRate, VatRateList } from './vat-rates.schemas';
import type { VatRateRow } from './vat-rates.service';

export function presentVatRate(row: VatRateRow): VatRate {
  return {
    id: row.id,
    name: row.name,
    rate: Number(row.rate),
    isDefault: row.is_default,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const presentVatRateList = (rows: VatRateRow[]): VatRateList => ({ rates: rows.map(presentVatRate) });
