import type { Db } from '../../db/knex';
import { sql, toRaw } from '../../db/sql';
import { hashPassword } from '../../auth/passwords';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../http/errors';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { transaction } from '../../db/transaction';
import type { Role } from '../../auth/roles';
import { usersService } from '../users/users.service';
import { holdSeniorityRefusal } from './chargecodes.policy';
import type { AuthorisedUserBody, ChargeCodeSummary, CreateChargeCode, UpdateChargeCode } from './chargecodes.schemas';
import { categoryExists, categoryRefs } from '../categories/categories.queries';

export type ChargeCodeRow = {
  id: number;
  code: string;
  title: string;
  authorised_by: string | null;
  valid_from: Date;
  valid_until: Date;
  cost_centre: string;
  pin_hash: string | null;
  on_hold: boolean;
  hold_reason: string | null;
  /** who placed the hold (copied when it was placed) and at what role: all null when not on hold or placed before placers were recorded */
  hold_placed_by: string | null;
  hold_placed_by_name: string | null;
  hold_placed_by_role: Role | null;
  hold_placed_at: Date | null;
  /** who approves a request on the code over approval_threshold (lower-case email); null: admins only */
  approver_email: string | null;
  /** decimal string; a request totalling more awaits approval; null: none needed */
  approval_threshold: string | null;
  created_at: Date;
  updated_at: Date;
};

export type AuthorisedUserRow = {
  id: number;
  charge_code_id: number;
  user_name: string;
  email: string;
  department: string;
  notes: string | null;
};

const EXPIRING_WINDOW_DAYS = 30;

export const chargeCodeNotFound = () => NotFound('Charge code not found');

/**
 * How many sales are on a charge code (a code in use is never deleted): the sales module's count,
 * handed in where the modules are composed (src/app.ts), since the sales module is above this one.
 */
export type SalesOnChargeCode = (db: Db, code: string) => Promise<number>;

/** A charge code with the categories it excludes (ascending ids). */
export type ChargeCodeRecord = { code: ChargeCodeRow; excludedCategoryIds: number[] };

/** A code expiring within the window, with the whole days left (rounded up) from the moment asked. */
export type ExpiringChargeCode = { code: ChargeCodeRow; daysUntilExpiry: number };

export type ExcludedCategoryRow = {
  id: number;
  name: string;
  description: string | null;
  icon: string | null;
  color: string | null;
};

/** A hold placed (with its reason) or released (with the reason for releasing it, if given). */
export type HoldChange = { onHold: boolean; reason?: string };

/** Who changes a hold: the actor the audit row names, and the person, whose role is weighed against the placer's. */
export type HoldChanger = { actor: Actor; user: Express.User };

/** passwordHashCost: scrypt's cost for the PINs this service sets (config.passwordHashCost; 17 when absent) */
/** A code's hold as the API and its audit rows show it: who placed it, at what role and when, if known. */
export function holdState(
  row: ChargeCodeRow,
): Pick<ChargeCodeSummary, 'onHold' | 'holdReason' | 'holdPlacedBy' | 'holdPlacedAt'> {
  const { hold_placed_by: userId, hold_placed_by_name: name, hold_placed_by_role: role } = row;
  return {
    onHold: row.on_hold,
    holdReason: row.hold_reason,
    holdPlacedBy: userId && name && role ? { userId, name, role } : null,
    holdPlacedAt: row.hold_placed_at?.toISOString() ?? null,
  };
}

export function chargeCodesService(db: Db, opts: { passwordHashCost?: number } = {}) {
  const hashPin = (pin: string) => hashPassword(pin, opts.passwordHashCost);
  async function find(code: string): Promise<ChargeCodeRow> {
    const row = await db<ChargeCodeRow>('charge_codes').where({ code }).first();
    if (!row) throw chargeCodeNotFound();
    return row;
  }

  async function excludedIds(chargeCodeId: number): Promise<number[]> {
    const rows = await db('charge_code_exclusions')
      .where({ charge_code_id: chargeCodeId })
      .orderBy('category_id')
      .pluck('category_id');
    return rows as number[];
  }

  async function assertUser(id: string | null | undefined) {
    if (!id) return;
    if (!(await usersService(db).findById(id))) {
      throw BadRequest('Validation failed', { errors: [{ field: 'authorisedBy', message: 'user not found' }] });
    }
  }

  return {
    find,

    list(): Promise<ChargeCodeRow[]> {
      return db<ChargeCodeRow>('charge_codes').orderBy('code');
    },

    /** The codes `email` is an authorised user of (case-insensitively), by code: what a requester may charge (issue 33). */
    authorisedFor(email: string): Promise<ChargeCodeRow[]> {
      return db<ChargeCodeRow>('charge_codes as c')
        .whereExists(
          db('charge_code_authorised_users as a')
            .whereRaw('a.charge_code_id = c.id')
            .andWhereRaw('lower(a.email) = lower(?)', [email]),
        )
        .orderBy('c.code')
        .select('c.*');
    },

    async expiringSoon(now = new Date()): Promise<ExpiringChargeCode[]> {
      const until = new Date(now.getTime() + EXPIRING_WINDOW_DAYS * 86_400_000);
      const rows = await db<ChargeCodeRow>('charge_codes')
        .where('valid_until', '>=', now)
        .andWhere('valid_until', '<=', until)
        .orderBy([{ column: 'valid_until' }, { column: 'code' }]);
      return rows.map((code) => ({
        code,
        daysUntilExpiry: Math.ceil((code.valid_until.getTime() - now.getTime()) / 86_400_000),
      }));
    },

    async get(code: string): Promise<ChargeCodeRecord> {
      const row = await find(code);
      return { code: row, excludedCategoryIds: await excludedIds(row.id) };
    },

    async create(input: CreateChargeCode, actor: Actor): Promise<ChargeCodeRecord> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        if (await trx('charge_codes').where({ code: input.code }).first('id')) {
          throw Conflict(`Charge code '${input.code}' already exists`);
        }
        await chargeCodesService(trx).assertUserExists(input.authorisedBy);
        const [row] = await trx<ChargeCodeRow>('charge_codes')
          .insert({
            code: input.code,
            title: input.title,
            authorised_by: input.authorisedBy ?? actor.userId,
            valid_from: input.validFrom,
            valid_until: input.validUntil,
            cost_centre: input.costCentre,
            pin_hash: input.pin ? await hashPin(input.pin) : null,
            approver_email: input.approverEmail ?? null,
            approval_threshold: input.approvalThreshold ?? null,
          })
          .returning('*');
        return {
          result: { code: row, excludedCategoryIds: [] },
          audit: { entityType: 'charge_code', entityId: row.code, action: 'create', after: row },
        };
      });
    },

    async update(code: string, input: UpdateChargeCode, actor: Actor): Promise<ChargeCodeRecord> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const current = await trx<ChargeCodeRow>('charge_codes').where({ code }).forUpdate().first();
        if (!current) throw chargeCodeNotFound();
        const validFrom = input.validFrom ?? current.valid_from;
        const validUntil = input.validUntil ?? current.valid_until;
        if (validFrom.getTime() > validUntil.getTime()) {
          throw BadRequest('Validation failed', {
            errors: [{ field: 'validUntil', message: 'validFrom must not be after validUntil' }],
          });
        }
        await chargeCodesService(trx).assertUserExists(input.authorisedBy);
        const changes: Partial<ChargeCodeRow> = { valid_from: validFrom, valid_until: validUntil };
        if (input.title !== undefined) changes.title = input.title;
        if (input.costCentre !== undefined) changes.cost_centre = input.costCentre;
        if (input.authorisedBy !== undefined) changes.authorised_by = input.authorisedBy;
        if (input.approverEmail !== undefined) changes.approver_email = input.approverEmail;
        if (input.approvalThreshold !== undefined) changes.approval_threshold = input.approvalThreshold;
        if (input.pin !== undefined) changes.pin_hash = input.pin === null ? null : await hashPin(input.pin);
        const [row] = await trx<ChargeCodeRow>('charge_codes')
          .where({ id: current.id })
          .update({ ...changes, updated_at: trx.fn.now() as unknown as Date })
          .returning('*');
        return {
          result: { code: row, excludedCategoryIds: await chargeCodesService(trx).excludedCategoryIds(row.id) },
          audit: { entityType: 'charge_code', entityId: row.code, action: 'update', before: current, after: row },
        };
      });
    },

    assertUserExists: assertUser,
    excludedCategoryIds: excludedIds,

    async remove(code: string, actor: Actor, salesOnChargeCode: SalesOnChargeCode) {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const row = await trx<ChargeCodeRow>('charge_codes').where({ code }).forUpdate().first();
        if (!row) throw chargeCodeNotFound();
        const count = await salesOnChargeCode(trx, code);
        if (count > 0) {
          throw Conflict(`Charge code '${code}' is used by ${count} sale(s) and cannot be deleted`, {
            reasons: [`${count} sale(s) reference it`],
          });
        }
        await trx('charge_codes').where({ id: row.id }).delete();
        return {
          result: undefined,
          audit: { entityType: 'charge_code', entityId: code, action: 'delete', before: row },
        };
      });
    },

    /**
     * Places, replaces or releases a hold. Placing records the person and their role; changing or
     * releasing a hold takes someone at least as senior as its placer (403 otherwise). The
     * release's reason is kept in its audit row.
     */
    async setHold(code: string, { onHold, reason }: HoldChange, { actor, user }: HoldChanger): Promise<ChargeCodeRow> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const current = await trx<ChargeCodeRow>('charge_codes').where({ code }).forUpdate().first();
        if (!current) throw chargeCodeNotFound();
        const refusal = holdSeniorityRefusal(
          current.on_hold ? current.hold_placed_by_role : null,
          user,
          onHold ? 'change' : 'release',
        );
        if (refusal) throw Forbidden(refusal);
        // the transaction's time: the hold's placed-at is its audit row's occurred-at
        const now = trx.fn.now() as unknown as Date;
        const placer = onHold
          ? {
              hold_placed_by: user.id,
              hold_placed_by_name: `${user.first_name} ${user.last_name}`,
              hold_placed_by_role: user.role,
              hold_placed_at: now,
            }
          : { hold_placed_by: null, hold_placed_by_name: null, hold_placed_by_role: null, hold_placed_at: null };
        const [row] = await trx<ChargeCodeRow>('charge_codes')
          .where({ id: current.id })
          .update({ on_hold: onHold, hold_reason: onHold ? (reason ?? null) : null, ...placer, updated_at: now })
          .returning('*');
        const after = onHold ? holdState(row) : { ...holdState(row), releaseReason: reason || null };
        return {
          result: row,
          audit: {
            entityType: 'charge_code',
            entityId: code,
            action: onHold ? 'hold' : 'release_hold',
            before: holdState(current),
            after,
          },
        };
      });
    },

    async listExclusions(code: string): Promise<ExcludedCategoryRow[]> {
      const row = await find(code);
      return db('charge_code_exclusions as e')
        .join(toRaw(db, categoryRefs('c')), 'c.category_id', 'e.category_id')
        .where('e.charge_code_id', row.id)
        .orderBy('e.category_id')
        .select(
          'c.category_id as id',
          'c.category_name as name',
          'c.category_description as description',
          'c.category_icon as icon',
          'c.category_color as color',
        );
    },

    /** Idempotent: returns whether the exclusion was newly added. */
    async addExclusion(code: string, categoryId: number, actor: Actor): Promise<boolean> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const row = await chargeCodesService(trx).get(code);
        if (!(await categoryExists(trx, categoryId))) throw NotFound('Category not found');
        const inserted = await trx('charge_code_exclusions')
          .insert({ charge_code_id: row.code.id, category_id: categoryId })
          .onConflict(['charge_code_id', 'category_id'])
          .ignore()
          .returning('category_id');
        const added = inserted.length > 0;
        return {
          result: added,
          audit: added
            ? exclusionsChange(code, 'add_exclusion', row.excludedCategoryIds, [...row.excludedCategoryIds, categoryId])
            : null,
        };
      });
    },

    async removeExclusion(code: string, categoryId: number, actor: Actor) {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const row = await chargeCodesService(trx).get(code);
        const removed = await trx('charge_code_exclusions')
          .where({ charge_code_id: row.code.id, category_id: categoryId })
          .delete();
        if (removed === 0) throw NotFound('Exclusion not found');
        const after = row.excludedCategoryIds.filter((id) => id !== categoryId);
        return { result: undefined, audit: exclusionsChange(code, 'remove_exclusion', row.excludedCategoryIds, after) };
      });
    },

    /** The people authorised to use the code, with the code they belong to. */
    async listUsers(code: string): Promise<{ code: ChargeCodeRow; users: AuthorisedUserRow[] }> {
      const row = await find(code);
      return {
        code: row,
        users: await db<AuthorisedUserRow>('charge_code_authorised_users')
          .where({ charge_code_id: row.id })
          .orderBy('id'),
      };
    },

    async addUser(
      code: string,
      input: AuthorisedUserBody,
      actor: Actor,
    ): Promise<{ code: ChargeCodeRow; user: AuthorisedUserRow }> {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const row = (await chargeCodesService(trx).get(code)).code;
        const clash = await trx('charge_code_authorised_users')
          .where({ charge_code_id: row.id })
          .where(toRaw(trx, sql`lower(email) = lower(${input.email})`))
          .first('id');
        if (clash) throw Conflict(`'${input.email}' is already authorised for charge code '${row.code}'`);
        const [user] = await trx<AuthorisedUserRow>('charge_code_authorised_users')
          .insert({
            charge_code_id: row.id,
            user_name: input.userName,
            email: input.email,
            department: input.department,
            notes: input.notes ?? null,
          })
          .returning('*');
        return {
          result: { code: row, user },
          audit: { entityType: 'charge_code', entityId: code, action: 'add_authorised_user', after: user },
        };
      });
    },

    async removeUser(code: string, id: number, actor: Actor) {
      return transaction(db, { audit: auditAs(actor) }, async (trx) => {
        const row = (await chargeCodesService(trx).get(code)).code;
        const [removed] = await trx<AuthorisedUserRow>('charge_code_authorised_users')
          .where({ charge_code_id: row.id, id })
          .delete()
          .returning('*');
        if (!removed) throw NotFound('Authorised user not found');
        return {
          result: undefined,
          audit: { entityType: 'charge_code', entityId: code, action: 'remove_authorised_user', before: removed },
        };
      });
    },
  };
}

const exclusionsChange = (code: string, action: string, before: number[], after: number[]) => ({
  entityType: 'charge_code',
  entityId: code,
  action,
  before: { excludedCategoryIds: before },
  after: { excludedCategoryIds: [...after].sort((a, b) => a - b) },
});
