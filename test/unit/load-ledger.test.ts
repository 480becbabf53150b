import { ordersOfLedger, reservationsOfLedger } from '../../load/ledger';
import type { LedgerLine, ReservationLine } from '../../load/processor';

const sent = (idempotencyKey: string): LedgerLine => ({
  idempotencyKey,
  customerId: 'cus_1',
  items: [{ productId: 'prd_1', quantity: 1 }],
  placedAt: 0,
});

describe("load: the run's orders from its ledger", () => {
  test('an order answered 202 is placed, with its id', () => {
    const { placed, unanswered } = ordersOfLedger([sent('a'), { ...sent('a'), orderId: 'ord_a' }]);
    expect(placed.map((line) => line.orderId)).toEqual(['ord_a']);
    expect(unanswered).toEqual([]);
  });

  test('an order never answered (a timeout) is to be recovered by its key', () => {
    const { placed, unanswered } = ordersOfLedger([sent('a'), sent('b'), { ...sent('b'), orderId: 'ord_b' }]);
    expect(unanswered.map((line) => line.idempotencyKey)).toEqual(['a']);
    expect(placed.map((line) => line.orderId)).toEqual(['ord_b']);
  });

  test('an order refused with a 4xx placed nothing and is not sent again', () => {
    const { placed, unanswered } = ordersOfLedger([sent('a'), { ...sent('a'), refusedWith: 429 }]);
    expect(placed).toEqual([]);
    expect(unanswered).toEqual([]);
  });
});

describe("load: the run's reservations from its ledger", () => {
  const reserved = (idempotencyKey: string): ReservationLine => ({
    idempotencyKey,
    productId: 'prd_1',
    customerId: 'cus_1',
    quantity: 1,
    sentAt: 0,
  });

  test('each answer replaces its request; a 5xx or a timeout leaves it unanswered, to be resent', () => {
    const { answered, unanswered } = reservationsOfLedger([
      reserved('made'),
      { ...reserved('made'), reservationId: 'res_1', expiresAt: '2026-01-01T00:00:00.000Z' },
      reserved('refused'),
      { ...reserved('refused'), refusedWith: 409 },
      reserved('lost'),
    ]);
    expect(answered.map((line) => [line.idempotencyKey, line.reservationId ?? line.refusedWith])).toEqual([
      ['made', 'res_1'],
      ['refused', 409],
    ]);
    expect(unanswered.map((line) => line.idempotencyKey)).toEqual(['lost']);
  });
});
