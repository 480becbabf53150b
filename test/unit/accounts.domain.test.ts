// Pure decider tests for the accounts domain: given events (folded), when a
// command, then the events it decides and the state they fold to.
import {
  availableCreditCents,
  type Customer,
  type CustomerCommand,
  type CustomerEvent,
  type CustomerState,
  customerDecider,
  DEFAULT_CREDIT_LIMIT_CENTS,
  profileOf,
} from '../../functions/accounts/domain';
import { customerView } from '../../functions/accounts/http-views';
import { deciderSpec } from '../support/decider-spec';

const NOW = new Date('2025-03-01T10:00:00.000Z');
const CUSTOMER_ID = 'cus_0123456789abcdef0123456789abcdef';

const spec = deciderSpec(customerDecider);
const given = (...events: CustomerEvent[]): CustomerState => spec.given(...events).state;

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

    it('CustomerRegistered creates an active customer with nothing captured, and no personal data in its state', () => {
      expect(given(registered(10_000))).toEqual({
        customerId: CUSTOMER_ID,
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
      customerDecider.evolve(before, captured(100));
      expect(before).toEqual(snapshot);
    });
  });

  describe('register', () => {
    const register = (creditLimitCents?: number): CustomerCommand => ({
      type: 'Register',
      customerId: CUSTOMER_ID,
      name: 'Ada',
      email: 'ada@example.com',
      ...(creditLimitCents === undefined ? {} : { creditLimitCents }),
      now: NOW,
    });

    it('decides CustomerRegistered with the default credit limit', () => {
      spec
        .given()
        .when(register())
        .thenDecides([
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
        const { state } = spec
          .given()
          .when(register(limit))
          .thenDecides([
            {
              type: 'CustomerRegistered',
              schemaVersion: 1,
              data: {
                customerId: CUSTOMER_ID,
                name: 'Ada',
                email: 'ada@example.com',
                creditLimitCents: limit,
                registeredAt: NOW.toISOString(),
              },
            },
          ]);
        expect(existing(state).creditLimitCents).toBe(limit);
      }
    });

    it('refuses a customer registered already', () => {
      spec.given(registered()).when(register()).thenRejects({ code: 'ALREADY_REGISTERED' });
    });
  });

  describe('capturing credit', () => {
    const payment = (amountCents: number) => ({ paymentId: 'pay_9', orderId: 'ord_9', amountCents });
    const capture = (amountCents: number): CustomerCommand => ({
      type: 'CaptureCredit',
      payment: payment(amountCents),
    });
    const creditCaptured = (amountCents: number): CustomerEvent => ({
      type: 'CreditCaptured',
      schemaVersion: 1,
      data: payment(amountCents),
    });
    const short = (availableCents: number) => ({ code: 'INSUFFICIENT_CREDIT', availableCents }) as const;

    it('accepts a capture of exactly the available credit', () => {
      const { state } = spec
        .given(registered(10_000))
        .when(capture(10_000))
        .thenDecides([creditCaptured(10_000)]);
      expect(availableCreditCents(existing(state))).toBe(0);
    });

    it('declines one cent over the limit, with no event', () => {
      spec.given(registered(10_000)).when(capture(10_001)).thenRejects(short(10_000));
    });

    it('counts earlier captures: exactly the rest is accepted, one cent more declined', () => {
      spec
        .given(registered(10_000), captured(7_000))
        .when(capture(3_000))
        .thenDecides([creditCaptured(3_000)]);
      spec.given(registered(10_000), captured(7_000)).when(capture(3_001)).thenRejects(short(3_000));
    });

    it('a refund makes the credit available again', () => {
      spec
        .given(registered(10_000), captured(10_000, 1), refunded(10_000, 1))
        .when(capture(10_000))
        .thenDecides([creditCaptured(10_000)]);
    });

    it('declines anything at all once the limit is used up', () => {
      spec.given(registered(10_000), captured(10_000)).when(capture(1)).thenRejects(short(0));
    });

    it('a zero credit limit still accepts a zero capture and declines one cent', () => {
      spec
        .given(registered(0))
        .when(capture(0))
        .thenDecides([creditCaptured(0)]);
      spec.given(registered(0)).when(capture(1)).thenRejects(short(0));
    });

    it('refuses a customer never registered', () => {
      spec.given().when(capture(1)).thenRejects({ code: 'NO_SUCH_CUSTOMER' });
    });
  });

  describe('refunding credit', () => {
    const refund = { paymentId: 'pay_1', orderId: 'ord_1', amountCents: 1_234 };

    it('decides CreditRefunded for the payment', () => {
      spec
        .given(registered())
        .when({ type: 'RefundCredit', payment: refund })
        .thenDecides([{ type: 'CreditRefunded', schemaVersion: 1, data: refund }]);
    });

    it('refuses a customer never registered', () => {
      spec.given().when({ type: 'RefundCredit', payment: refund }).thenRejects({ code: 'NO_SUCH_CUSTOMER' });
    });
  });

  describe('customerView', () => {
    it('shows the available credit, not the captured amount', () => {
      const customer = existing(given(registered(10_000), captured(2_500)));
      expect(customerView({ ...customer, name: 'Ada Lovelace', email: 'ada@example.com' })).toEqual({
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

  describe('personal data', () => {
    it('stays in the registration event: the folded state (what the saga hands on) has ids and credit only', () => {
      const state = existing(given(registered(10_000), captured(2_500)));
      expect(JSON.stringify(state)).not.toMatch(/Ada|example\.com/);
      expect(profileOf(registered(10_000))).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });
    });

    it('is dropped from the snapshots earlier versions folded it into', () => {
      const legacy = { ...existing(given(registered(10_000))), name: 'Ada', email: 'ada@example.com' };
      expect(customerDecider.upcastState!(legacy)).toEqual(existing(given(registered(10_000))));
    });
  });
});
