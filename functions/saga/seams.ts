/** The saga module's seams with the CDK app (see functions/shared/seams.ts). */
import type { CancellationReason } from '../orders';
import { environment, numeric } from '../shared/seams';

/**
 * The saga's EMF metrics, by name, for the functions that emit them and the
 * dashboard and alarms that watch them (lib/observability/): renaming one
 * side renames both.
 */
export const SAGA_SERVICE = 'saga';

export const SAGA_METRICS = {
  started: 'SagaStarted',
  confirmed: 'SagaConfirmed',
  cancelled: 'SagaCancelled',
  /** Dimensioned by `reason`. */
  cancelledByReason: 'SagaCancelledByReason',
  durationMs: 'SagaDurationMs',
  /** A compensation step failed (the state machine retries it until it succeeds). */
  compensationFailures: 'SagaCompensationFailures',
  /** A forward step failed unexpectedly (a bug or a broken contract): the order ends STEP_FAILED. */
  stepFailures: 'SagaStepFailures',
  /** Orders the sweeper cancelled (with TIMEOUT) because their saga did not finish: each is alarmed. */
  sweeperCancellations: 'SweeperCancellations',
  /** Orders whose cancellation by the sweeper failed: still PENDING, swept again (see functions/saga/handlers/sweeper.ts). */
  sweeperFailures: 'SweeperFailures',
} as const;

/** Why sagas end in cancellation, as an operator reads it. */
export const CANCELLATION_LABELS: Record<CancellationReason, string> = {
  OUT_OF_STOCK: 'out of stock',
  PAYMENT_DECLINED: 'payment declined',
  CONFIRMATION_FAILED: 'confirmation failed',
  TIMEOUT: 'timed out',
  STEP_FAILED: 'a step failed',
};

/** What the sweeper needs beside the tables the steps need: how long a saga may overrun its deadline. */
export const sweeperEnvironment = environment({ sweeperGraceSeconds: numeric('SWEEPER_GRACE_SECONDS') });
