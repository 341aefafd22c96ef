import { mayReadCostPrices } from '../auth/access-profile';
import type { Db } from '../db/knex';
import { orderReceiptService } from '../modules/orders/orders.receive';
import { presentOrderDetail, presentReceiveResult } from '../modules/orders/orders.present';
import { CreateOrder, ReceiveOrderResult } from '../modules/orders/orders.schemas';
import { ordersService } from '../modules/orders/orders.service';
import { presentReplenishmentOrders, presentSuggestions } from '../modules/replenishment/replenishment.present';
import {
  CreateReplenishmentOrders,
  ReplenishmentOrdersResult,
  ReplenishmentSuggestions,
} from '../modules/replenishment/replenishment.schemas';
import { replenishmentService } from '../modules/replenishment/replenishment.service';
import { presentItemSource } from '../modules/sources/sources.present';
import { presentSupplier, presentSupplierWithItems } from '../modules/suppliers/suppliers.present';
import { CreateSupplier, SupplierWithItems } from '../modules/suppliers/suppliers.schemas';
import { suppliersService } from '../modules/suppliers/suppliers.service';
import { mcpDataService } from '../modules/mcp-data/mcp-data.service';
import { requireCreatorRole, type AddTool, type ToolContext } from './mcp-tool-spec';
import {
  GetPurchaseOrderInput,
  GetSupplierInput,
  ItemSourceOutput,
  ItemSourcesInput,
  ItemSourcesOutput,
  LinkItemSourceInput,
  ListSuppliersOutput,
  NoInput,
  PurchaseOrderOutput,
  ReceivePurchaseOrderInput,
  SupplierOutput,
} from './mcp-tools.purchasing.schemas';

const READ = { readOnlyHint: true, openWorldHint: false } as const;
const CREATE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

/**
 * Suppliers, item sources, purchase orders and replenishment, through the same services as the API
 * and with its rules: reads for every key; writes for a key with the write scope, whose creator
 * still holds the role the route asks (manager). Cost prices show as the creator may read them.
 */
export function registerPurchasingTools(addTool: AddTool, db: Db, context: ToolContext) {
  const suppliers = suppliersService(db);
  const orders = ordersService(db);
  const replenishment = replenishmentService(db);
  const creator = context.key.creator;

  addTool('list_suppliers', {
    title: 'List suppliers',
    description: 'Every supplier, by name, with contact details.',
    input: NoInput,
    output: ListSuppliersOutput,
    annotations: READ,
    run: async () => ({ suppliers: (await suppliers.list()).map(presentSupplier) }),
  });

  addTool('get_supplier', {
    title: 'Get a supplier and its item sources',
    description:
      "One supplier with the items it supplies: the supplier's price, part number and whether it is the item's preferred source.",
    input: GetSupplierInput,
    output: SupplierWithItems,
    annotations: READ,
    run: async ({ supplierId }) => {
      const { supplier, links } = await suppliers.withItems(supplierId);
      return presentSupplierWithItems(supplier, links, await mayReadCostPrices(db, creator));
    },
  });

  addTool('item_sources', {
    title: 'Where an item can be bought',
    description:
      "The suppliers of one item (by id or SKU), by supplier name: the supplier's price, part number and whether it is the preferred source.",
    input: ItemSourcesInput,
    output: ItemSourcesOutput,
    annotations: READ,
    run: async (ref) => {
      const [itemId] = await mcpDataService(db).itemIdsFor([ref]);
      const costPrices = await mayReadCostPrices(db, creator);
      return {
        sources: (await suppliers.sourcesOfItem(itemId)).map((row) => ({
          ...presentItemSource(row, costPrices),
          supplierName: row.supplier_name,
        })),
      };
    },
  });

  addTool('get_purchase_order', {
    title: 'Get a purchase order',
    description:
      'One purchase order with its lines: ordered, received and outstanding quantities (orderItemId is what receive_purchase_order takes).',
    input: GetPurchaseOrderInput,
    output: PurchaseOrderOutput,
    annotations: READ,
    run: async ({ orderId }) => ({
      order: presentOrderDetail(await orders.get(orderId), await mayReadCostPrices(db, creator)),
    }),
  });

  addTool('replenishment_suggestions', {
    title: 'What to reorder',
    description:
      'Items at or below their minimum stock, net of what pending orders bring, grouped by the supplier to order from (the preferred ' +
      'source, else the cheapest); items short with no source apart, and items whose shortfall is already on order under covered.',
    input: NoInput,
    output: ReplenishmentSuggestions,
    annotations: READ,
    run: async () => {
      requireCreatorRole(context, 'manager', 'Replenishment suggestions');
      return presentSuggestions(await replenishment.suggestions());
    },
  });

  if (!context.canWrite) return;

  addTool('create_supplier', {
    title: 'Create a supplier',
    description:
      'A new supplier with its id (URL-safe, e.g. fisher), name and contact details. An id already taken is refused.',
    input: CreateSupplier,
    output: SupplierOutput,
    annotations: CREATE,
    run: async (input) => {
      requireCreatorRole(context, 'manager', 'Creating suppliers');
      return { supplier: presentSupplier(await suppliers.create(input)) };
    },
  });

  addTool('link_item_source', {
    title: 'Link an item to a supplier',
    description:
      "Records that a supplier supplies an item: its price, part number and notes, and optionally makes it the item's preferred source. One link per supplier and item.",
    input: LinkItemSourceInput,
    output: ItemSourceOutput,
    annotations: CREATE,
    run: async ({ supplierId, ...link }) => {
      requireCreatorRole(context, 'manager', 'Linking item sources');
      return { source: presentItemSource(await suppliers.linkItem(supplierId, link)) };
    },
  });

  addTool('create_purchase_order', {
    title: 'Create a purchase order',
    description:
      'A pending order to a supplier: each line names an item (itemId) or is free text (name), with quantity and unit cost as decimal strings. ' +
      'Nothing is received and no stock moves until receive_purchase_order.',
    input: CreateOrder,
    output: PurchaseOrderOutput,
    annotations: CREATE,
    run: async (input) => {
      requireCreatorRole(context, 'manager', 'Purchase orders');
      return { order: presentOrderDetail(await orders.create(input, creator.id)) };
    },
  });

  addTool('receive_purchase_order', {
    title: 'Receive goods against a purchase order',
    description:
      'Records goods received on lines of an order (orderItemId from get_purchase_order, at most what is outstanding). Lines with an item put ' +
      'stock in through the stock ledger unless addToInventory is false; the order becomes received when every line is complete.',
    input: ReceivePurchaseOrderInput,
    output: ReceiveOrderResult,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async ({ orderId, ...receipt }) => {
      requireCreatorRole(context, 'manager', 'Receiving orders');
      return presentReceiveResult(await orderReceiptService(db).receive(orderId, receipt, context.actor));
    },
  });

  addTool('create_replenishment_orders', {
    title: 'Order what replenishment suggests',
    description:
      'Creates pending orders from the replenishment suggestions, one per supplier. itemIds limits it to those items; quantities orders ' +
      'a given quantity instead of the suggested one. Asking again while those orders are pending creates nothing for the same shortfall.',
    input: CreateReplenishmentOrders,
    output: ReplenishmentOrdersResult,
    annotations: CREATE,
    run: async (request) => {
      requireCreatorRole(context, 'manager', 'Replenishment orders');
      return presentReplenishmentOrders(await replenishment.createOrders(request, context.actor));
    },
  });
}
