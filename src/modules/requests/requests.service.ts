import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { preparedRaw } from '../../db/prepared';
import { sql } from '../../db/sql';
import { allQueries, transaction } from '../../db/transaction';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../http/errors';
import { formatMoney } from '../../lib/format';
import { D } from '../../lib/money';
import { hasRole, isStaff } from '../../auth/guards';
import type { Role } from '../../auth/roles';
import type { Actor } from '../audit/audit.actor';
import { auditAs } from '../audit/audit.service';
import { chargeCodePolicy } from '../chargecodes/chargecodes.policy';
import { chargeCodeApprovals, codesApprovedBy } from '../chargecodes/chargecodes.queries';
import { KNOWN_SETTINGS } from '../settings/settings.schemas';
import { settingsService } from '../settings/settings.service';
import { validateChargeCode } from '../chargecodes/chargecodes.validation';
import {
  coshhReferenceMessage,
  priceRequestedLines,
  recordRequestSale,
  recordSaleCollection,
  salesService,
  stockForSale,
  type SaleRecord,
} from '../sales/sales.service';
import { findItemsForLines, type ItemForLine } from '../items/items.queries';
import { availabilityOf } from '../catalogue/catalogue.service';
import type { Availability } from '../catalogue/catalogue.schemas';
import { withUserRef } from '../users/users.queries';
import { announce, announceRestrictedApproval } from './requests.messages';
import type {
  CancelBody,
  CollectBody,
  CreateRequest,
  DecisionBody,
  FulfilBody,
  RequestQuery,
  RequestStatus,
  ShortReason,
} from './requests.schemas';
import type { RequestRecord, RequestRow, RequestLineRow, RequestHistoryRow } from './requests.records';
import type { ReferenceCounters } from '../../db/references';

/*
 * Issue 33: the researchers' requests against a charge code. The module owns stock_requests, its
 * lines (stock_request_items) and its history (stock_request_history). A request is checked as the
 * counter checks a sale's code when it is submitted, waits for its code's approver when its total
 * is over the code's threshold, and is fulfilled through the counter's own sale processing
 * (sales.service.ts recordRequestSale). Every change of state writes a history row, an audit row
 * and its messages (requests.messages.ts) in the same transaction.
 */

export type { RequestRow, RequestLineRow, RequestHistoryRow, Requester, RequestRecord } from './requests.records';

/** Who acts: the signed-in person (their role and email decide) and the audit trail's actor. */
export type RequestActor = { user: Express.User; actor: Actor };

export const requestNotFound = () => NotFound('Request not found');

/** The states each action moves a request from, and to. */
const TRANSITIONS = {
  approve: { from: ['awaiting_approval'], to: 'approved' },
  reject: { from: ['awaiting_approval'], to: 'rejected' },
  fulfil: { from: ['submitted', 'approved'], to: 'ready' },
  collect: { from: ['ready'], to: 'collected' },
  cancel: { from: ['submitted', 'awaiting_approval', 'approved'], to: 'cancelled' },
} as const satisfies Record<string, { from: readonly RequestStatus[]; to: RequestStatus }>;
export type RequestAction = keyof typeof TRANSITIONS;

/** 409: the request's state does not lead to the one asked, naming both. */
export const illegalTransition = (reference: string, from: RequestStatus, to: RequestStatus) =>
  Conflict(`Request ${reference} is ${from}; it cannot become ${to}`);

/** Whether the action applies to a request in this state (the pages show only the actions that do). */
export const canMove = (status: RequestStatus, action: RequestAction): boolean =>
  (TRANSITIONS[action].from as readonly RequestStatus[]).includes(status);

/** What deciding on a request reads of it: its code's approver and who asked. */
type Decided = Pick<RequestRecord, 'approverEmail'> & { request: Pick<RequestRow, 'requested_by'> };

/**
 * Approve and reject: the person whose email is the code's approverEmail (any role), or an admin;
 * never the requester (issue 40): their own request needs another approver or an admin, an
 * admin's own one the code's approver or another admin. Null when the person may.
 */
export function decisionRefusal(user: Express.User, record: Decided, action: 'approve' | 'reject'): string | null {
  if (record.request.requested_by === user.id)
    return `You cannot ${action} your own request; it needs another approver or an admin`;
  const approver =
    hasRole(user, 'admin') ||
    (record.approverEmail !== null && record.approverEmail.toLowerCase() === user.email.toLowerCase());
  return approver ? null : `Only the charge code's approver or an admin may ${action} this request`;
}

/** Whether the person may approve or reject the request (the pages show the buttons only then). */
export const mayDecide = (user: Express.User, record: Decided): boolean =>
  decisionRefusal(user, record, 'approve') === null;

/** Issue 43: who approves a request's restricted substances. */
export const RESTRICTED_APPROVERS = 'manager' satisfies Role;

/** Issue 43: 409 from fulfilment while a request's restricted substances wait for a manager. */
export const restrictedApprovalPendingMessage = (reference: string, id: number) =>
  `Request ${reference} holds a restricted substance: a manager must approve it (POST /api/requests/${id}/approve-restricted) before it is fulfilled`;

/** The states of a request not yet fulfilled nor ended: those the threshold window adds up. */
const OPEN_STATUSES = ['submitted', 'awaiting_approval', 'approved'] as const satisfies readonly RequestStatus[];

/** Issue 43: whether the request's restricted substances still wait for a manager (fulfilment waits too). */
export const restrictedApprovalPending = ({ request }: Pick<RequestRecord, 'request'>): boolean =>
  request.restricted_approval_required &&
  request.restricted_approved_by === null &&
  (OPEN_STATUSES as readonly RequestStatus[]).includes(request.status);

/** Issue 43: whether the person may approve the request's restricted substances (the pages show the button only then). */
export const mayApproveRestricted = (user: Express.User, record: Pick<RequestRecord, 'request'>): boolean =>
  restrictedApprovalPending(record) && hasRole(user, RESTRICTED_APPROVERS) && record.request.requested_by !== user.id;

/** requests.thresholdWindow: what a code's approval threshold is held against (unset: day). */
export const THRESHOLD_WINDOW_SETTING = 'requests.thresholdWindow';
const WINDOW_SPAN = { day: '24 hours', week: '7 days' } as const;

async function thresholdWindow(db: Db): Promise<'request' | 'day' | 'week'> {
  const parsed = KNOWN_SETTINGS[THRESHOLD_WINDOW_SETTING].safeParse(
    await settingsService(db).get(THRESHOLD_WINDOW_SETTING),
  );
  return parsed.success ? parsed.data.window : 'day';
}

/**
 * The total the approval threshold is held against: the request's own, plus (window day or week)
 * the requester's other open requests on the code made in the last 24 hours or 7 days, so a
 * request split in parts under the threshold still waits for the approver. The requester's
 * submissions on the code take turns (a transaction lock), so two parts sent at once both count.
 */
async function windowTotal(
  trx: Knex.Transaction,
  window: 'request' | 'day' | 'week',
  { requesterId, chargeCode, ownTotal }: { requesterId: string; chargeCode: string; ownTotal: string },
): Promise<D> {
  if (window === 'request') return new D(ownTotal);
  await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`requests.threshold ${requesterId} ${chargeCode}`]);
  const { rows } = await preparedRaw<{ rows: { total: string | null }[] }>(
    trx,
    sql`SELECT sum(r.total_amount)::text AS total FROM stock_requests r
         WHERE r.requested_by = ${requesterId} AND r.charge_code = ${chargeCode}
           AND r.status IN (${sql.raw(OPEN_STATUSES.map((status) => `'${status}'`).join(', '))})
           AND r.created_at > now() - ${WINDOW_SPAN[window]}::interval`,
  );
  return new D(ownTotal).plus(rows[0].total ?? 0);
}

/** Cancel: the requester, or the stores' staff. */
export const mayCancel = (user: Express.User, record: Pick<RequestRecord, 'request'>): boolean =>
  isStaff(user) || record.request.requested_by === user.id;

/** Who sees a request: the staff every one; anyone else their own and those on codes they approve. */
const visibleTo = (user: Express.User) =>
  isStaff(user)
    ? sql.raw('true')
    : sql`(r.requested_by = ${user.id} OR r.charge_code IN ${codesApprovedBy(user.email)})`;

/** A request's reference, drawn from its sequence: RQ-<YYYYMMDD>-<n> (UTC day), never issued twice (a restore carries the sequence). */
const NEXT_REFERENCE = sql.raw(
  `'RQ-' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD') || '-' || nextval('stock_request_number_seq')`,
);

/** The same item asked twice is one line of the summed quantity, where it was first asked. */
function mergedLines(items: { itemId: number; quantity: string; sdsAcknowledged?: boolean }[]) {
  const merged = new Map<number, { quantity: D; sdsAcknowledged: boolean }>();
  for (const line of items) {
    const before = merged.get(line.itemId);
    merged.set(line.itemId, {
      quantity: (before?.quantity ?? new D(0)).plus(line.quantity),
      // issue 43: an item's lines read as acknowledged only when every one of them is
      sdsAcknowledged: (before?.sdsAcknowledged ?? true) && line.sdsAcknowledged === true,
    });
  }
  return [...merged].map(([itemId, { quantity, sdsAcknowledged }]) => ({
    itemId,
    quantity: quantity.toFixed(2),
    sdsAcknowledged,
  }));
}

/** Issue 43: 400 when a hazardous item's request line comes without the requester's "I have read the safety data sheet". */
export const sdsAcknowledgementMessage = (sku: string) =>
  `Confirm you have read the safety data sheet of ${sku} before submitting`;

async function readRecords(db: Db, rows: RequestRow[]): Promise<RequestRecord[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [lines, history, requesters, approvals, restrictedApprovers] = await allQueries(db, [
    () => db<RequestLineRow>('stock_request_items').whereIn('request_id', ids).orderBy(['request_id', 'position']),
    () =>
      withUserRef(db('stock_request_history as h').select('h.*'), {
        userIdColumn: 'h.by_user',
        prefix: 'u_',
      })
        .whereIn('h.request_id', ids)
        .orderBy('h.id') as Promise<RequestHistoryRow[]>,
    () =>
      withUserRef(db('stock_requests as r').select('r.id as request_id'), {
        userIdColumn: 'r.requested_by',
        prefix: 'u_',
        withId: true,
      }).whereIn('r.id', ids) as Promise<
        { request_id: number; u_id: string; u_email: string; u_first_name: string; u_last_name: string }[]
      >,
    () =>
      chargeCodeApprovals(
        db,
        rows.map((r) => r.charge_code),
      ),
    // issue 43: the managers who approved restricted substances
    () =>
      withUserRef(db('stock_requests as r').select('r.id as request_id'), {
        userIdColumn: 'r.restricted_approved_by',
        prefix: 'u_',
        withId: true,
      })
        .whereIn('r.id', ids)
        .whereNotNull('r.restricted_approved_by') as Promise<
        { request_id: number; u_id: string; u_email: string; u_first_name: string; u_last_name: string }[]
      >,
  ]);
  const unfulfilled = lines.filter((l) => l.fulfilled_quantity === null && l.item_id !== null);
  const items = await findItemsForLines(db, [...new Set(unfulfilled.map((l) => l.item_id!))]);
  const forSale = await stockForSale(db, items.values());
  const availability = new Map(
    unfulfilled.flatMap((l) => {
      const item = items.get(l.item_id!);
      return item ? [[l.id, lineAvailability(item, forSale.get(item.id)!)] as const] : [];
    }),
  );
  const requesterOf = new Map(
    requesters.map((r) => [
      r.request_id,
      { id: r.u_id, email: r.u_email, first_name: r.u_first_name, last_name: r.u_last_name },
    ]),
  );
  const restrictedApproverOf = new Map(
    restrictedApprovers.map((r) => [
      r.request_id,
      { id: r.u_id, email: r.u_email, first_name: r.u_first_name, last_name: r.u_last_name },
    ]),
  );
  return rows.map((request) => ({
    request,
    lines: lines.filter((l) => l.request_id === request.id),
    history: history.filter((h) => h.request_id === request.id),
    requester: requesterOf.get(request.id)!,
    restrictedApprover: restrictedApproverOf.get(request.id) ?? null,
    approverEmail: approvals.get(request.charge_code)?.approver_email ?? null,
    availability: new Map(
      lines
        .filter((l) => l.request_id === request.id && availability.has(l.id))
        .map((l) => [l.id, availability.get(l.id)!]),
    ),
  }));
}

/**
 * An item's availability by the catalogue's rule (never its stock figure), of what it has for sale
 * (stockForSale: an item tracked by lot counts only its sellable lots, as the short flag and
 * fulfilment do); one no longer active is out, as the stores will not hand it out.
 */
const lineAvailability = (item: ItemForLine, forSale: D): Availability =>
  item.isActive
    ? availabilityOf({ is_active: true, current_stock: forSale.toFixed(2), minimum_stock: item.minimumStock })
    : 'out';

/** A step of the request's history: the status it entered, who moved it (null: the service), and why. */
async function addHistory(
  trx: Knex.Transaction,
  requestId: number,
  { status, byUser, comment = null }: { status: RequestStatus; byUser: string | null; comment?: string | null },
) {
  await trx('stock_request_history').insert({ request_id: requestId, status, by_user: byUser, comment });
}

/** What an audit row shows of a request. */
const audited = (row: RequestRow) => ({
  reference: row.reference,
  status: row.status,
  chargeCode: row.charge_code,
  totalAmount: row.total_amount,
  chargedTotal: row.charged_total,
  saleId: row.sale_id,
  coshhReference: row.coshh_reference,
  restrictedApprovalRequired: row.restricted_approval_required,
  restrictedApprovedBy: row.restricted_approved_by,
});

export function requestsService(db: Db) {
  async function loadOne(trx: Db, id: number): Promise<RequestRecord> {
    const row = await trx<RequestRow>('stock_requests').where({ id }).first();
    if (!row) throw requestNotFound();
    return (await readRecords(trx, [row]))[0];
  }

  /** The request's row locked for the change, 404 when it does not exist or the person may not see it. */
  async function lockVisible(trx: Knex.Transaction, user: Express.User, id: number): Promise<RequestRecord> {
    const { rows } = await preparedRaw<{ rows: RequestRow[] }>(
      trx,
      sql`SELECT r.* FROM stock_requests r WHERE r.id = ${id} AND ${visibleTo(user)} FOR UPDATE OF r`,
    );
    if (rows.length === 0) throw requestNotFound();
    return (await readRecords(trx, rows))[0];
  }

  /**
   * One change of state, in one transaction: the row locked (a second change waits, then sees the
   * first's state), who may (`refusal`, 403), the state (409 naming both), the change itself
   * (`apply`, which may write more), the history row, the audit row and the messages.
   */
  async function move(
    who: RequestActor,
    id: number,
    action: RequestAction,
    opts: {
      /** why the person may not (403), or null when they may */
      refusal?: (record: RequestRecord) => string | null;
      comment?: string | null;
      apply?: (trx: Knex.Transaction, record: RequestRecord) => Promise<Partial<RequestRow>>;
      retry?: boolean;
    },
  ): Promise<RequestRecord> {
    const { from, to } = TRANSITIONS[action];
    return transaction(db, { audit: auditAs(who.actor), retry: opts.retry ?? false }, async (trx) => {
      const before = await lockVisible(trx, who.user, id);
      const refusal = opts.refusal?.(before) ?? null;
      if (refusal !== null) throw Forbidden(refusal);
      if (!(from as readonly RequestStatus[]).includes(before.request.status))
        throw illegalTransition(before.request.reference, before.request.status, to);
      const changes = opts.apply ? await opts.apply(trx, before) : {};
      await trx('stock_requests')
        .where({ id })
        .update({ ...changes, status: to, updated_at: trx.fn.now() });
      await addHistory(trx, id, { status: to, byUser: who.user.id, comment: opts.comment ?? null });
      const after = await loadOne(trx, id);
      await announce(trx, after, { by: who.user });
      return {
        result: after,
        audit: {
          entityType: 'stock_request',
          entityId: id,
          action,
          before: audited(before.request),
          after: { ...audited(after.request), comment: opts.comment ?? null },
        },
      };
    });
  }

  return {
    /**
     * Submits a request: the lines priced from the items now (VAT applied), a line asking more than
     * the item has for sale marked short (stockForSale: an item tracked by lot counts its sellable lots only), the charge code checked as the counter checks it (its messages:
     * unknown, expired, not yet valid, on hold, excluded category, and with
     * chargeCodes.requireAuthorisedUser on, the person must be one of its authorised users). A
     * requester must always be one, and hears one message for any code they are not (issue 40).
     * Over the code's approvalThreshold the request goes on to awaiting_approval.
     */
    async create(who: RequestActor, input: CreateRequest): Promise<RequestRecord> {
      const items = mergedLines(input.items);
      const [policy, window] = await allQueries(db, [() => chargeCodePolicy(db), () => thresholdWindow(db)]);
      return transaction(db, { audit: auditAs(who.actor) }, async (trx) => {
        const { priced, categoryIds, stock, items: found } = await priceRequestedLines(trx, items);
        await validateChargeCode(trx, input.chargeCode, {
          categoryIds,
          requester: isStaff(who.user) ? undefined : who.user.email,
          sale: {
            policy: { requirePin: false, requireAuthorisedUser: policy.requireAuthorisedUser },
            verifiedPinHash: null,
            recipientEmail: who.user.email,
          },
        });
        // issue 43, after the charge code: a COSHH assessment reference for the first line (in line order) that needs one;
        // a restricted substance makes the request wait for a manager's approval, on top of any charge-code approval
        const needingCoshh = items.find((l) => found.get(l.itemId)?.needsCoshhReference);
        if (needingCoshh && !input.coshhReference)
          throw BadRequest(coshhReferenceMessage(found.get(needingCoshh.itemId)!.sku));
        // issue 43, then: the requester has read the safety data sheet of each hazardous item (the first line without it)
        const unacknowledged = items.find((l) => found.get(l.itemId)?.hazardous && !l.sdsAcknowledged);
        if (unacknowledged) {
          const sku = found.get(unacknowledged.itemId)!.sku;
          throw BadRequest(sdsAcknowledgementMessage(sku), {
            errors: [
              {
                field: `items.${items.indexOf(unacknowledged)}.sdsAcknowledged`,
                message: sdsAcknowledgementMessage(sku),
              },
            ],
          });
        }
        const restrictedApprovalRequired = items.some((l) => found.get(l.itemId)?.restricted);
        const approval = (await chargeCodeApprovals(trx, [input.chargeCode])).get(input.chargeCode);
        const threshold = approval?.approval_threshold ?? null;
        const counted =
          threshold === null
            ? null
            : await windowTotal(trx, window, {
                requesterId: who.user.id,
                chargeCode: input.chargeCode,
                ownTotal: priced.totalAmount,
              });
        const needsApproval = counted !== null && counted.gt(threshold!);
        const { rows } = await preparedRaw<{ rows: RequestRow[] }>(
          trx,
          sql`INSERT INTO stock_requests (reference, status, charge_code, requested_by, notes, needed_by, subtotal_amount, vat_amount, total_amount,
                                          coshh_reference, restricted_approval_required)
              VALUES (${NEXT_REFERENCE}, 'submitted', ${input.chargeCode}, ${who.user.id},
                      ${input.notes ?? null}, ${input.neededBy ?? null}, ${priced.subtotalAmount}, ${priced.vatAmount}, ${priced.totalAmount},
                      ${input.coshhReference ?? null}, ${restrictedApprovalRequired})
              RETURNING *`,
        );
        const row = rows[0];
        await trx('stock_request_items').insert(
          priced.lines.map((line, position) => ({
            request_id: row.id,
            position,
            item_id: line.itemId,
            item_name: line.itemName,
            item_sku: line.itemSku,
            quantity: line.quantity,
            unit_price: line.unitPrice,
            vat_rate: line.vatRate,
            subtotal: line.subtotal,
            vat_amount: line.vatAmount,
            total: line.totalWithVat,
            short_at_submission: new D(line.quantity).gt(stock.get(line.itemId!) ?? 0),
            sds_acknowledged: items.find((l) => l.itemId === line.itemId)?.sdsAcknowledged ?? false,
          })),
        );
        await addHistory(trx, row.id, { status: 'submitted', byUser: who.user.id });
        let record = await loadOne(trx, row.id);
        await announce(trx, record, { by: who.user, awaitsApproval: needsApproval });
        if (needsApproval) {
          await trx('stock_requests')
            .where({ id: row.id })
            .update({ status: 'awaiting_approval', updated_at: trx.fn.now() });
          await addHistory(trx, row.id, {
            status: 'awaiting_approval',
            byUser: null,
            comment: new D(row.total_amount).gt(threshold!)
              ? `Total ${formatMoney(row.total_amount)} is over the code's approval threshold ${formatMoney(threshold)}`
              : `Total ${formatMoney(row.total_amount)}, ${formatMoney(counted!.toFixed(2))} with the requester's other open requests on the code ` +
                `in the last ${WINDOW_SPAN[window as 'day' | 'week']}, is over the code's approval threshold ${formatMoney(threshold)}`,
          });
          record = await loadOne(trx, row.id);
          await announce(trx, record, { by: who.user });
        }
        return {
          result: record,
          audit: { entityType: 'stock_request', entityId: row.id, action: 'create', after: audited(record.request) },
        };
      });
    },

    /** A request the person may see (404 otherwise): staff any; anyone else their own and those on codes they approve. */
    async get(user: Express.User, id: number): Promise<RequestRecord> {
      const { rows } = await preparedRaw<{ rows: RequestRow[] }>(
        db,
        sql`SELECT r.* FROM stock_requests r WHERE r.id = ${id} AND ${visibleTo(user)}`,
      );
      if (rows.length === 0) throw requestNotFound();
      return (await readRecords(db, rows))[0];
    },

    /**
     * One page of requests, oldest first (the queue's order). Staff: every request; anyone else: their own.
     * mine: only the person's own; toApprove: those awaiting the person's approval (an admin's: every one awaiting approval).
     */
    async list(
      user: Express.User,
      query: Pick<RequestQuery, 'status' | 'mine' | 'toApprove' | 'restrictedToApprove' | 'page' | 'limit'>,
    ): Promise<{ records: RequestRecord[]; total: number }> {
      const where = [];
      if (query.toApprove) {
        where.push(sql.raw(`r.status = 'awaiting_approval'`));
        if (!hasRole(user, 'admin')) where.push(sql`r.charge_code IN ${codesApprovedBy(user.email)}`);
        where.push(sql`r.requested_by <> ${user.id}`);
      } else if (query.restrictedToApprove) {
        where.push(
          sql.raw(
            `r.restricted_approval_required AND r.restricted_approved_by IS NULL AND r.status IN (${OPEN_STATUSES.map((s) => `'${s}'`).join(', ')})`,
          ),
        );
        where.push(sql`r.requested_by <> ${user.id}`);
        if (!isStaff(user)) where.push(sql`r.requested_by = ${user.id}`);
      } else if (query.mine || !isStaff(user)) {
        where.push(sql`r.requested_by = ${user.id}`);
      }
      if (query.status) where.push(sql`r.status = ${query.status}`);
      const condition = where.length > 0 ? sql.join(where, sql.raw(' AND ')) : sql.raw('true');
      const offset = (query.page - 1) * query.limit;
      const { rows } = await preparedRaw<{ rows: (RequestRow & { total: number })[] }>(
        db,
        sql`SELECT r.*, count(*) OVER ()::int AS total FROM stock_requests r WHERE ${condition}
             ORDER BY r.created_at, r.id LIMIT ${query.limit} OFFSET ${offset}`,
      );
      let total = rows[0]?.total ?? 0;
      if (rows.length === 0 && offset > 0) {
        const { rows: counted } = await preparedRaw<{ rows: { total: number }[] }>(
          db,
          sql`SELECT count(*)::int AS total FROM stock_requests r WHERE ${condition}`,
        );
        total = counted[0].total;
      }
      const records = await readRecords(
        db,
        rows.map(({ total: _total, ...row }) => row),
      );
      return { records, total };
    },

    /**
     * The sales charged to the person: those that fulfilled their requests, newest first, and how
     * many there are (read by the person's requests, through their index, never a scan of the sales).
     */
    async salesOf(user: Express.User, page: number, limit: number): Promise<{ sales: SaleRecord[]; total: number }> {
      const { rows } = await preparedRaw<{ rows: { sale_id: number; total: number }[] }>(
        db,
        sql`SELECT r.sale_id, count(*) OVER ()::int AS total FROM stock_requests r
             WHERE r.requested_by = ${user.id} AND r.sale_id IS NOT NULL
             ORDER BY r.fulfilled_at DESC, r.id DESC LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
      );
      let total = rows[0]?.total ?? 0;
      if (rows.length === 0 && page > 1)
        total = Number(
          (
            await db('stock_requests')
              .where({ requested_by: user.id })
              .whereNotNull('sale_id')
              .count<{ n: string }[]>('* as n')
          )[0].n,
        );
      return { sales: await salesService(db).byIds(rows.map((r) => r.sale_id)), total };
    },

    /** awaiting_approval -> approved, by the code's approver or an admin (403 otherwise); the requester is emailed. */
    approve: (who: RequestActor, id: number, body: DecisionBody = {}) =>
      move(who, id, 'approve', {
        refusal: (record) => decisionRefusal(who.user, record, 'approve'),
        comment: body.comment ?? null,
        apply: async () => ({ decided_by: who.user.id, decided_at: new Date() }),
      }),

    /** awaiting_approval -> rejected, by the code's approver or an admin (403 otherwise); the requester is emailed. */
    reject: (who: RequestActor, id: number, body: DecisionBody = {}) =>
      move(who, id, 'reject', {
        refusal: (record) => decisionRefusal(who.user, record, 'reject'),
        comment: body.comment ?? null,
        apply: async () => ({ decided_by: who.user.id, decided_at: new Date() }),
      }),

    /**
     * submitted/approved -> ready: the request sold through the counter's processing
     * (recordRequestSale: stock out, movements, the code checked again, never more than the
     * stock), each line the quantity given (at most the one requested; omitted: the request's
     * own) or less when stock is short. What was handed out is recorded per line; a shortfall is
     * told to the requester. Two people fulfilling at once: the second waits for the first and
     * finds the request ready (409).
     */
    fulfil: (who: RequestActor, id: number, body: FulfilBody = {}) =>
      move(who, id, 'fulfil', {
        refusal: () => (isStaff(who.user) ? null : 'Only the stores staff fulfil requests'),
        retry: true,
        apply: async (trx, record) => {
          // issue 43: a request holding a restricted substance waits for a manager's approval, on top of any charge-code approval
          if (record.request.restricted_approval_required && record.request.restricted_approved_by === null)
            throw Conflict(restrictedApprovalPendingMessage(record.request.reference, record.request.id));
          const wanted = fulfilmentOf(record, body);
          const coshhReference = body.coshhReference ?? record.request.coshh_reference;
          const sale = await recordRequestSale(trx, who.user, {
            chargeCode: record.request.charge_code,
            items: wanted,
            customerNotes: `Request ${record.request.reference}`,
            requesterEmail: record.requester.email,
            coshhReference,
            restrictedApprovedBy: record.request.restricted_approved_by,
            auditActor: who.actor,
          });
          // what each item had for sale before the sale: what the sale found (an item tracked by lot: its sellable
          // lots), else (a line left out, so the sale took none of it) what it has for sale now, by the same rule
          const after = await stockForSale(
            trx,
            (
              await findItemsForLines(
                trx,
                record.lines.flatMap((l) => (l.item_id === null || sale.forSale.has(l.item_id) ? [] : [l.item_id])),
              )
            ).values(),
          );
          for (const line of record.lines) {
            const taken = line.item_id === null ? new D(0) : (sale.taken.get(line.item_id) ?? new D(0));
            const held =
              line.item_id === null
                ? new D(0)
                : (sale.forSale.get(line.item_id) ?? after.get(line.item_id) ?? new D(0));
            await trx('stock_request_items')
              .where({ id: line.id })
              .update({ fulfilled_quantity: taken.toFixed(2), short_reason: shortReason(line, taken, held) });
          }
          return {
            coshh_reference: coshhReference,
            sale_id: sale.sale.id,
            sale_number: sale.sale.sale_id,
            charged_total: sale.sale.total_amount,
            fulfilled_by: who.user.id,
            fulfilled_at: new Date(),
          };
        },
      }),

    /** ready -> collected: who collected (default the requester's name) recorded on the sale too. */
    collect: (who: RequestActor, id: number, body: CollectBody = {}) =>
      move(who, id, 'collect', {
        refusal: () => (isStaff(who.user) ? null : 'Only the stores staff mark requests collected'),
        apply: async (trx, record) => {
          const deliveredTo = body.deliveredTo ?? `${record.requester.first_name} ${record.requester.last_name}`.trim();
          if (record.request.sale_id !== null)
            await recordSaleCollection(trx, record.request.sale_id, {
              deliveredTo,
              deliveredToEmail: record.requester.email,
            });
          return { delivered_to: deliveredTo, collected_at: new Date() };
        },
      }),

    /**
     * Issue 43: a manager's (or admin's) approval of a request holding a restricted substance, on top of
     * any charge-code approval; the status stays as it is (fulfilment checks both). Never the
     * requester's own (403); 409 when the request holds none, was approved already, or is no longer open.
     */
    approveRestricted: (who: RequestActor, id: number, body: DecisionBody = {}) =>
      transaction(db, { audit: auditAs(who.actor) }, async (trx) => {
        const before = await lockVisible(trx, who.user, id);
        const { request } = before;
        if (!hasRole(who.user, RESTRICTED_APPROVERS))
          throw Forbidden("Only a manager or admin may approve a request's restricted substances");
        if (request.requested_by === who.user.id)
          throw Forbidden('You cannot approve your own request; it needs another manager or an admin');
        if (!request.restricted_approval_required)
          throw Conflict(`Request ${request.reference} holds no restricted substance`);
        if (request.restricted_approved_by !== null)
          throw Conflict(`The restricted substances of request ${request.reference} are already approved`);
        if (!(OPEN_STATUSES as readonly RequestStatus[]).includes(request.status))
          throw Conflict(
            `Request ${request.reference} is ${request.status}; its restricted substances cannot be approved`,
          );
        await trx('stock_requests').where({ id }).update({
          restricted_approved_by: who.user.id,
          restricted_approved_at: trx.fn.now(),
          updated_at: trx.fn.now(),
        });
        const comment = `Restricted substances approved by a manager${body.comment ? `: ${body.comment}` : ''}`;
        await addHistory(trx, id, { status: request.status, byUser: who.user.id, comment });
        const after = await loadOne(trx, id);
        await announceRestrictedApproval(trx, after);
        return {
          result: after,
          audit: {
            entityType: 'stock_request',
            entityId: id,
            action: 'approve_restricted',
            before: audited(request),
            after: { ...audited(after.request), comment: body.comment ?? null },
          },
        };
      }),

    /**
     * Issue 43: the ids of the requests' items that are restricted substances now, in one query (the
     * pages mark their lines; an item made restricted after submission is marked without being
     * waited for).
     */
    async restrictedItemIds(records: RequestRecord[]): Promise<Set<number>> {
      const ids = [
        ...new Set(records.flatMap((record) => record.lines.flatMap((l) => (l.item_id === null ? [] : [l.item_id])))),
      ];
      const items = await findItemsForLines(db, ids);
      return new Set(ids.filter((itemId) => items.get(itemId)?.restricted));
    },

    /** Any state before ready -> cancelled, by the requester or the staff (403 otherwise). */
    cancel: (who: RequestActor, id: number, body: CancelBody = {}) =>
      move(who, id, 'cancel', {
        refusal: (record) =>
          mayCancel(who.user, record) ? null : 'Only the requester or the stores staff may cancel this request',
        comment: body.comment ?? null,
      }),
  };
}

export type RequestsService = ReturnType<typeof requestsService>;

/**
 * Why fulfilment handed out less of a line than requested (null when it did not): 'stock' when the
 * stores held less than was requested (the item out of stock, gone or no longer active), whatever
 * quantity they then asked for; 'staff' when they held enough and handed out less (lowered it, or
 * left it out).
 */
function shortReason(line: RequestLineRow, taken: D, held: D): ShortReason | null {
  if (taken.gte(line.quantity)) return null;
  return held.lt(line.quantity) ? 'stock' : 'staff';
}

/** The quantities fulfilment hands out: the body's, each at most what its line asked (400 otherwise), or the request's own. */
function fulfilmentOf(record: RequestRecord, body: FulfilBody): { itemId: number; quantity: string }[] {
  const lines = record.lines.filter((l) => l.item_id !== null);
  if (!body.items) return lines.map((l) => ({ itemId: l.item_id!, quantity: l.quantity }));
  const given = mergedLines(body.items);
  const errors: { field: string; message: string }[] = [];
  given.forEach((g, index) => {
    const line = lines.find((l) => l.item_id === g.itemId);
    if (!line) errors.push({ field: `items.${index}.itemId`, message: `Item ${g.itemId} is not on this request` });
    else if (new D(g.quantity).gt(line.quantity))
      errors.push({
        field: `items.${index}.quantity`,
        message: `must be at most the ${new D(line.quantity).toString()} requested`,
      });
  });
  if (errors.length > 0) throw BadRequest('Validation failed', { errors });
  return given;
}

/** The rows of stock requests that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const requestsReferences: ReferenceCounters = {
  users: [
    {
      table: 'stock_request_history',
      column: 'by_user',
      count: (id) => sql`SELECT count(*) FROM stock_request_history WHERE by_user = ${id}`,
    },
    {
      table: 'stock_requests',
      column: 'decided_by',
      count: (id) => sql`SELECT count(*) FROM stock_requests WHERE decided_by = ${id}`,
    },
    {
      table: 'stock_requests',
      column: 'restricted_approved_by',
      count: (id) => sql`SELECT count(*) FROM stock_requests WHERE restricted_approved_by = ${id}`,
    },
    {
      table: 'stock_requests',
      column: 'fulfilled_by',
      count: (id) => sql`SELECT count(*) FROM stock_requests WHERE fulfilled_by = ${id}`,
    },
    {
      table: 'stock_requests',
      column: 'requested_by',
      count: (id) => sql`SELECT count(*) FROM stock_requests WHERE requested_by = ${id}`,
    },
  ],
  items: [
    {
      table: 'stock_request_items',
      column: 'item_id',
      count: (id) => sql`SELECT count(*) FROM stock_request_items WHERE item_id = ${id}`,
    },
  ],
};
