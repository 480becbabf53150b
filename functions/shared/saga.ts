import type { KnownShard } from '../inventory/commands';
import type { Order } from '../orders/domain';
import { logger, metrics } from './powertools';

/** The steps that undo a saga's work; their failures are counted apart, as an operator must act on them. */
const COMPENSATIONS = new Set(['cancel']);

/** What every saga step receives from the state machine. */
export interface SagaStepInput {
  readonly action: string;
  readonly orderId: string;
  readonly customerId: string;
  readonly items: readonly { productId: string; quantity: number; priceCents: number }[];
  readonly totalCents: number;
  readonly deadline: string;
  readonly correlationId?: string;
  readonly reason?: string;
  /** The execution running the step: the claim of the order names it. */
  readonly executionArn?: string;
  /** ConfirmOrder's input: the order and its shards as ReserveStock wrote them, so that they need not be read again. */
  readonly order?: { readonly state: Order; readonly version: number };
  readonly shards?: readonly KnownShard[];
}

/**
 * A step's business outcome, raised so that the state machine can `Catch` it
 * by name (a Lambda's error type is the name of what it threw). These are
 * never retried; anything else is treated as transient.
 */
export class SagaError extends Error {
  constructor(
    name: 'OutOfStock' | 'PaymentDeclined' | 'ConfirmationFailed' | 'DeadlineExceeded',
    message: string,
  ) {
    super(message);
    this.name = name;
  }
}

/** Forward steps refuse to start past the saga's deadline, so the saga turns to compensation. */
export function assertBeforeDeadline(input: SagaStepInput, now: Date) {
  if (now.getTime() > Date.parse(input.deadline)) {
    throw new SagaError('DeadlineExceeded', `order ${input.orderId} passed its deadline ${input.deadline}`);
  }
}

/** Routes a step invocation by its `action`, with the order's correlation id on every log line. */
export function sagaSteps(steps: Record<string, (input: SagaStepInput, now: Date) => Promise<unknown>>) {
  return async (input: SagaStepInput): Promise<unknown> => {
    const step = steps[input.action];
    if (!step) throw new Error(`unknown saga action ${input.action}`);
    logger.appendKeys({
      correlationId: input.correlationId,
      orderId: input.orderId,
      step: input.action,
    });
    try {
      return await step(input, new Date());
    } catch (error) {
      if (COMPENSATIONS.has(input.action) && !(error instanceof SagaError)) {
        logger.error('compensation failed; the state machine retries it', error as Error);
        metrics.addMetric('SagaCompensationFailures', 'Count', 1);
        metrics.publishStoredMetrics();
      }
      throw error;
    } finally {
      logger.removeKeys(['correlationId', 'orderId', 'step']);
    }
  };
}
