import { describe, expect, it } from 'vitest';
import { availabilityOf } from '../../src/modules/catalogue/catalogue.service';
import {
  canMove,
  decisionRefusal,
  illegalTransition,
  mayCancel,
  mayDecide,
} from '../../src/modules/requests/requests.service';
import type { RequestRecord } from '../../src/modules/requests/requests.records';

const person = (role: Express.User['role'], email = `${role}@example.ac.uk`, id = `${role}-id`) =>
  ({ id, role, email }) as Express.User;

describe('availabilityOf: the catalogue tells the stock as a word, by the one low-stock rule', () => {
  const item = (current: string, minimum: string) => ({
    is_active: true,
    current_stock: current,
    minimum_stock: minimum,
  });
  it('out at or below zero, low at or below the minimum, in stock above it', () => {
    expect(availabilityOf(item('0', '5'))).toBe('out');
    expect(availabilityOf(item('0.00', '0'))).toBe('out');
    expect(availabilityOf(item('-1', '0'))).toBe('out');
    expect(availabilityOf(item('5', '5'))).toBe('low');
    expect(availabilityOf(item('0.5', '1'))).toBe('low');
    expect(availabilityOf(item('6', '5'))).toBe('in_stock');
    expect(availabilityOf(item('1', '0'))).toBe('in_stock');
  });
});

describe('request transitions', () => {
  it('each action applies only from its states', () => {
    expect(canMove('awaiting_approval', 'approve')).toBe(true);
    expect(canMove('submitted', 'approve')).toBe(false);
    expect(canMove('submitted', 'fulfil')).toBe(true);
    expect(canMove('approved', 'fulfil')).toBe(true);
    expect(canMove('awaiting_approval', 'fulfil')).toBe(false);
    expect(canMove('ready', 'collect')).toBe(true);
    expect(canMove('ready', 'cancel')).toBe(false);
    expect(canMove('rejected', 'cancel')).toBe(false);
    for (const status of ['submitted', 'awaiting_approval', 'approved'] as const)
      expect(canMove(status, 'cancel')).toBe(true);
  });

  it('a refused transition is a 409 naming both states', () => {
    const err = illegalTransition('RQ-20261127-1', 'collected', 'cancelled');
    expect(err).toMatchObject({
      status: 409,
      message: 'Request RQ-20261127-1 is collected; it cannot become cancelled',
    });
  });

  it("approve and reject: the code's approver (any role, email in any case) or an admin", () => {
    const request = { requested_by: 'someone else' };
    const record = { approverEmail: 'pi@example.ac.uk', request };
    expect(mayDecide(person('requester', 'PI@Example.ac.uk'), record)).toBe(true);
    expect(mayDecide(person('admin'), record)).toBe(true);
    expect(mayDecide(person('manager'), record)).toBe(false);
    expect(mayDecide(person('manager'), { approverEmail: null, request })).toBe(false);
    expect(mayDecide(person('admin'), { approverEmail: null, request })).toBe(true);
  });

  it('approve and reject: never by the requester, an admin or the approver included (issue 40)', () => {
    const own = { approverEmail: 'pi@example.ac.uk', request: { requested_by: 'owner' } };
    expect(mayDecide(person('requester', 'pi@example.ac.uk', 'owner'), own)).toBe(false);
    expect(mayDecide(person('admin', 'boss@example.ac.uk', 'owner'), own)).toBe(false);
    expect(decisionRefusal(person('admin', 'boss@example.ac.uk', 'owner'), own, 'approve')).toBe(
      'You cannot approve your own request; it needs another approver or an admin',
    );
  });

  it('cancel: the requester or staff', () => {
    const record = { request: { requested_by: 'owner' } } as unknown as RequestRecord;
    expect(mayCancel(person('requester', 'a@x', 'owner'), record)).toBe(true);
    expect(mayCancel(person('requester', 'b@x', 'someone'), record)).toBe(false);
    expect(mayCancel(person('user'), record)).toBe(true);
  });
});
