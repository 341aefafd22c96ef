import type { Availability } from '../catalogue/catalogue.schemas';
import type { RequestStatus, ShortReason } from './requests.schemas';

/** The records of the requests module (issue 33), as its service hands them out. */

export type RequestRow = {
  id: number;
  reference: string;
  status: RequestStatus;
  charge_code: string;
  requested_by: string;
  notes: string | null;
  needed_by: string | null;
  subtotal_amount: string;
  vat_amount: string;
  total_amount: string;
  /** what the request's sale charged (its total): null until fulfilled */
  charged_total: string | null;
  sale_id: number | null;
  sale_number: string | null;
  delivered_to: string | null;
  decided_by: string | null;
  decided_at: Date | null;
  fulfilled_by: string | null;
  fulfilled_at: Date | null;
  collected_at: Date | null;
  /** issue 43: the COSHH assessment reference given at submission (or at fulfilment) */
  coshh_reference: string | null;
  /** issue 43: held a restricted substance at submission: fulfilment waits for a manager's approval */
  restricted_approval_required: boolean;
  restricted_approved_by: string | null;
  restricted_approved_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export type RequestLineRow = {
  id: number;
  request_id: number;
  position: number;
  item_id: number | null;
  item_name: string;
  item_sku: string;
  quantity: string;
  unit_price: string;
  vat_rate: string;
  subtotal: string;
  vat_amount: string;
  total: string;
  short_at_submission: boolean;
  /** issue 43: the requester confirmed they had read the item's safety data sheet */
  sds_acknowledged: boolean;
  fulfilled_quantity: string | null;
  /** why fulfilment handed out less than the quantity: null when it did not (or before fulfilment) */
  short_reason: ShortReason | null;
};

export type RequestHistoryRow = {
  id: number;
  request_id: number;
  status: RequestStatus;
  at: Date;
  by_user: string | null;
  comment: string | null;
  u_email: string | null;
  u_first_name: string | null;
  u_last_name: string | null;
};

export type Requester = { id: string; email: string; first_name: string; last_name: string };

/** A request as the service hands it out: the row, its lines, its history, its requester and its code's approver now. */
export type RequestRecord = {
  request: RequestRow;
  lines: RequestLineRow[];
  history: RequestHistoryRow[];
  requester: Requester;
  approverEmail: string | null;
  /** issue 43: the manager who approved the restricted substances, or null */
  restrictedApprover: Requester | null;
  /** each unfulfilled line's item as the catalogue says it now (by line id); none for a deleted item */
  availability: Map<number, Availability>;
};
