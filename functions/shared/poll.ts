import { setTimeout as sleep } from 'node:timers/promises';

/** When to read again: the first read after `firstMs`, each later gap `factor` times the last, at most `maxMs`. */
export interface PollSchedule {
  readonly firstMs: number;
  readonly factor: number;
  readonly maxMs: number;
}

/** The gaps between reads of `schedule`, from the start, over `withinMs` (the last one ends at `withinMs`). */
export function pollGaps(schedule: PollSchedule, withinMs: number): number[] {
  const gaps: number[] = [];
  let elapsed = 0;
  let gap = schedule.firstMs;
  while (elapsed < withinMs) {
    const next = Math.min(gap, withinMs - elapsed);
    gaps.push(next);
    elapsed += next;
    gap = Math.min(gap * schedule.factor, schedule.maxMs);
  }
  return gaps;
}

export interface PollOutcome<T> {
  /** The read that satisfied `done`, or undefined when none did by the deadline. */
  readonly value: T | undefined;
  readonly reads: number;
}

/**
 * Reads on `schedule` until `done` holds or `deadlineMs` (epoch ms) passes,
 * the last read at the deadline. Nothing is read before the first gap: the
 * caller has just started what it waits for.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  deadlineMs: number,
  schedule: PollSchedule,
  pause: (ms: number) => Promise<unknown> = sleep,
): Promise<PollOutcome<T>> {
  let reads = 0;
  let gap = schedule.firstMs;
  for (let now = Date.now(); now < deadlineMs; now = Date.now()) {
    await pause(Math.min(gap, deadlineMs - now));
    const value = await read();
    reads++;
    if (done(value)) return { value, reads };
    gap = Math.min(gap * schedule.factor, schedule.maxMs);
  }
  return { value: undefined, reads };
}
