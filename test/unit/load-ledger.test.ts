import { ordersOfLedger } from '../../load/ledger';
import type { LedgerLine } from '../../load/processor';

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
