import { z } from 'zod';
import { OrderParams, OrderWithItems, ReceiveOrder } from '../modules/orders/orders.schemas';
import { ItemSource, LinkItem } from '../modules/sources/sources.schemas';
import { Supplier, SupplierIdValue } from '../modules/suppliers/suppliers.schemas';
import { itemRefFields, oneItemRef, oneItemRefIssue } from './mcp-tools.schemas';

/**
 * The /mcp tools of purchasing: the API's own request and answer schemas, so a tool refuses and
 * answers exactly what its route does; the descriptions are what the client's model reads.
 */

const SupplierId = SupplierIdValue.describe("the supplier's id (e.g. fisher)");
const OrderRef = OrderParams.shape.id.describe('the order: its orderId (O1001) or numeric id');

export const NoInput = z.object({});
export const ListSuppliersOutput = z.object({ suppliers: z.array(Supplier) });
export const GetSupplierInput = z.object({ supplierId: SupplierId });
export const SupplierOutput = z.object({ supplier: Supplier });
export const LinkItemSourceInput = LinkItem.extend({ supplierId: SupplierId });
export const ItemSourceOutput = z.object({ source: ItemSource });
export const ItemSourcesInput = z.object(itemRefFields).refine(oneItemRef, oneItemRefIssue);
export const ItemSourcesOutput = z.object({ sources: z.array(ItemSource.extend({ supplierName: z.string() })) });

export const GetPurchaseOrderInput = z.object({ orderId: OrderRef });
export const PurchaseOrderOutput = z.object({ order: OrderWithItems });
export const ReceivePurchaseOrderInput = ReceiveOrder.extend({ orderId: OrderRef });
