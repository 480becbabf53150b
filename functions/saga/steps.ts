import type { Context } from 'aws-lambda';
import { CAPACITY_ERRORS, ConcurrencyError } from '../shared/errors';
import { logger, metrics, startInvocation } from '../shared/powertools';
import {
  type BusinessErrorName,
  type StepAction,
  type StepErrorName,
  type StepInput,
  type StepOutput,
  stepInput,
  TRANSIENT_ERROR,
  UNEXPECTED_ERROR,
} from './contract';
import type { Failure } from './rules';
import { SAGA_METRICS } from './seams';

/** The steps that undo a saga's work; their failures are counted apart, as an operator must act on them. */
const COMPENSATIONS = new Set<StepAction>(['cancel']);

/**
 * An error a step raises, named from the contract's closed set, so that the
 * state machine can `Retry` or `Catch` it by name (a Lambda's error type is
 * the name of what it threw).
 */
export class StepError extends Error {
  constructor(name: StepErrorName, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = name;
  }
}

/** A step's business outcome (out of stock, payment declined, ...): the saga cancels the order with its reason. */
export class SagaError extends StepError {
  constructor(name: BusinessErrorName, message: string) {
    super(name, message);
  }
}

/**
 * A rule's failing decision (rules.ts) as the error the step throws: a
 * refusal by its business error's name, for the state machine to `Catch`; a
 * broken invariant as a plain error, which leaves the step as unexpected.
 */
export function failureOf(failure: Failure): Error {
  return failure.kind === 'refuse'
    ? new SagaError(failure.error, failure.message)
    : new Error(failure.message);
}

/**
 * What AWS answers when it is busy or a transaction lost a race (the HTTP
 * edge's capacity refusals), or when it failed or timed out: worth another attempt.
 */
const TRANSIENT_AWS_ERRORS = new Set([
  ...CAPACITY_ERRORS,
  'InternalServerError',
  'ServiceUnavailable',
  'TransactionInProgressException',
  'TimeoutError',
]);
const TRANSIENT_NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN']);

/** Names what a step threw by the contract's closed set: its own errors as they are, the rest transient or unexpected. */
export function stepErrorOf(error: unknown): StepError {
  if (error instanceof StepError) return error;
  const e = error as {
    name?: string;
    code?: string;
    message?: string;
    $retryable?: unknown;
    CancellationReasons?: { Code?: string }[];
  };
  const message = e?.message ?? String(error);
  const transient =
    error instanceof ConcurrencyError ||
    e?.$retryable !== undefined ||
    TRANSIENT_AWS_ERRORS.has(e?.name ?? '') ||
    TRANSIENT_NETWORK_CODES.has(e?.code ?? '') ||
    (e?.name === 'TransactionCanceledException' &&
      (e.CancellationReasons ?? []).some(
        (r) => r.Code === 'TransactionConflict' || r.Code === 'ThrottlingError',
      ));
  return new StepError(
    transient ? TRANSIENT_ERROR : UNEXPECTED_ERROR,
    `${e?.name ?? 'Error'}: ${message}`,
    error,
  );
}

export type StepHandlers = {
  readonly [A in StepAction]?: (input: StepInput<A>, now: Date) => Promise<StepOutput<A>>;
};

/**
 * Routes a step invocation by its `action`, after checking the input against
 * the contract, with the order's correlation id on every log line; whatever
 * the step throws leaves here named by the contract.
 */
export function sagaSteps(steps: StepHandlers) {
  return async (event: unknown, context?: Context): Promise<unknown> => {
    startInvocation(context);
    const parsed = stepInput.safeParse(event);
    if (!parsed.success) {
      logger.error('saga step input breaks the contract', { issues: parsed.error.issues });
      throw new StepError(UNEXPECTED_ERROR, `invalid step input: ${parsed.error.message}`);
    }
    const input = parsed.data;
    const step = steps[input.action] as ((input: StepInput, now: Date) => Promise<unknown>) | undefined;
    if (!step) throw new StepError(UNEXPECTED_ERROR, `this function has no saga step ${input.action}`);
    logger.appendKeys({ correlationId: input.correlationId, orderId: input.orderId, step: input.action });
    try {
      const output = await step(input, new Date());
      logger.info('saga step done');
      return output;
    } catch (thrown) {
      const error = stepErrorOf(thrown);
      if (error instanceof SagaError) logger.info('saga step refused', { reason: error.name });
      else {
        logger.error(`saga step failed (${error.name})`, thrown as Error);
        if (COMPENSATIONS.has(input.action)) metrics.addMetric(SAGA_METRICS.compensationFailures, 'Count', 1);
        else if (error.name === UNEXPECTED_ERROR) metrics.addMetric(SAGA_METRICS.stepFailures, 'Count', 1);
        metrics.publishStoredMetrics();
      }
      throw error;
    } finally {
      logger.removeKeys(['correlationId', 'orderId', 'step']);
    }
  };
}
