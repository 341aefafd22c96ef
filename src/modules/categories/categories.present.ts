import type { Category, CategoryDeletionCheck, CategoryRef } from './categories.schemas';
import type { CategoryDeletionCheckRecord, CategoryRow } from './categories.service';

export function presentCategory(row: CategoryRow): Category {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    icon: row.icon,
    color: row.color,
    buyerEmails: row.buyer_emails,
    coshhRequired: row.coshh_required,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function presentCategoryRef(
  row: Pick<CategoryRow, 'id' | 'name' | 'description' | 'icon' | 'color'>,
): CategoryRef {
  return { id: row.id, name: row.name, description: row.description, icon: row.icon, color: row.color };
}

export function presentCategoryDeletionCheck(check: CategoryDeletionCheckRecord): CategoryDeletionCheck {
  return { canDelete: check.canDelete, reasons: check.reasons };
}
