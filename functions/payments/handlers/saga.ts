import { captureCredit } from '../../accounts/domain';
import { customers } from '../../accounts/store';
import { documents } from '../../shared/aws';
import { appendAtomically, retryOnConflict } from '../../shared/event-store';
import { assertBeforeDeadline, SagaError, sagaSteps } from '../../shared/saga';
import { paymentIdFor, settle } from '../domain';
import { paymentsStore } from '../store';

const payments = paymentsStore();
const accounts = customers();

/**
 * The saga's payment steps. One payment per order (its id derives from the
 * order's), so a repeated capture finds the first; the capture and the
 * customer's credit change are one transaction, and the credit decision is
 * conditional on the customer's version, so concurrent orders of one
 * customer cannot together exceed the limit.
 */
export const handler = sagaSteps({
  capture: (input, now) => {
    // The first attempt writes the payment as new without reading it (a repeat finds it there and fails the
    // write); the attempts after a lost race read it.
    let firstAttempt = true;
    return retryOnConflict(async () => {
      const paymentId = paymentIdFor(input.orderId);
      const [existing, customer] = await Promise.all([
        firstAttempt ? { state: null, version: 0 } : payments.load(paymentId),
        accounts.load(input.customerId),
      ]);
      firstAttempt = false;
      if (existing.state?.status === 'CAPTURED') return { paymentId };
      if (existing.state)
        throw new SagaError('PaymentDeclined', `payment ${paymentId} is ${existing.state.status}`);
      assertBeforeDeadline(input, now);
      if (!customer.state)
        throw new SagaError('PaymentDeclined', `customer ${input.customerId} does not exist`);
      const payment = { paymentId, orderId: input.orderId, amountCents: input.totalCents };
      const decision = captureCredit(customer.state, payment);
      const facts = { ...payment, customerId: input.customerId };
      const meta = { now, correlationId: input.correlationId };
      const paymentAppend = payments.pending(paymentId, 0, settle(facts, decision.accepted, now), null, meta);
      if (!decision.accepted) {
        await appendAtomically(documents, [paymentAppend]);
        throw new SagaError(
          'PaymentDeclined',
          `${input.totalCents} exceeds the available credit of ${input.customerId}`,
        );
      }
      await appendAtomically(documents, [
        paymentAppend,
        accounts.pending(input.customerId, customer.version, decision.events, customer.state, meta),
      ]);
      return { paymentId };
    });
  },
});
