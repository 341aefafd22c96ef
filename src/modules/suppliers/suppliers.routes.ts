import type { Deps } from '../../deps';
import { MANAGER_UNDER_STRICT, mayReadCostPrices } from '../../auth/access-profile';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { LinkItem, ItemSource } from '../sources/sources.schemas';
import { presentItemSource } from '../sources/sources.present';
import {
  CreateSupplier,
  Supplier,
  SupplierDeletionCheck,
  SupplierList,
  SupplierParams,
  SupplierRefused,
  SupplierWithItems,
  UpdateSupplier,
} from './suppliers.schemas';
import { presentSupplier, presentSupplierDeletionCheck, presentSupplierWithItems } from './suppliers.present';
import { suppliersService } from './suppliers.service';
import { SUPPLIER_DELETERS } from './suppliers.policy';

const notFound = { description: 'Supplier not found', schema: MessageBody };
/** An error answer's documentation: the description and the {message} body. */
const failure = (description: string) => ({ description, schema: MessageBody });

export function suppliersRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Suppliers');
  const suppliers = suppliersService(db);

  api.get(
    '/suppliers',
    {
      operationId: 'listSuppliers',
      summary: 'List suppliers (by name)',
      access: 'auth',
      responses: { 200: { description: 'Suppliers', schema: SupplierList } },
    },
    async (_req, res) => {
      res.json((await suppliers.list()).map(presentSupplier));
    },
  );

  api.post(
    '/suppliers',
    {
      operationId: 'createSupplier',
      summary: 'Create a supplier',
      description: 'The id is chosen by the client: 1-64 URL-safe characters. Only name is required besides it.',
      access: MANAGER_UNDER_STRICT,
      body: CreateSupplier,
      responses: {
        201: { description: 'Created', schema: Supplier },
        400: { description: 'Validation failed', schema: ValidationErrorBody },
        409: failure('The id is already taken'),
      },
    },
    async (req, res) => {
      const input = req.input.body;
      res.status(201).json(presentSupplier(await suppliers.create(input)));
    },
  );

  api.get(
    '/suppliers/:id/deletion-check',
    {
      operationId: 'checkSupplierDeletion',
      summary: 'Would a safe delete of this supplier succeed?',
      description:
        'Safe delete requires that nothing references the supplier: no orders, no item links, no vendor notes.',
      access: SUPPLIER_DELETERS,
      params: SupplierParams,
      responses: {
        200: { description: 'Check result', schema: SupplierDeletionCheck },
        403: failure('Not an admin'),
        404: notFound,
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentSupplierDeletionCheck(await suppliers.deletionCheck(id)));
    },
  );

  api.delete(
    '/suppliers/:id/safe',
    {
      operationId: 'deleteSupplierSafely',
      summary: 'Delete a supplier only when nothing references it',
      description: 'Answers 409 {message, reasons[]} when orders, item links or vendor notes reference the supplier.',
      access: SUPPLIER_DELETERS,
      params: SupplierParams,
      responses: {
        204: 'Deleted',
        403: failure('Not an admin'),
        404: notFound,
        409: { description: 'Referenced; reasons listed', schema: SupplierRefused },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await suppliers.safeDelete(id);
      res.status(204).end();
    },
  );

  api.get(
    '/suppliers/:id',
    {
      operationId: 'getSupplier',
      summary: 'A supplier with its item links',
      access: 'auth',
      params: SupplierParams,
      responses: { 200: { description: 'Supplier and its item sources', schema: SupplierWithItems }, 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const { supplier, links } = await suppliers.withItems(id);
      res.json(presentSupplierWithItems(supplier, links, await mayReadCostPrices(db, currentUser(req))));
    },
  );

  api.put(
    '/suppliers/:id',
    {
      operationId: 'updateSupplier',
      summary: 'Update a supplier',
      description: 'Partial update of name, contact, email, phone, address; the id cannot change.',
      access: MANAGER_UNDER_STRICT,
      params: SupplierParams,
      body: UpdateSupplier,
      responses: {
        200: { description: 'Updated', schema: Supplier },
        400: { description: 'Validation failed', schema: ValidationErrorBody },
        404: notFound,
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const input = req.input.body;
      res.json(presentSupplier(await suppliers.update(id, input)));
    },
  );

  api.delete(
    '/suppliers/:id',
    {
      operationId: 'deleteSupplier',
      summary: 'Delete a supplier',
      description:
        'Refused with 409 {message, reasons[]} while orders reference it. Its item links and vendor notes are removed with it.',
      access: SUPPLIER_DELETERS,
      params: SupplierParams,
      responses: {
        204: 'Deleted',
        403: failure('Not an admin'),
        404: notFound,
        409: { description: 'Orders reference it', schema: SupplierRefused },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await suppliers.remove(id);
      res.status(204).end();
    },
  );

  api.post(
    '/suppliers/:id/items',
    {
      operationId: 'linkSupplierItem',
      summary: 'Link an item to the supplier',
      description: 'Records the supplier price and notes for an item. One link per supplier and item.',
      access: MANAGER_UNDER_STRICT,
      params: SupplierParams,
      body: LinkItem,
      responses: {
        201: { description: 'Linked', schema: ItemSource },
        400: { description: 'Validation failed', schema: ValidationErrorBody },
        404: failure('Supplier or item not found'),
        409: failure('The item is already linked to this supplier'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const input = req.input.body;
      res.status(201).json(presentItemSource(await suppliers.linkItem(id, input)));
    },
  );

  return api.router;
}
