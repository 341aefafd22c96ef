import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import type { Deps } from '../deps';
import { NotFound } from '../http/errors';
import { IntId } from '../http/validate';
import { ItemQuery } from '../modules/items/items.schemas';
import { presentItem } from '../modules/items/items.present';
import { itemsService } from '../modules/items/items.service';
import { LinkItem, UpdateItemSource } from '../modules/sources/sources.schemas';
import { presentItemSource } from '../modules/sources/sources.present';
import { sourcesService } from '../modules/sources/sources.service';
import { CreateSupplier, SupplierParams, UpdateSupplier } from '../modules/suppliers/suppliers.schemas';
import {
  presentSupplier,
  presentSupplierDeletionCheck,
  presentSupplierWithItems,
} from '../modules/suppliers/suppliers.present';
import { suppliersService } from '../modules/suppliers/suppliers.service';
import { mayDeleteSuppliers, SUPPLIER_DELETERS } from '../modules/suppliers/suppliers.policy';
import { attempt, checked, flash, textField, type FieldErrors } from './forms';
import { PageRouter, type PageRequest } from './page-route';
import { admitsUnderProfile, MANAGER_UNDER_STRICT } from '../auth/access-profile';
import { currentUser } from '../auth/guards';

/** How many items the link form's search offers. */
const MATCHES_SHOWN = 10;

const SUPPLIER_FIELDS = ['id', 'name', 'contact', 'email', 'phone', 'address'] as const;
type SupplierForm = Record<(typeof SUPPLIER_FIELDS)[number], string>;
type LinkForm = { item: string; price: string; supplierSku: string; notes: string; preferred: boolean };
type FormState<T> = { values: T; errors: FieldErrors; message: string | null };

const SourceParams = z.object({ id: SupplierParams.shape.id, sourceId: IntId });
const ItemMatchesQuery = ItemQuery.pick({ search: true });

const readSupplierForm = (body: Record<string, unknown>): SupplierForm =>
  Object.fromEntries(SUPPLIER_FIELDS.map((field) => [field, textField(body[field])])) as SupplierForm;

/** The form as the API's body: a blank optional field clears it (null), as the API's schemas read it. */
const supplierBody = ({ id, name, ...optional }: SupplierForm) => ({
  id,
  name,
  ...Object.fromEntries(Object.entries(optional).map(([field, value]) => [field, value.trim() === '' ? null : value])),
});

/** The link form as typed. */
const typedLink = (body: Record<string, unknown>): LinkForm => ({
  item: textField(body.item).trim(),
  price: textField(body.price),
  supplierSku: textField(body.supplierSku),
  notes: textField(body.notes),
  preferred: checked(body.preferred),
});

const BLANK_SUPPLIER: SupplierForm = { id: '', name: '', contact: '', email: '', phone: '', address: '' };
const BLANK_LINK: LinkForm = { item: '', price: '', supplierSku: '', notes: '', preferred: false };
const fresh = <T>(values: T): FormState<T> => ({ values, errors: {}, message: null });

/** /suppliers: the list and the new-supplier form, a supplier with its item sources, its edit and delete pages. */
export function suppliersPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const suppliers = suppliersService(db);
  const sources = sourcesService(db);
  const items = itemsService(db);
  /** creating and editing suppliers, linking items and marking a preferred source */
  const keepers = MANAGER_UNDER_STRICT;
  const mayKeep = (req: Request) => admitsUnderProfile(db, currentUser(req), MANAGER_UNDER_STRICT);

  pages.use('/suppliers', (req, res, next) => {
    res.locals.stylesheets = ['/assets/css/suppliers.css'];
    // the delete buttons: the policy the API's guards keep
    res.locals.deletesSuppliers = req.user !== undefined && mayDeleteSuppliers(req.user);
    next();
  });

  async function renderList(
    req: Request,
    res: Response,
    status = 200,
    form: FormState<SupplierForm> = fresh(BLANK_SUPPLIER),
  ) {
    const [list, mayCreate] = await Promise.all([suppliers.list(), mayKeep(req)]);
    res
      .status(status)
      .render('suppliers/index', { title: 'Suppliers', suppliers: list.map(presentSupplier), form, mayCreate });
  }

  async function renderSupplier(
    req: Request,
    res: Response,
    { id, status = 200, linkForm = fresh(BLANK_LINK) }: { id: string; status?: number; linkForm?: FormState<LinkForm> },
  ) {
    // editing and the supplier's prices follow the same rule (MANAGER_UNDER_STRICT): one read of the setting
    const [{ supplier, links }, mayEdit] = await Promise.all([suppliers.withItems(id), mayKeep(req)]);
    res.status(status).render('suppliers/show', {
      title: supplier.name,
      supplier: presentSupplierWithItems(supplier, links, mayEdit),
      link: linkForm,
      mayEdit,
      costPrices: mayEdit,
    });
  }

  function renderEdit(
    res: Response,
    {
      id,
      supplierName,
      form,
      status = 200,
    }: { id: string; supplierName: string; form: FormState<SupplierForm>; status?: number },
  ) {
    res.status(status).render('suppliers/edit', { title: `Edit ${supplierName}`, supplierId: id, form });
  }

  pages.get('/suppliers', { access: 'user' }, async (req, res) => {
    await renderList(req, res);
  });

  // As the API's POST /api/suppliers: everyone signed in, managers under access.profile strict.
  pages.post(
    '/suppliers',
    { access: keepers, form: CreateSupplier, fromForm: (body) => supplierBody(readSupplierForm(body)) },
    async (req, res) => {
      const values = readSupplierForm(req.body);
      const result = await attempt(() => suppliers.create(req.input.form));
      if (!result.ok)
        return renderList(req, res, result.status, { values, errors: result.errors, message: result.message });
      flash(req, `Supplier '${result.value.name}' created`);
      res.redirect(303, `/suppliers/${encodeURIComponent(result.value.id)}`);
    },
  );

  pages.get('/suppliers/:id', { access: 'user', params: SupplierParams }, async (req, res) => {
    await renderSupplier(req, res, { id: req.input.params.id });
  });

  pages.get('/suppliers/:id/edit', { access: keepers, params: SupplierParams }, async (req, res) => {
    const { id } = req.input.params;
    const supplier = presentSupplier(await suppliers.get(id));
    const values = Object.fromEntries(SUPPLIER_FIELDS.map((field) => [field, supplier[field] ?? ''])) as SupplierForm;
    renderEdit(res, { id, supplierName: supplier.name, form: fresh(values) });
  });

  pages.post(
    '/suppliers/:id',
    {
      access: keepers,
      params: SupplierParams,
      form: UpdateSupplier,
      // the id cannot change: the form does not send it
      fromForm: (body) => {
        const { id: _unchanged, ...changes } = supplierBody(readSupplierForm(body));
        return changes;
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const values = { ...readSupplierForm(req.body), id };
      const result = await attempt(() => suppliers.update(id, req.input.form));
      if (!result.ok)
        return renderEdit(res, {
          id,
          supplierName: (await suppliers.get(id)).name,
          form: { values, errors: result.errors, message: result.message },
          status: result.status,
        });
      flash(req, `Supplier '${result.value.name}' saved`);
      res.redirect(303, `/suppliers/${encodeURIComponent(id)}`);
    },
  );

  // Deleting (admins, as the API): the safe-deletion check first, with what refers to the supplier.
  pages.get('/suppliers/:id/delete', { access: SUPPLIER_DELETERS, params: SupplierParams }, async (req, res) => {
    const { id } = req.input.params;
    const [supplier, check, blocking] = await Promise.all([
      suppliers.get(id),
      suppliers.deletionCheck(id),
      suppliers.blockingReasons(id),
    ]);
    res.render('suppliers/delete', {
      title: `Delete ${supplier.name}`,
      supplier: presentSupplier(supplier),
      check: presentSupplierDeletionCheck(check),
      // the plain delete (DELETE /api/suppliers/{id}) takes item links and vendor notes with it; only orders block it
      mayDeleteWithLinks: !check.canDelete && blocking.length === 0,
    });
  });

  pages.post('/suppliers/:id/delete', { access: SUPPLIER_DELETERS, params: SupplierParams }, async (req, res) => {
    const { id } = req.input.params;
    const { name } = await suppliers.get(id);
    await suppliers.safeDelete(id);
    flash(req, `Supplier '${name}' deleted`);
    res.redirect(303, '/suppliers');
  });

  pages.post(
    '/suppliers/:id/delete-with-links',
    { access: SUPPLIER_DELETERS, params: SupplierParams },
    async (req, res) => {
      const { id } = req.input.params;
      const { name } = await suppliers.get(id);
      await suppliers.remove(id);
      flash(req, `Supplier '${name}' deleted with its item links and notes`);
      res.redirect(303, '/suppliers');
    },
  );

  /** The link form's search (htmx): the items whose name, description or SKU holds the text, as the list's options. */
  pages.get(
    '/suppliers/:id/item-matches',
    { access: keepers, query: ItemMatchesQuery, fromQuery: (query) => ({ search: textField(query.item) }) },
    async (req, res) => {
      const { search } = req.input.query;
      const found =
        !search || search.length < 2 ? [] : (await items.list({ search, page: 1, limit: MATCHES_SHOWN })).rows;
      res.render('suppliers/_item-matches', { matches: found.map(presentItem) });
    },
  );

  pages.post(
    '/suppliers/:id/items',
    {
      access: keepers,
      params: SupplierParams,
      form: LinkItem,
      fromForm: (body, _req, match: { id: number } | undefined) => {
        const values = typedLink(body);
        return {
          itemId: match?.id,
          price: values.price,
          supplierSku: values.supplierSku,
          notes: values.notes.trim() === '' ? null : values.notes,
          preferred: values.preferred,
        };
      },
    },
    async (req, res) => {
      const { id } = req.input.params;
      const values = typedLink(req.body);
      // the typed text names an item by its SKU (what the list of matches fills in), else by its exact name
      const match =
        values.item === ''
          ? undefined
          : (await items.matcherForLines([{ name: values.item, sku: values.item }]))({
              name: values.item,
              sku: values.item,
            });
      const result = await attempt(() => suppliers.linkItem(id, req.input.formWith(match)));
      if (!result.ok) {
        const { itemId, ...errors } = result.errors;
        const itemError = values.item !== '' && !match ? `No item has the SKU or name '${values.item}'` : itemId;
        return renderSupplier(req, res, {
          id,
          status: result.status,
          linkForm: {
            values,
            errors: itemError ? { ...errors, item: itemError } : errors,
            message: result.message,
          },
        });
      }
      flash(req, `${result.value.item_name} linked${result.value.preferred ? ' as its preferred source' : ''}`);
      res.redirect(303, `/suppliers/${encodeURIComponent(id)}#sources`);
    },
  );

  /** The source, when it is one of this supplier's (a link of another supplier is not found here). */
  async function supplierSource(req: PageRequest<{ readonly params: z.output<typeof SourceParams> }>) {
    const { id, sourceId } = req.input.params;
    const source = await sources.get(sourceId);
    if (source.supplier_id !== id) throw NotFound('Item source not found');
    return { id, source };
  }

  // PUT /api/sources/{id} with preferred: open to everyone signed in.
  pages.post(
    '/suppliers/:id/sources/:sourceId/preferred',
    {
      access: keepers,
      params: SourceParams,
      form: UpdateItemSource,
      fromForm: (body) => ({ preferred: checked(body.preferred) }),
    },
    async (req, res) => {
      const { id, source } = await supplierSource(req);
      const updated = presentItemSource(await sources.update(source.id, req.input.form));
      flash(
        req,
        updated.preferred
          ? `This supplier is now the preferred source of ${updated.item.name}`
          : `This supplier is no longer the preferred source of ${updated.item.name}`,
      );
      res.redirect(303, `/suppliers/${encodeURIComponent(id)}#sources`);
    },
  );

  // DELETE /api/sources/{id}: admins.
  pages.post(
    '/suppliers/:id/sources/:sourceId/remove',
    { access: SUPPLIER_DELETERS, params: SourceParams },
    async (req, res) => {
      const { id, source } = await supplierSource(req);
      await sources.remove(source.id);
      flash(req, `${source.item_name} is no longer linked to this supplier`);
      res.redirect(303, `/suppliers/${encodeURIComponent(id)}#sources`);
    },
  );

  return pages.router;
}
