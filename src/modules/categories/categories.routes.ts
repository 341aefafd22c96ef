import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { IdParams } from '../../http/validate';
import { presentCategory, presentCategoryDeletionCheck } from './categories.present';
import {
  Category,
  CategoryDeletionCheck,
  CategoryDeletionRefused,
  CategoryList,
  CreateCategory,
  UpdateCategory,
} from './categories.schemas';
import { categoriesService, type ItemsInCategory } from './categories.service';

const failure = (description: string) => ({ description, schema: MessageBody });

export function categoriesRoutes({ db, docs }: Deps, itemsInCategory: ItemsInCategory) {
  const api = new ApiRouter({ docs, db }, '/api', 'Categories');
  const categories = categoriesService(db);
  const notFound = { description: 'Category not found', schema: MessageBody };
  const invalid = { description: 'Validation failed', schema: ValidationErrorBody };

  api.get(
    '/categories',
    {
      operationId: 'listCategories',
      summary: 'All categories, by name',
      access: 'auth',
      responses: { 200: { description: 'Categories', schema: CategoryList } },
    },
    async (_req, res) => {
      res.json((await categories.list()).map(presentCategory));
    },
  );

  api.post(
    '/categories',
    {
      operationId: 'createCategory',
      summary: 'Create a category',
      description: 'Names are unique case-insensitively (409 on a clash). Answers 201 with the created category.',
      access: 'manager',
      body: CreateCategory,
      responses: { 201: { description: 'Created', schema: Category }, 400: invalid, 409: failure('Name already used') },
    },
    async (req, res) => {
      const body = req.input.body;
      res.status(201).json(presentCategory(await categories.create(body)));
    },
  );

  api.put(
    '/categories/:id',
    {
      operationId: 'updateCategory',
      summary: 'Update a category',
      description:
        'Body: any of name, description, icon, color, buyerEmails (at least one). Answers 200 with the updated category. ' +
        'buyerEmails: who gets the daily low-stock digest of its items ([]: the managers).',
      access: 'manager',
      params: IdParams,
      body: UpdateCategory,
      responses: {
        200: { description: 'Updated', schema: Category },
        400: invalid,
        404: notFound,
        409: failure('Name already used'),
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const body = req.input.body;
      res.json(presentCategory(await categories.update(id, body)));
    },
  );

  api.delete(
    '/categories/:id',
    {
      operationId: 'deleteCategory',
      summary: 'Delete a category',
      description: 'Refused with 409 {message, itemCount} while any item (active or inactive) uses the category.',
      access: 'admin',
      params: IdParams,
      responses: { 204: 'Deleted', 404: notFound, 409: { description: 'Items use the category', schema: MessageBody } },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await categories.delete(id, itemsInCategory);
      res.status(204).end();
    },
  );

  api.get(
    '/categories/:id/deletion-check',
    {
      operationId: 'checkCategoryDeletion',
      summary: 'Would a safe delete of this category succeed?',
      description:
        'Lists every kind of record that references the category (items, charge-code exclusions, ...), with counts.',
      access: 'admin',
      params: IdParams,
      responses: { 200: { description: 'Check result', schema: CategoryDeletionCheck }, 404: notFound },
    },
    async (req, res) => {
      const { id } = req.input.params;
      res.json(presentCategoryDeletionCheck(await categories.deletionCheck(id)));
    },
  );

  api.delete(
    '/categories/:id/safe',
    {
      operationId: 'deleteCategorySafely',
      summary: 'Delete a category only when nothing references it',
      description: 'Answers 409 {message, reasons[]} when any record references the category.',
      access: 'admin',
      params: IdParams,
      responses: {
        204: 'Deleted',
        404: notFound,
        409: { description: 'Referenced; reasons listed', schema: CategoryDeletionRefused },
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      await categories.safeDelete(id);
      res.status(204).end();
    },
  );

  return api.router;
}
