/**
 * The saga sweeper's use case: which placed orders one sweep looks at, and
 * cancelling each of them on its own, so that one order whose cancellation
 * fails never leaves the others PENDING with their stock and credit held.
 * No AWS here: the handler (sweeper.ts) gives it the query and the
 * cancellation, the unit tests give it the in-memory stores.
 */
import { errorName } from '../shared/errors';

/**
 * How far back each sweep looks: twice the schedule's rate, so that a sweep
 * that runs late still meets the one before it, and every order is in the
 * window of two or three scheduled sweeps.
 */
export const SWEEP_WINDOW_MS = 2 * 60 * 1000;

/**
 * The deadlines a sweep scheduled at `scheduledAt` looks at: those that fell
 * `graceMs` or more before it, back to `windowMs` earlier. Derived from the
 * scheduled event's time, not the clock's: a sweep retried after a failure,
 * or redriven from the dead-letter queue later, looks at the very orders the
 * failed one did.
 */
export function sweepWindow(scheduledAt: Date, graceMs: number, windowMs = SWEEP_WINDOW_MS) {
  const upTo = scheduledAt.getTime() - graceMs;
  return { from: new Date(upTo - windowMs).toISOString(), upTo: new Date(upTo).toISOString() };
}

export interface LostSagaSweep {
  /** The orders of this sweep's window that may still be PENDING (those already final left out). */
  readonly open: () => Promise<readonly string[]>;
  /** Cancels one order with TIMEOUT, undoing what was done for it; true when this call cancelled it. */
  readonly cancel: (orderId: string) => Promise<boolean>;
  /**
   * No cancellation is begun at or after this time (ms since epoch), so that
   * a sweep with more to do than it has time for ends and says so instead of
   * being killed at its timeout, unheard.
   */
  readonly stopAt: number;
  readonly clock?: () => number;
}

/** One order whose cancellation failed: its id and the error's name, never its message (ids only in logs). */
export interface SweepFailure {
  readonly orderId: string;
  readonly error: string;
}

export interface SweepOutcome {
  /** The orders this sweep cancelled and undid. */
  readonly cancelled: readonly string[];
  /** The orders whose cancellation failed: still PENDING, still in this window. */
  readonly failed: readonly SweepFailure[];
  /** The orders not begun before `stopAt`: still PENDING, still in this window. */
  readonly left: readonly string[];
  /**
   * Whether this window is done with. When it is not (an order failed or was
   * left), the window must be swept again: the sweeper's invocation fails
   * after it has finished everything else, and Lambda sweeps the same window
   * again (the scheduled event's retries, then its dead-letter queue).
   */
  readonly complete: boolean;
}

/**
 * Cancels every open order of the window, each on its own: a cancellation
 * that throws is recorded and the sweep goes on with the next order. Orders
 * already final, or made final by their saga meanwhile, are left alone (the
 * cancellation then changes nothing and answers false).
 */
export async function sweepLostSagas(sweep: LostSagaSweep): Promise<SweepOutcome> {
  const clock = sweep.clock ?? Date.now;
  const open = await sweep.open();
  const cancelled: string[] = [];
  const failed: SweepFailure[] = [];
  const left: string[] = [];
  for (const orderId of open) {
    if (clock() >= sweep.stopAt) {
      left.push(orderId);
      continue;
    }
    try {
      if (await sweep.cancel(orderId)) cancelled.push(orderId);
    } catch (error) {
      failed.push({ orderId, error: errorName(error) });
    }
  }
  return { cancelled, failed, left, complete: failed.length === 0 && left.length === 0 };
}
