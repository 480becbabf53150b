import { paymentIdFor } from '../payments';
import { retryOnConflict } from '../shared/event-store';
import type { SagaContext } from './context';
import type { StepInput, StepOutput } from './contract';
import { decideCapture } from './rules';
import { failureOf } from './steps';

/**
 * How old a customer ReserveStock read may be for CapturePayment to write
 * from it without reading it again. The steps follow each other within
 * milliseconds when the saga runs freely; when its steps queue for seconds,
 * the customer's other orders have often moved it on meanwhile, and a stale
 * version costs a failed transaction before the read anyway (measured at
 * 50/s with the steps queued, without this bound: 84–94% of the captures).
 */
const HANDED_ON_CUSTOMER_MAX_AGE_MS = 250;

function youngCustomer(customer: StepInput<'capture'>['customer'], now: Date) {
  if (!customer?.state) return undefined;
  return now.getTime() - Date.parse(customer.readAt) <= HANDED_ON_CUSTOMER_MAX_AGE_MS ? customer : undefined;
}

/**
 * The saga's second step, CapturePayment: captures the order's total against
 * the customer's credit (see `decideCapture`). One payment per order (its id
 * derives from the order's), so a repeated capture finds the first; the
 * capture and the customer's credit change are one transaction, conditional
 * on the customer's version, so concurrent orders of one customer cannot
 * together exceed the limit.
 */
export function capturePayment({ payments, customers, events, readCustomer }: SagaContext) {
  return (input: StepInput<'capture'>, now: Date): Promise<StepOutput<'capture'>> => {
    // The first attempt writes the payment as new without reading it (a repeat finds it there and fails
    // the write), and starts from the customer as ReserveStock read it, if that read is young: a capture
    // writes the customer conditional on that version, so a stale one fails and the attempts after it
    // read both. A refusal writes nothing of the customer, so it is decided again on a fresh read.
    const handedOnAtStart = youngCustomer(input.customer, now);
    return retryOnConflict(async (attempt) => {
      const first = attempt === 1;
      const handedOn = first ? handedOnAtStart : undefined;
      const paymentId = paymentIdFor(input.orderId);
      const [existing, startedFrom] = await Promise.all([
        first ? { state: null, version: 0 } : payments.load(paymentId),
        handedOn ?? readCustomer(input.customerId, now),
      ]);
      let customer = startedFrom;
      let decided = decideCapture(paymentId, existing.state, customer.state, input, now);
      if (handedOn && decided.kind === 'decline') {
        customer = await readCustomer(input.customerId, now);
        decided = decideCapture(paymentId, existing.state, customer.state, input, now);
      }
      if (decided.kind === 'done') return { paymentId };
      if (decided.kind === 'refuse' || decided.kind === 'broken') throw failureOf(decided);
      const meta = { now, correlationId: input.correlationId };
      const paymentAppend = payments.pending(paymentId, 0, decided.payment, null, meta);
      const credit = decided.kind === 'capture' && customer.state ? decided.credit : undefined;
      const creditAppend = credit
        ? [customers.pending(input.customerId, customer.version, credit, customer.state, meta)]
        : [];
      await events.write([paymentAppend, ...creditAppend]);
      if (decided.kind === 'decline') throw failureOf(decided.refusal);
      return { paymentId };
    });
  };
}
