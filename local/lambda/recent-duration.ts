/** How many warm invocations seed the mean (their median): fewer leave it unknown. */
const SEED_SAMPLES = 3;
/** How much an invocation weighs in the mean once seeded (exponential smoothing). */
const WEIGHT = 0.2;
/** A sample counts for at most this many times the mean (taken as 1 ms at least): one cold path moves it little, a lasting change still fast. */
const MAX_STEP = 4;

/**
 * A function's recent invocation duration, as admission control reads it
 * (how fast the function drains its queue). A sandbox's first invocation is
 * left out by the runtime, but its first call of each other path (another
 * route: new SDK commands, code not yet compiled) is still slow: on a fresh
 * cloud, a reservation after the product's creation took 250 ms where the
 * next ones took 1–2 ms, and as the mean's seed it made admission refuse 26
 * to 109 of a burst of 200 reservations that the one sandbox then answered
 * in half a second. So the mean starts from the median of the first three
 * warm invocations, and a sample far above it counts as four times the mean
 * (each such sample raises it by 60%: ten in a row, a hundredfold).
 */
export class RecentDuration {
  private readonly seed: number[] = [];
  private mean: number | undefined;

  /** The recent duration in ms; undefined before SEED_SAMPLES warm invocations. */
  get ms(): number | undefined {
    return this.mean;
  }

  /** A warm invocation's work, in ms. */
  add(workMs: number) {
    if (this.mean === undefined) {
      this.seed.push(workMs);
      if (this.seed.length < SEED_SAMPLES) return;
      this.mean = [...this.seed].sort((a, b) => a - b)[Math.floor(SEED_SAMPLES / 2)]!;
      return;
    }
    this.mean += WEIGHT * (Math.min(workMs, MAX_STEP * Math.max(this.mean, 1)) - this.mean);
  }
}
