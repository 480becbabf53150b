import { errorName } from '../shared/errors';

/** One page of the expiry index: due reservation ids and where the next page starts, if any. */
export interface DuePage {
  readonly ids: readonly string[];
  readonly next?: Record<string, unknown>;
}

export interface ExpirySweep {
  /** A page of the reservations due in expiry partition `partition`, from `startKey`. */
  readonly page: (partition: number, startKey: Record<string, unknown> | undefined) => Promise<DuePage>;
  /** Expires one reservation; true when this call changed it (not already released). */
  readonly expire: (reservationId: string) => Promise<boolean>;
  readonly partitions: number;
  /**
   * No reservation is begun at or after this time (ms since epoch): a run
   * with more due than it can expire before its timeout ends cleanly instead
   * of being killed (a timed-out scheduled run is a failure, and lands in
   * the sweep's failure queue); the next run takes up the rest.
   */
  readonly stopAt: number;
  readonly clock?: () => number;
}

/** A reservation whose expiry failed: its id and the error's name, never its message (ids only in logs). */
export interface ExpiryFailure {
  readonly reservationId: string;
  readonly error: string;
}

export interface ExpiryOutcome {
  readonly expired: number;
  /**
   * The reservations whose expiry threw: each on its own, the run going on
   * with the rest. Still held, they are still in the index: the next run
   * finds them.
   */
  readonly failed: readonly ExpiryFailure[];
  /** Due reservations were left for the next run for want of time. */
  readonly backlog: boolean;
}

/**
 * Expires the due reservations of every expiry partition (the partitions side
 * by side, each one's reservations in turn) until none is left or `stopAt`.
 * One whose expiry fails is recorded and the run goes on with the next.
 */
export async function sweepExpired(sweep: ExpirySweep): Promise<ExpiryOutcome> {
  const clock = sweep.clock ?? Date.now;
  let expired = 0;
  let backlog = false;
  const failed: ExpiryFailure[] = [];
  /** Whether the run must stop here, with work still due: it then leaves a backlog. */
  const outOfTime = () => {
    if (clock() < sweep.stopAt) return false;
    backlog = true;
    return true;
  };
  await Promise.all(
    Array.from({ length: sweep.partitions }, async (_, partition) => {
      let startKey: Record<string, unknown> | undefined;
      do {
        if (outOfTime()) return;
        const page = await sweep.page(partition, startKey);
        for (const id of page.ids) {
          if (outOfTime()) return;
          try {
            if (await sweep.expire(id)) expired++;
          } catch (error) {
            failed.push({ reservationId: id, error: errorName(error) });
          }
        }
        startKey = page.next;
      } while (startKey);
    }),
  );
  return { expired, failed, backlog };
}
