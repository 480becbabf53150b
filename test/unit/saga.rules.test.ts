// The saga's cross-aggregate rules (functions/saga/rules.ts), pure: each returns a decision, never
// throws. The use cases turn a failing decision into the error the state machine catches by name
// (test/unit/saga.use-cases.test.ts asserts those errors).
import type { Customer } from '../../functions/accounts/domain';
import type { Order } from '../../functions/orders/domain';
import type { CapturedPayment } from '../../functions/payments/domain';
import {
  checkDeadline,
  confirmationRefused,
  decideCapture,
  decideCreditRefund,
  decidePaymentUndo,
  outOfStock,
} from '../../functions/saga/rules';
import { failureOf, SagaError } from '../../functions/saga/steps';

const NOW = new Date('2026-01-01T00:00:00.000Z');
const DEADLINE = '2026-01-01T00:01:00.000Z';
const order = { orderId: 'o-1', customerId: 'c-1', totalCents: 3_000, deadline: DEADLINE };
const customer = (capturedCents = 0): Customer => ({
  customerId: 'c-1',
  creditLimitCents: 10_000,
  capturedCents,
  status: 'ACTIVE',
  createdAt: NOW.toISOString(),
});
const captured: CapturedPayment = {
  status: 'CAPTURED',
  paymentId: 'p-1',
  orderId: 'o-1',
  customerId: 'c-1',
  amountCents: 3_000,
  createdAt: NOW.toISOString(),
};
const pending = (status: Order['status'] = 'PENDING') =>
  ({
    orderId: 'o-1',
    customerId: 'c-1',
    items: [],
    totalCents: 3_000,
    deadline: DEADLINE,
    createdAt: NOW.toISOString(),
    updatedAt: NOW.toISOString(),
    status,
  }) as unknown as Order;

describe('checkDeadline', () => {
  it('proceeds up to the deadline and refuses past it', () => {
    expect(checkDeadline(order, new Date(DEADLINE))).toEqual({ kind: 'proceed' });
    expect(checkDeadline(order, new Date(Date.parse(DEADLINE) + 1))).toEqual({
      kind: 'refuse',
      error: 'DeadlineExceeded',
      message: `order o-1 passed its deadline ${DEADLINE}`,
    });
  });
});

describe('outOfStock and confirmationRefused', () => {
  it('name the business error the state machine catches', () => {
    expect(outOfStock(['a', 'b'])).toEqual({
      kind: 'refuse',
      error: 'OutOfStock',
      message: 'not enough stock of a, b',
    });
    expect(confirmationRefused(pending(), { code: 'NO_STOCK_HELD' })).toEqual({
      kind: 'refuse',
      error: 'ConfirmationFailed',
      message: 'order o-1 holds no stock',
    });
    expect(confirmationRefused(pending(), { code: 'DEADLINE_PASSED', deadline: DEADLINE })).toMatchObject({
      error: 'DeadlineExceeded',
    });
    expect(confirmationRefused(pending('CANCELLED'), { code: 'ORDER_FINAL', status: 'CANCELLED' })).toEqual({
      kind: 'refuse',
      error: 'ConfirmationFailed',
      message: 'order o-1 is CANCELLED',
    });
  });
});

describe('decideCapture', () => {
  it('captures the payment and the credit together when the credit suffices', () => {
    const decision = decideCapture('p-1', null, customer(), order, NOW);
    expect(decision).toMatchObject({
      kind: 'capture',
      payment: [expect.objectContaining({ type: 'PaymentCaptured' })],
      credit: [expect.objectContaining({ type: 'CreditCaptured' })],
    });
  });

  it('declines, writing the payment alone, when the credit does not suffice', () => {
    expect(decideCapture('p-1', null, customer(8_000), order, NOW)).toEqual({
      kind: 'decline',
      payment: [expect.objectContaining({ type: 'PaymentDeclined' })],
      refusal: {
        kind: 'refuse',
        error: 'PaymentDeclined',
        message: '3000 exceeds the available credit of c-1',
      },
    });
  });

  it('is done when the payment is captured already, and refuses one settled otherwise', () => {
    expect(decideCapture('p-1', captured, customer(), order, NOW)).toEqual({ kind: 'done' });
    expect(decideCapture('p-1', { ...captured, status: 'DECLINED' }, customer(), order, NOW)).toEqual({
      kind: 'refuse',
      error: 'PaymentDeclined',
      message: 'payment p-1 is DECLINED',
    });
  });

  it('refuses, writing nothing, past the deadline or for an unknown customer', () => {
    const late = new Date(Date.parse(DEADLINE) + 1);
    expect(decideCapture('p-1', null, customer(), order, late)).toMatchObject({
      kind: 'refuse',
      error: 'DeadlineExceeded',
    });
    expect(decideCapture('p-1', null, null, order, NOW)).toEqual({
      kind: 'refuse',
      error: 'PaymentDeclined',
      message: 'customer c-1 does not exist',
    });
  });
});

describe('decidePaymentUndo and decideCreditRefund', () => {
  it('refunds a captured payment and gives the credit back', () => {
    const undo = decidePaymentUndo('p-1', 'o-1', captured, NOW);
    expect(undo).toMatchObject({
      payment: [expect.objectContaining({ type: 'PaymentRefunded' })],
      recorded: 'p-1',
      refund: { paymentId: 'p-1', orderId: 'o-1', amountCents: 3_000 },
    });
    const refund = undo.refund ?? { paymentId: '', orderId: '', amountCents: 0 };
    expect(decideCreditRefund(refund, customer(3_000))).toEqual({
      kind: 'refund',
      events: [expect.objectContaining({ type: 'CreditRefunded' })],
    });
  });

  it('voids a payment never made, recording none', () => {
    const undo = decidePaymentUndo('p-1', 'o-1', null, NOW);
    expect(undo.payment).toEqual([expect.objectContaining({ type: 'PaymentVoided' })]);
    expect(undo.recorded).toBeUndefined();
    expect(undo.refund).toBeUndefined();
  });

  it('decides a refund to a customer that does not exist as broken, not as a business outcome', () => {
    const decision = decideCreditRefund({ paymentId: 'p-1', orderId: 'o-1', amountCents: 1 }, null);
    expect(decision).toEqual({
      kind: 'broken',
      message: 'credit of payment p-1 cannot be refunded: NO_SUCH_CUSTOMER',
    });
  });
});

describe('failureOf', () => {
  it('raises a refusal under its business name and a broken rule as a plain error', () => {
    const refused = failureOf(outOfStock(['a']));
    expect(refused).toBeInstanceOf(SagaError);
    expect(refused).toMatchObject({ name: 'OutOfStock', message: 'not enough stock of a' });
    const broken = failureOf({ kind: 'broken', message: 'bug' });
    expect(broken).not.toBeInstanceOf(SagaError);
    expect(broken).toMatchObject({ name: 'Error', message: 'bug' });
  });
});
