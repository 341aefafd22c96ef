import type { Db } from '../../db/knex';
import { transaction } from '../../db/transaction';
import { countReferences, describeReferences } from '../../db/references';
import { Conflict, NotFound } from '../../http/errors';
import { sourcesService, type ItemSourceRow } from '../sources/sources.service';
import type { LinkItem } from '../sources/sources.schemas';
import type { CreateSupplier, UpdateSupplier } from './suppliers.schemas';
import { notesService } from '../notes/notes.service';
import { supplierExists } from './suppliers.queries';

export type SupplierRow = {
  id: string;
  name: string;
  contact: string | null;
  email: string | null;
  phone: string | null;
  address: string | null;
  created_at: Date;
  updated_at: Date;
};

/** Item links go with their supplier (ON DELETE CASCADE), so they never block a plain delete. */
const CASCADED = new Set(['item_sources']);

export function suppliersService(db: Db) {
  async function get(id: string): Promise<SupplierRow> {
    const row = await db<SupplierRow>('suppliers').where({ id }).first();
    if (!row) throw NotFound('Supplier not found');
    return row;
  }

  /** Records that must go before the supplier can: orders and anything else but its item links. */
  async function blockingReasons(id: string): Promise<string[]> {
    const refs = await countReferences(db, 'suppliers', id);
    return describeReferences(
      refs.filter((r) => !CASCADED.has(r.table)),
      0,
    );
  }

  return {
    get,

    list(): Promise<SupplierRow[]> {
      return db<SupplierRow>('suppliers').orderByRaw('lower(name), id');
    },

    exists: (id: string): Promise<boolean> => supplierExists(db, id),

    /** The supplier and its item links (404 for an unknown supplier). */
    async withItems(id: string): Promise<{ supplier: SupplierRow; links: ItemSourceRow[] }> {
      const supplier = await get(id);
      return { supplier, links: await sourcesService(db).listForSupplier(id) };
    },

    /** The suppliers an item can be bought from: its sources with their supplier's name, by supplier name (then as linked). */
    async sourcesOfItem(itemId: number): Promise<(ItemSourceRow & { supplier_name: string })[]> {
      const links = await sourcesService(db).listForItem(itemId);
      const suppliers: { id: string; name: string }[] = await db('suppliers')
        .whereIn('id', [...new Set(links.map((link) => link.supplier_id))])
        .orderBy('name')
        .select('id', 'name');
      // the names' order as PostgreSQL collates them; links come in link order, which the stable sort keeps for equal names
      const rank = new Map<string, number>();
      for (const { name } of suppliers) if (!rank.has(name)) rank.set(name, rank.size);
      const nameOf = new Map(suppliers.map(({ id, name }) => [id, name]));
      return links
        .map((link) => ({ ...link, supplier_name: nameOf.get(link.supplier_id)! }))
        .sort((a, b) => rank.get(a.supplier_name)! - rank.get(b.supplier_name)!);
    },

    /** Links an item to the supplier at a price: 404 for an unknown supplier or item, 409 when already linked. */
    async linkItem(id: string, input: LinkItem): Promise<ItemSourceRow> {
      await get(id);
      return sourcesService(db).link(id, input);
    },

    findByName(name: string): Promise<SupplierRow | undefined> {
      return db<SupplierRow>('suppliers')
        .whereRaw('lower(name) = lower(?)', [name.trim()])
        .orderBy('created_at')
        .first();
    },

    async create(input: CreateSupplier): Promise<SupplierRow> {
      const [row] = await db<SupplierRow>('suppliers')
        .insert({
          id: input.id,
          name: input.name,
          contact: input.contact ?? null,
          email: input.email ?? null,
          phone: input.phone ?? null,
          address: input.address ?? null,
        })
        .onConflict('id')
        .ignore()
        .returning('*');
      if (!row) throw Conflict(`Supplier id '${input.id}' is already taken`);
      return row;
    },

    /** A supplier named on an imported invoice: its id is derived from the name and made unique. */
    async createFromName(name: string): Promise<SupplierRow> {
      const base =
        name
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .replace(/^-+|-+$/g, '')
          .slice(0, 56) || 'supplier';
      for (let attempt = 0; ; attempt += 1) {
        const id = attempt === 0 ? base : `${base}-${attempt + 1}`;
        const [row] = await db<SupplierRow>('suppliers')
          .insert({ id, name: name.trim() })
          .onConflict('id')
          .ignore()
          .returning('*');
        if (row) return row;
      }
    },

    async update(id: string, input: UpdateSupplier): Promise<SupplierRow> {
      const changes = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
      const [row] = await db<SupplierRow>('suppliers')
        .where({ id })
        .update({ ...changes, updated_at: db.fn.now() })
        .returning('*');
      if (!row) throw NotFound('Supplier not found');
      return row;
    },

    /** Plain delete: refused while orders reference the supplier; item links and vendor notes go with it. */
    remove(id: string): Promise<void> {
      return transaction(db, async (trx) => {
        const supplier = await suppliersService(trx).get(id);
        await trx('suppliers').where({ id }).forUpdate().first('id');
        const reasons = await suppliersService(trx).blockingReasons(id);
        if (reasons.length > 0) throw Conflict(`Cannot delete supplier '${supplier.name}'`, { reasons });
        await notesService(trx).removeAllFor('vendor', [id]);
        await trx('suppliers').where({ id }).delete();
      });
    },

    blockingReasons,

    /** Safe delete is stricter: nothing may reference the supplier, not even item links or notes. */
    async deletionCheck(id: string): Promise<{ name: string; canDelete: boolean; reasons: string[] }> {
      const supplier = await get(id);
      const reasons = describeReferences(
        await countReferences(db, 'suppliers', id),
        await notesService(db).count('vendor', id),
      );
      return { name: supplier.name, canDelete: reasons.length === 0, reasons };
    },

    safeDelete(id: string): Promise<void> {
      return transaction(db, async (trx) => {
        await trx('suppliers').where({ id }).forUpdate().first('id');
        const check = await suppliersService(trx).deletionCheck(id);
        if (!check.canDelete) throw Conflict(`Cannot delete supplier '${check.name}'`, { reasons: check.reasons });
        await trx('suppliers').where({ id }).delete();
      });
    },
  };
}
