import { money } from '../../lib/money';
import { presentCategoryRef } from '../categories/categories.present';
import type { CatalogueChargeCode, CatalogueItem, CataloguePage } from './catalogue.schemas';
import { availabilityOf, type CatalogueChargeCodeRecord, type CatalogueRow } from './catalogue.service';
import { pageInfo } from '../../http/pagination';

/** An item as the catalogue shows it: the availability of what it has for sale, never its stock figure. */
export function presentCatalogueItem(row: CatalogueRow): CatalogueItem {
  return {
    id: row.id,
    name: row.name,
    sku: row.sku,
    description: row.description,
    category: presentCategoryRef({
      id: row.category_id,
      name: row.category_name,
      description: row.category_description,
      icon: row.category_icon,
      color: row.category_color,
    }),
    price: row.price,
    vatRate: row.vat_rate,
    availability: availabilityOf({ ...row, current_stock: row.for_sale }),
  };
}

export const presentCataloguePage = (
  { rows, total }: { rows: CatalogueRow[]; total: number },
  page: number,
  limit: number,
): CataloguePage => ({ items: rows.map(presentCatalogueItem), ...pageInfo(page, limit, total) });

export function presentCatalogueChargeCode(
  { code, spending }: CatalogueChargeCodeRecord,
  now = new Date(),
): CatalogueChargeCode {
  const valid = code.valid_from.getTime() <= now.getTime() && now.getTime() <= code.valid_until.getTime();
  return {
    code: code.code,
    title: code.title,
    validFrom: code.valid_from.toISOString(),
    validUntil: code.valid_until.toISOString(),
    valid,
    onHold: code.on_hold,
    holdReason: code.hold_reason,
    usable: valid && !code.on_hold,
    approverEmail: code.approver_email,
    approvalThreshold: code.approval_threshold,
    spending: {
      sales: spending.sales,
      totalAmount: money(spending.total_amount),
      refundedAmount: money(spending.refunded_amount),
      netAmount: money(spending.net_amount),
    },
  };
}
