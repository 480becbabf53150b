// Pure decider tests for the accounts domain: given events (folded), when a
// command, then the events it decides and the state they fold to.
import {
  availableCreditCents,
  type Customer,
  type CustomerEvent,
  type CustomerState,
  captureCredit,
  customerFold,
  customerView,
  DEFAULT_CREDIT_LIMIT_CENTS,
  refundCredit,
  register,
} from '../../functions/accounts/domain';
import { foldEvents } from '../../functions/shared/events';

const NOW = new Date('2025-03-01T10:00:00.000Z');
const CUSTOMER_ID = 'cus_0123456789abcdef0123456789abcdef';

const given = (...events: CustomerEvent[]): CustomerState =>
  foldEvents(customerFold, customerFold.initial, events);

const registered = (creditLimitCents = 10_000): CustomerEvent => ({
  type: 'CustomerRegistered',
  schemaVersion: 1,
  data: {
    customerId: CUSTOMER_ID,
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    creditLimitCents,
    registeredAt: NOW.toISOString(),
  },
});

const captured = (amountCents: number, n = 1): CustomerEvent => ({
  type: 'CreditCaptured',
  schemaVersion: 1,
  data: { paymentId: `pay_${n}`, orderId: `ord_${n}`, amountCents },
});

const refunded = (amountCents: number, n = 1): CustomerEvent => ({
  type: 'CreditRefunded',
  schemaVersion: 1,
  data: { paymentId: `pay_${n}`, orderId: `ord_${n}`, amountCents },
});

function existing(state: CustomerState): Customer {
  if (!state) throw new Error('expected a registered customer');
  return state;
}

describe('accounts domain', () => {
  describe('evolve', () => {
    it('starts with no customer', () => {
      expect(given()).toBeNull();
    });

    it('CustomerRegistered creates an active customer with nothing captured', () => {
      expect(given(registered(10_000))).toEqual({
        customerId: CUSTOMER_ID,
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        creditLimitCents: 10_000,
        capturedCents: 0,
        status: 'ACTIVE',
        createdAt: NOW.toISOString(),
      });
    });

    it('CreditCaptured adds to the captured amount', () => {
      const state = existing(given(registered(), captured(1_500, 1), captured(2_500, 2)));
      expect(state.capturedCents).toBe(4_000);
      expect(availableCreditCents(state)).toBe(6_000);
    });

    it('CreditRefunded gives the amount back', () => {
      const state = existing(given(registered(), captured(1_500, 1), captured(2_500, 2), refunded(1_500, 1)));
      expect(state.capturedCents).toBe(2_500);
      expect(availableCreditCents(state)).toBe(7_500);
    });

    it('credit events without a registered customer leave no customer', () => {
      expect(given(captured(100))).toBeNull();
      expect(given(refunded(100))).toBeNull();
    });

    it('does not mutate the state it is given', () => {
      const before = existing(given(registered()));
      const snapshot = structuredClone(before);
      customerFold.evolve(before, captured(100));
      expect(before).toEqual(snapshot);
    });
  });

  describe('register', () => {
    it('decides CustomerRegistered with the default credit limit', () => {
      const events = register({ customerId: CUSTOMER_ID, name: 'Ada', email: 'ada@example.com', now: NOW });
      expect(events).toEqual([
        {
          type: 'CustomerRegistered',
          schemaVersion: 1,
          data: {
            customerId: CUSTOMER_ID,
            name: 'Ada',
            email: 'ada@example.com',
            creditLimitCents: DEFAULT_CREDIT_LIMIT_CENTS,
            registeredAt: NOW.toISOString(),
          },
        },
      ]);
    });

    it('keeps an explicit credit limit, zero included', () => {
      for (const limit of [0, 1, 250_000]) {
        const [event] = register({
          customerId: CUSTOMER_ID,
          name: 'Ada',
          email: 'ada@example.com',
          creditLimitCents: limit,
          now: NOW,
        });
        expect(existing(given(event!)).creditLimitCents).toBe(limit);
      }
    });
  });

  describe('captureCredit', () => {
    const payment = (amountCents: number) => ({ paymentId: 'pay_9', orderId: 'ord_9', amountCents });

    it('accepts a capture of exactly the available credit', () => {
      const customer = existing(given(registered(10_000)));
      const decision = captureCredit(customer, payment(10_000));
      expect(decision).toEqual({
        accepted: true,
        events: [{ type: 'CreditCaptured', schemaVersion: 1, data: payment(10_000) }],
      });
      if (!decision.accepted) throw new Error('unreachable');
      const after = existing(foldEvents(customerFold, customer, decision.events));
      expect(availableCreditCents(after)).toBe(0);
    });

    it('declines one cent over the limit, with no event', () => {
      const customer = existing(given(registered(10_000)));
      expect(captureCredit(customer, payment(10_001))).toEqual({ accepted: false });
    });

    it('counts earlier captures: exactly the rest is accepted, one cent more declined', () => {
      const customer = existing(given(registered(10_000), captured(7_000)));
      expect(captureCredit(customer, payment(3_000)).accepted).toBe(true);
      expect(captureCredit(customer, payment(3_001))).toEqual({ accepted: false });
    });

    it('a refund makes the credit available again', () => {
      const customer = existing(given(registered(10_000), captured(10_000, 1), refunded(10_000, 1)));
      expect(captureCredit(customer, payment(10_000)).accepted).toBe(true);
    });

    it('declines anything at all once the limit is used up', () => {
      const customer = existing(given(registered(10_000), captured(10_000)));
      expect(captureCredit(customer, payment(1))).toEqual({ accepted: false });
    });

    it('a zero credit limit still accepts a zero capture and declines one cent', () => {
      const customer = existing(given(registered(0)));
      expect(captureCredit(customer, payment(0)).accepted).toBe(true);
      expect(captureCredit(customer, payment(1)).accepted).toBe(false);
    });
  });

  describe('refundCredit', () => {
    it('decides CreditRefunded for the payment', () => {
      const refund = { paymentId: 'pay_1', orderId: 'ord_1', amountCents: 1_234 };
      expect(refundCredit(refund)).toEqual([{ type: 'CreditRefunded', schemaVersion: 1, data: refund }]);
    });
  });

  describe('customerView', () => {
    it('shows the available credit, not the captured amount', () => {
      const customer = existing(given(registered(10_000), captured(2_500)));
      expect(customerView(customer)).toEqual({
        customerId: CUSTOMER_ID,
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        creditLimitCents: 10_000,
        availableCreditCents: 7_500,
        status: 'ACTIVE',
        createdAt: NOW.toISOString(),
      });
    });
  });
});
