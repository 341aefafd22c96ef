import { createHash } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import type { Deps } from '../deps';
import { currentUser } from '../auth/guards';
import { actorOf } from '../modules/audit/audit.actor';
import { BadRequest } from '../http/errors';
import { chargeCodePolicy } from '../modules/chargecodes/chargecodes.policy';
import { availableChargeCodes, validateChargeCode } from '../modules/chargecodes/chargecodes.validation';
import { itemsService } from '../modules/items/items.service';
import { presentItem } from '../modules/items/items.present';
import { presentBasket } from '../modules/sales/quotes.present';
import {
  BasketChargeCode,
  BasketDetails,
  BasketLineParams,
  CounterQuery,
  ItemMatchesQuery,
  LineQuantity,
  ScanSku,
} from '../modules/sales/quotes.schemas';
import { basketLots, quotesService, type Basket, type BasketChange } from '../modules/sales/quotes.service';
import { presentSale } from '../modules/sales/sales.present';
import { SaleAuthorisationBody, SaleIdParams, SetRecipientBody } from '../modules/sales/sales.schemas';
import { coshhReferenceMessage, salesService, type SaleRecord } from '../modules/sales/sales.service';
import { attempt, checked, flash, textField, type Attempt, type FieldErrors } from './forms';
import { PageRouter } from './page-route';
import { wantsPartial } from './page-render';

const ASSETS = { stylesheets: ['/assets/css/counter.css'], scripts: ['/assets/js/counter.js'] };
const EMPTY_BASKET: Basket = { quote: null, lines: [] };
/** How many name matches the scan box offers. */
const MATCHES_SHOWN = 8;
const FIELD_LABELS: Record<string, string> = {
  sku: 'SKU',
  quantity: 'Quantity',
  customerNotes: 'Customer notes',
  chargeCode: 'Charge code',
  pin: 'PIN',
  'recipient.deliveredTo': "Recipient's name",
  'recipient.deliveredToEmail': "Recipient's email",
  deliveredToEmail: 'Email',
};
/** An htmx refusal replaces the layout's alert region and leaves the rest of the page as it was. */
const TO_ALERTS = { 'HX-Retarget': '#alerts', 'HX-Reswap': 'innerHTML' };
/** Issue 43: a refused COSHH reference is said beside its field instead (the field and the basket stay as they are). */
const TO_COSHH_ERROR = { 'HX-Retarget': '#coshh-reference-error', 'HX-Reswap': 'innerHTML' };
const COSHH_MISSING = coshhReferenceMessage('');

type Refusal = Extract<Attempt<unknown>, { ok: false }>;
type ChargeCodeField = { value: string; error: string | null; accepted: boolean };
/** Issue 43: the COSHH assessment reference field as the process form left it. */
type CoshhField = { value: string; error: string | null };
type RecipientForm = {
  values: { deliveredTo: string; deliveredToEmail: string };
  errors: FieldErrors;
  recorded: boolean;
  /** the address a receipt was just queued to */
  receiptTo?: string | null;
};

/** One sentence for the alert region: the fields' own messages when a form field was refused. */
const refusalMessage = (refusal: Refusal): string =>
  Object.keys(refusal.errors).length > 0
    ? Object.entries(refusal.errors)
        .map(([field, message]) => `${FIELD_LABELS[field] ?? field} ${message}`)
        .join('; ')
    : refusal.message;

/**
 * The counter's draft belongs to the browser session, so every tab of it shows one basket. Drafts'
 * sessionId is visible through the API, and the session id is the secret part of the cookie: the
 * draft gets a digest of it, as stable as the session.
 */
const basketSessionId = (req: Request) =>
  `counter-${createHash('sha256').update(req.sessionID).digest('hex').slice(0, 32)}`;

/** The process form's PIN (shown while the charge-code policy asks for it), recipient and "Email a receipt" as the API's body; empty fields are absent. */
function saleAuthorisationOf(form: Record<string, unknown>) {
  const [deliveredTo, deliveredToEmail] = [textField(form.recipientName).trim(), textField(form.recipientEmail).trim()];
  return {
    pin: textField(form.pin) || undefined,
    recipient:
      deliveredTo || deliveredToEmail ? { deliveredTo, deliveredToEmail: deliveredToEmail || null } : undefined,
    emailReceipt: checked(form.emailReceipt),
    // issue 43: the COSHH assessment reference, when the counter asks for one
    coshhReference: textField(form.coshhReference).trim() || undefined,
  };
}

/** GET /counter and its posts: the spec's draft quote of the session, edited, processed into a sale. */
/** The refusals a form that may email a receipt shows beside its fields: a form's, and 429 when the person's receipts this hour are spent. */
const RECEIPT_REFUSALS = [400, 409, 422, 429];
/** A scan's refusals: a form's, and 404 for a GS1 scan naming a lot its item does not have (issue 42). */
const SCAN_REFUSALS = [400, 404, 409, 422];

export function counterPages({ db }: Deps): Router {
  const pages = new PageRouter(db);
  const quotes = quotesService(db);
  const sales = salesService(db);
  const items = itemsService(db);

  /** The basket as shown, with the lots each line of an item tracked by lot would take (issue 42). */
  const basketView = async (basket: Basket) => presentBasket(basket, await basketLots(db, basket.lines));

  const recipientForm = (sale: SaleRecord | null, overrides: Partial<RecipientForm> = {}): RecipientForm => ({
    values: { deliveredTo: sale?.sale.delivered_to ?? '', deliveredToEmail: sale?.sale.delivered_to_email ?? '' },
    errors: {},
    recorded: Boolean(sale?.sale.delivered_to),
    ...overrides,
  });

  const saleView = (req: Request, sale: SaleRecord | null, recipient = recipientForm(sale)) => ({
    sale: sale ? presentSale(sale) : null,
    showPickingList: currentUser(req).show_picking_list,
    recipient,
  });

  /**
   * The Charge code field for the draft's code: the draft keeps a refused code as it was entered, and
   * a code may go on hold or expire after it was accepted, so the field says what processing would.
   */
  async function savedChargeCodeField({ quote, lines }: Basket): Promise<ChargeCodeField> {
    const code = quote?.charge_code ?? '';
    if (!code) return { value: '', error: null, accepted: false };
    const categoryIds = lines.map((line) => line.category_id).filter((id): id is number => id !== null);
    const check = await attempt(() => validateChargeCode(db, code, { categoryIds }));
    return check.ok
      ? { value: code, error: null, accepted: true }
      : { value: code, error: refusalMessage(check), accepted: false };
  }

  /** Everything the counter shows; what an action already has (the basket it saved, the sale it made) is not read again. */
  async function counterView(
    req: Request,
    parts: {
      basket?: Basket;
      sale?: SaleRecord | null;
      recipient?: RecipientForm;
      chargeCodeField?: ChargeCodeField;
      coshhField?: CoshhField;
      alert?: string;
    } = {},
  ) {
    const [basket, chargeCodes, policy] = await Promise.all([
      parts.basket ?? quotes.basket(currentUser(req), basketSessionId(req)),
      availableChargeCodes(db),
      chargeCodePolicy(db),
    ]);
    return {
      title: 'Counter',
      description: 'The stores counter: scan items into a basket and sell them on a charge code.',
      ...ASSETS,
      basket: await basketView(basket),
      chargeCodes,
      policy,
      chargeCodeField: parts.chargeCodeField ?? (await savedChargeCodeField(basket)),
      ...saleView(req, parts.sale ?? null, parts.recipient),
      coshhField: parts.coshhField ?? null,
      alert: parts.alert ?? null,
    };
  }

  /** A refusal: htmx gets the message in the alert region; a plain post gets the page again with it. */
  async function refuse(req: Request, res: Response, refusal: Refusal) {
    const message = refusalMessage(refusal);
    if (wantsPartial(req)) return res.status(refusal.status).set(TO_ALERTS).render('partials/_alert', { message });
    res.status(refusal.status).render('counter/index', await counterView(req, { alert: message }));
  }

  /**
   * One basket edit: htmx gets the basket back, a plain post the page (post/redirect/get). A scan may
   * also be refused 404 (issue 42: a GS1 scan's lot the item does not have).
   */
  async function change(req: Request, res: Response, toChange: () => BasketChange, refusals?: number[]) {
    const result = await attempt(
      () => quotes.changeBasket(currentUser(req), basketSessionId(req), toChange()),
      refusals,
    );
    if (!result.ok) return refuse(req, res, result);
    if (wantsPartial(req)) return res.render('counter/_basket', { basket: await basketView(result.value) });
    res.redirect(303, '/counter');
  }

  pages.get('/counter', { access: 'user', query: CounterQuery }, async (req, res) => {
    const { sale } = req.input.query;
    res.render('counter/index', await counterView(req, { sale: sale ? await sales.get(sale) : null }));
  });

  pages.get('/counter/matches', { access: 'user', query: ItemMatchesQuery }, async (req, res) => {
    const { sku: typed } = req.input.query;
    const found = typed.length < 2 ? [] : (await items.list({ search: typed, page: 1, limit: MATCHES_SHOWN })).rows;
    res.render('counter/_matches', { matches: found.map(presentItem) });
  });

  // The scan: the benchmarked request (one read of the draft with the SKU's item, one write).
  pages.post('/counter/add', { access: 'user', form: ScanSku }, (req, res) =>
    change(req, res, () => ({ kind: 'add', sku: req.input.form.sku }), SCAN_REFUSALS),
  );

  pages.post(
    '/counter/lines/:lineId/quantity',
    { access: 'user', params: BasketLineParams, form: LineQuantity },
    (req, res) =>
      change(req, res, () => ({
        kind: 'quantity',
        lineId: req.input.params.lineId,
        quantity: req.input.form.quantity,
      })),
  );

  pages.post('/counter/lines/:lineId/remove', { access: 'user', params: BasketLineParams }, (req, res) =>
    change(req, res, () => ({ kind: 'remove', lineId: req.input.params.lineId })),
  );

  pages.post('/counter/details', { access: 'user', form: BasketDetails }, (req, res) =>
    change(req, res, () => ({
      kind: 'details',
      vatApplied: checked(req.body.vatApplied),
      customerNotes: req.input.form.customerNotes || null,
    })),
  );

  pages.post('/counter/charge-code', { access: 'user', form: BasketChargeCode }, async (req, res) => {
    const typed = textField(req.body.chargeCode).trim();
    const result = await attempt(() =>
      quotes.changeBasket(currentUser(req), basketSessionId(req), {
        kind: 'chargeCode',
        chargeCode: req.input.form.chargeCode || null,
      }),
    );
    const field: ChargeCodeField = result.ok
      ? { value: typed, error: null, accepted: typed !== '' }
      : { value: typed, error: refusalMessage(result), accepted: false };
    if (wantsPartial(req)) return res.status(result.ok ? 200 : result.status).render('counter/_charge-code', { field });
    if (!result.ok)
      return res.status(result.status).render('counter/index', await counterView(req, { chargeCodeField: field }));
    flash(req, typed ? `Charge code ${typed} accepted` : 'Charge code removed');
    res.redirect(303, '/counter');
  });

  pages.post('/counter/clear', { access: 'user' }, async (req, res) => {
    // Nothing to delete (another tab cleared or processed it) leaves the basket just as empty.
    await attempt(() => quotes.deleteDraft(currentUser(req), basketSessionId(req)), [404]);
    if (wantsPartial(req)) return res.render('counter/_counter', await counterView(req, { basket: EMPTY_BASKET }));
    flash(req, 'Basket cleared');
    res.redirect(303, '/counter');
  });

  pages.post(
    '/counter/process',
    { access: 'user', form: SaleAuthorisationBody, fromForm: saleAuthorisationOf },
    async (req, res) => {
      const actor = currentUser(req);
      const { quote } = await quotes.basket(actor, basketSessionId(req));
      // 429: the person's receipts this hour are spent (issue 40), said on the page like a refusal
      const result = await attempt(() => {
        if (!quote) throw BadRequest('The basket is empty: scan an item before processing');
        return sales.processQuote(actor, quote.id, req.input.form, actorOf(req));
        // issue 43: a restricted substance by a user (403) is said on the counter, the basket kept
      }, [...RECEIPT_REFUSALS, 403]);
      if (!result.ok) {
        // issue 43: a missing (or too long) COSHH reference is said beside its field, what was typed kept
        const coshhError = result.errors.coshhReference
          ? `COSHH assessment reference ${result.errors.coshhReference}`
          : result.message.startsWith(COSHH_MISSING)
            ? result.message
            : null;
        if (!coshhError) return refuse(req, res, result);
        if (wantsPartial(req))
          return res.status(result.status).set(TO_COSHH_ERROR).render('counter/_coshh-error', { message: coshhError });
        const coshhField = { value: textField(req.body.coshhReference), error: coshhError };
        return res.status(result.status).render('counter/index', await counterView(req, { coshhField }));
      }
      if (wantsPartial(req))
        return res.render('counter/_counter', await counterView(req, { basket: EMPTY_BASKET, sale: result.value }));
      flash(req, `Sale ${result.value.sale.sale_id} processed`);
      res.redirect(303, `/counter?sale=${result.value.sale.id}`);
    },
  );

  pages.post(
    '/counter/sales/:id/recipient',
    {
      access: 'user',
      params: SaleIdParams,
      form: SetRecipientBody,
      fromForm: (body) => ({
        deliveredTo: textField(body.deliveredTo),
        deliveredToEmail: textField(body.deliveredToEmail).trim() || null,
        emailReceipt: checked(body.emailReceipt),
      }),
    },
    async (req, res) => {
      const { id } = req.input.params;
      const values = {
        deliveredTo: textField(req.body.deliveredTo),
        deliveredToEmail: textField(req.body.deliveredToEmail),
      };
      const result = await attempt(
        () => sales.setRecipient(actorOf(req), currentUser(req), id, req.input.form),
        RECEIPT_REFUSALS,
      );
      const receiptTo = result.ok && checked(req.body.emailReceipt) ? result.value.delivered_to_email : null;
      if (result.ok && !wantsPartial(req)) {
        flash(req, receiptTo ? `Recipient recorded; a receipt is on its way to ${receiptTo}` : 'Recipient recorded');
        return res.redirect(303, `/counter?sale=${id}`);
      }
      const sale = await sales.get(id);
      const recipient = result.ok
        ? recipientForm(sale, { receiptTo })
        : recipientForm(sale, { values, errors: result.errors, recorded: false });
      const status = result.ok ? 200 : result.status;
      if (wantsPartial(req)) return res.status(status).render('counter/_sale', saleView(req, sale, recipient));
      res.status(status).render('counter/index', await counterView(req, { sale, recipient }));
    },
  );

  return pages.router;
}
