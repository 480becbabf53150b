/** The bounds of a StaleShare, by the names the settings that hold them use (StockCache's). */
export interface StaleShareSettings {
  /** Above this share of stale writes lately, guesses are not made. */
  readonly maxStaleShare: number;
  /** How fast a share no longer sampled is forgotten: halved every this many ms. */
  readonly staleHalfLifeMs: number;
}

/** How much one write weighs in the share (an exponentially weighted mean). */
const WEIGHT = 0.1;

/**
 * How often lately a sandbox's writes from what it remembered, not read for
 * them, failed on a version moved on elsewhere. Such a guess saves a read when
 * it holds and costs a failed conditional write when it does not, so where
 * many sandboxes share the same items (and what each remembers is often
 * stale) it is not worth making: past `maxStaleShare`, until the share, decaying
 * while nothing is sampled, is below it again.
 */
export class StaleShare {
  private share = 0;
  private sampledAt = 0;

  constructor(private readonly settings: StaleShareSettings) {}

  /** A write from a guess went through (`stale` false) or failed on the guessed version (true). */
  record(stale: boolean, now: number) {
    this.share = (1 - WEIGHT) * this.at(now) + (stale ? WEIGHT : 0);
    this.sampledAt = now;
  }

  /** Whether a guess is worth making at `now`. */
  worthGuessing(now: number) {
    return this.at(now) <= this.settings.maxStaleShare;
  }

  private at(now: number) {
    return this.share * 0.5 ** (Math.max(0, now - this.sampledAt) / this.settings.staleHalfLifeMs);
  }
}
