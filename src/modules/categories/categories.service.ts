import type { Db } from '../../db/knex';
import { countReferences, describeReferences } from '../../db/references';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/pg-errors';
import { Conflict, NotFound } from '../../http/errors';
import type { CreateCategory, UpdateCategory } from './categories.schemas';

export type CategoryRow = {
  id: number;
  name: string;
  description: string | null;
  icon: string | null;
  color: string | null;
  buyer_emails: string[];
  coshh_required: boolean;
  created_at: Date;
  updated_at: Date;
};

/** Whether a category can be deleted outright, the records that prevent it, and its name for messages. */
export type CategoryDeletionCheckRecord = { name: string; canDelete: boolean; reasons: string[] };

/**
 * How many items (active or not) are in a category: the items module's count, handed in where the
 * modules are composed (src/app.ts), since the items module is above this one and reads categories.
 */
export type ItemsInCategory = (db: Db, categoryId: number) => Promise<number>;

export function categoriesService(db: Db) {
  async function nameTaken(name: string, exceptId?: number): Promise<boolean> {
    const query = db('categories').whereRaw('lower(name) = lower(?)', [name]);
    if (exceptId !== undefined) query.whereNot({ id: exceptId });
    return (await query.first('id')) !== undefined;
  }

  async function get(id: number): Promise<CategoryRow> {
    const row = await db<CategoryRow>('categories').where({ id }).first();
    if (!row) throw NotFound('Category not found');
    return row;
  }

  async function deletionCheck(id: number): Promise<CategoryDeletionCheckRecord> {
    const category = await get(id);
    const reasons = describeReferences(await countReferences(db, 'categories', id), 0);
    return { name: category.name, canDelete: reasons.length === 0, reasons };
  }

  async function remove(id: number): Promise<void> {
    try {
      await db('categories').where({ id }).delete();
    } catch (err) {
      if (isForeignKeyViolation(err)) throw Conflict('Cannot delete the category: other records still reference it');
      throw err;
    }
  }

  return {
    get,

    list(): Promise<CategoryRow[]> {
      return db<CategoryRow>('categories').orderBy([{ column: 'name' }, { column: 'id' }]);
    },

    /** The category of a name, exact but case-insensitive (names are unique so). */
    findByName(name: string): Promise<CategoryRow | undefined> {
      return db<CategoryRow>('categories').whereRaw('lower(name) = lower(?)', [name]).first();
    },

    /** case-insensitive exact name -> row, for bulk import */
    async byLowerName(): Promise<Map<string, CategoryRow>> {
      const rows = await db<CategoryRow>('categories');
      return new Map(rows.map((r) => [r.name.toLowerCase(), r]));
    },

    async create(input: CreateCategory): Promise<CategoryRow> {
      if (await nameTaken(input.name)) throw Conflict(`A category named '${input.name}' already exists`);
      try {
        const [row] = await db<CategoryRow>('categories')
          .insert({
            name: input.name,
            description: input.description ?? null,
            icon: input.icon ?? null,
            color: input.color ?? null,
            buyer_emails: input.buyerEmails ?? [],
            coshh_required: input.coshhRequired ?? false,
          })
          .returning('*');
        return row;
      } catch (err) {
        if (isUniqueViolation(err)) throw Conflict(`A category named '${input.name}' already exists`);
        throw err;
      }
    },

    async update(id: number, input: UpdateCategory): Promise<CategoryRow> {
      await get(id);
      if (input.name !== undefined && (await nameTaken(input.name, id))) {
        throw Conflict(`A category named '${input.name}' already exists`);
      }
      const changes: Partial<CategoryRow> = {};
      if (input.name !== undefined) changes.name = input.name;
      if (input.description !== undefined) changes.description = input.description;
      if (input.icon !== undefined) changes.icon = input.icon;
      if (input.color !== undefined) changes.color = input.color;
      if (input.buyerEmails !== undefined) changes.buyer_emails = input.buyerEmails;
      if (input.coshhRequired !== undefined) changes.coshh_required = input.coshhRequired;
      try {
        const [row] = await db<CategoryRow>('categories')
          .where({ id })
          .update({ ...changes, updated_at: db.fn.now() as unknown as Date })
          .returning('*');
        return row;
      } catch (err) {
        if (isUniqueViolation(err)) throw Conflict(`A category named '${input.name}' already exists`);
        throw err;
      }
    },

    /** DELETE /categories/:id: refused while any item (active or not) uses the category. */
    async delete(id: number, itemsInCategory: ItemsInCategory): Promise<void> {
      const category = await get(id);
      const items = await itemsInCategory(db, id);
      if (items > 0) {
        throw Conflict(`Cannot delete category '${category.name}': ${items} item(s) still use it`, {
          itemCount: items,
        });
      }
      await remove(id);
    },

    deletionCheck,

    /** Refused (409 with reasons) when any record references the category (items, charge-code exclusions, ...). */
    async safeDelete(id: number): Promise<void> {
      const check = await deletionCheck(id);
      if (!check.canDelete) throw Conflict(`Cannot delete category '${check.name}'`, { reasons: check.reasons });
      await remove(id);
    },
  };
}
