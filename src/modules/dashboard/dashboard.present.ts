import { quantityNumber } from '../../lib/money';
import type { LowStockItem as LowStockRecord } from '../items/items.queries';
import type { CategoryStat, DashboardStats, LowStockItem } from './dashboard.schemas';
import type { CategoryStatRecord, StatsRecord } from './dashboard.service';

/** totalValue leaves as a JSON number (the spec's aggregate figure). */
export function presentStats(stats: StatsRecord): DashboardStats {
  return {
    totalItems: stats.totalItems,
    lowStockItems: stats.lowStockItems,
    totalValue: Number(stats.totalValue),
    activeUsers: stats.activeUsers,
  };
}

export function presentLowStockItem(item: LowStockRecord): LowStockItem {
  return {
    id: item.id,
    name: item.name,
    sku: item.sku,
    currentStock: quantityNumber(item.currentStock),
    minimumStock: quantityNumber(item.minimumStock),
    price: item.price,
    category: { id: item.category.id, name: item.category.name, color: item.category.color },
  };
}

export function presentCategoryStat(stat: CategoryStatRecord): CategoryStat {
  return {
    category: { id: stat.category.id, name: stat.category.name, color: stat.category.color },
    itemCount: stat.itemCount,
    totalValue: Number(stat.totalValue),
  };
}
