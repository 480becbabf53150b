/**
 * How a pool grows: a sandbox starts for a queue that has waited, one start
 * at a time, within the caps; at the total cap, only in room made by
 * stopping another function's idle sandbox.
 */
import { belowCeiling, lentRoom, workingCount } from './pauses';
import { maxSandboxes, type Pool, type RuntimeState } from './pools';
import { type Sandbox, startSandbox, stopSandbox } from './sandbox';

/** A function's last sandbox is taken for another function's room only after this long idle. */
export const LAST_SANDBOX_IDLE_MS = 10_000;
/**
 * A sandbox is stopped for another function's room only once it has lived
 * this long, so that a start (150–250 ms of CPU here) buys its function at
 * least this much service. Measured without it, in 25/s levels that fell
 * into the slow mode: at the total cap the orders API and the saga's steps
 * took each other's just-freed sandboxes in turn, and started 22–34 and
 * 23–31 sandboxes in a level (2.8–8.3 ms of CPU per transaction in starts,
 * against 0–0.6 in levels that ran well).
 */
export const EVICTABLE_AFTER_MS = 5_000;
/**
 * A function that has sandboxes starts another only once the invocation at
 * the head of its queue has waited this long (see `queueWaitMs`). Lambda
 * starts an environment for every invocation that finds none free; here a
 * start costs 150–250 ms of CPU on the same two cores as everything else
 * (measured: a function's worker and bundle), and a new sandbox is cold: its
 * invocations cost two to four times a warm one's CPU until V8 has optimized
 * the AWS SDK's code in it, which takes it a few thousand invocations. So a
 * pool grows only for a queue that has lasted, not for one that would drain.
 * With the threshold on the queue's expected drain at the recent duration
 * (50 ms), the saga's step function and the orders API grew to 5–10
 * sandboxes in a 25/s load's first seconds, while their first sandbox was
 * still cold and slow, and every one of them stayed lukewarm: a saga step
 * cost 3.1–4.5 ms of CPU for the whole level, against 2.1–2.9 ms where each
 * pool kept one sandbox.
 */
const START_AFTER_WAIT_MS = 250;
/**
 * At the total cap a start stops another function's sandbox to make room,
 * which that function will likely start again: two cold starts. So it waits
 * for a longer queue. Measured at 25 iterations/s on a saturated machine with
 * only START_AFTER_WAIT_MS: the API functions started 40–53 sandboxes each in
 * a level of 45 s, taking each other's room in turn.
 */
const EVICT_AFTER_WAIT_MS = 500;

/** Starts sandboxes for the invocations waiting in every function's queue, within the caps. */
export function fillAll(runtime: RuntimeState) {
  for (const pool of runtime.pools.values()) fill(runtime, pool);
}

/**
 * Starts a sandbox for the invocations waiting in `pool`'s queue, within the caps, when worth it.
 * One start at a time, the next weighed when it is ready (see `startSandbox`): behind a slow (cold) first
 * invocation every queued one had waited, and a pool with none (its last sandbox given up for
 * another's room) counted an endless wait; either way one started for each.
 */
export function fill(runtime: RuntimeState, pool: Pool) {
  if (pool.starting > 0) return;
  const oldest = oldestWaiting(pool);
  if (oldest === undefined) return;
  const serving = pool.sandboxes.size - lentRoom(pool);
  if (serving >= pool.cap || !belowCeiling(runtime)) return;
  const waitMs = queueWaitMs(pool, serving, oldest);
  const atCap = workingCount(runtime) >= maxSandboxes(runtime);
  const startAfterMs = atCap
    ? EVICT_AFTER_WAIT_MS
    : (runtime.options.startAfterWaitMs ?? START_AFTER_WAIT_MS);
  if (waitMs < startAfterMs) return fillLater(runtime, pool, startAfterMs - waitMs);
  if (atCap && !evictFor(runtime, pool)) return;
  startSandbox(runtime, pool);
}

/**
 * How long `pool`'s invocation waiting longest to start (arrived at
 * `oldest`: its queue's head, or one handed over to a busy sandbox; none
 * starting; `serving` sandboxes not lent) has waited, ms, counted from its
 * arrival or from when the pool's last start became ready, whichever is
 * later; infinite while no sandbox serves (then a sandbox starts at once).
 * So a pool grows by one sandbox at a time, each for a queue that has
 * lasted the threshold with the sandboxes it has. Not by what the queue
 * ahead would take to drain at the recent duration: a burst on a cold
 * sandbox reads as a long queue by that estimate, and behind a slow first
 * invocation every queued one had waited, which started a sandbox for
 * each, all as cold (see START_AFTER_WAIT_MS; a runtime test each).
 */
function queueWaitMs(pool: Pool, serving: number, oldest: number): number {
  if (serving <= 0) return Number.POSITIVE_INFINITY;
  return performance.now() - Math.max(oldest, pool.grewAt);
}

/** When the invocation of `pool` waiting longest to start arrived: its queue's head, or one handed over. */
function oldestWaiting(pool: Pool): number | undefined {
  let since = pool.queue[0]?.since;
  for (const s of pool.sandboxes) {
    if (s.nextUp && (since === undefined || s.nextUp.since < since)) since = s.nextUp.since;
  }
  return since;
}

/** Looks again at `pool`'s queue after `delayMs` (one timer per pool at a time). */
function fillLater(runtime: RuntimeState, pool: Pool, delayMs: number) {
  if (pool.fillTimer || runtime.stopped) return;
  pool.fillTimer = setTimeout(() => {
    pool.fillTimer = undefined;
    fill(runtime, pool);
  }, Math.ceil(delayMs) + 1);
  pool.fillTimer.unref();
}

/**
 * Makes room under the total cap for `pool`'s waiting invocations by
 * stopping another function's longest-idle sandbox (of one with nobody
 * waiting): one beyond its first at once, its last only once idle
 * LAST_SANDBOX_IDLE_MS (a function nobody calls goes cold, as on Lambda, so
 * a scheduled one does not hold room a busy one needs), and, while `pool`
 * has a sandbox of its own to serve its queue, none younger than
 * EVICTABLE_AFTER_MS. When only such sandboxes stand in the way, the room
 * is looked for again once they are old enough. (Measured: also sparing
 * sandboxes beyond the first until idle 500 ms starved the saga's steps
 * behind the busy APIs.)
 */
function evictFor(runtime: RuntimeState, pool: Pool): boolean {
  const now = performance.now();
  const lastIdleMs = runtime.options.lastSandboxIdleMs ?? LAST_SANDBOX_IDLE_MS;
  // A function with no sandbox at all is never kept waiting for others' young ones.
  const evictableAfterMs =
    pool.sandboxes.size > 0 ? (runtime.options.evictableAfterMs ?? EVICTABLE_AFTER_MS) : 0;
  let victim: Sandbox | undefined;
  let soonest = Number.POSITIVE_INFINITY;
  for (const other of runtime.pools.values()) {
    if (other === pool || other.queue.length > 0) continue;
    for (const s of other.idle) {
      const wait = Math.max(
        other.sandboxes.size <= 1 ? lastIdleMs - (now - s.idleSince) : 0,
        evictableAfterMs - (now - s.startedAt),
      );
      if (wait > 0) soonest = Math.min(soonest, wait);
      else if (!victim || s.idleSince < victim.idleSince) victim = s;
    }
  }
  if (!victim) {
    if (Number.isFinite(soonest)) refillLater(runtime, soonest);
    return false;
  }
  victim.pool.stats.reclaimed++;
  stopSandbox(runtime, victim, false);
  return true;
}

/** Looks for room again for the functions that wait, after `delayMs` (one timer at a time). */
function refillLater(runtime: RuntimeState, delayMs: number) {
  if (runtime.refillTimer || runtime.stopped) return;
  runtime.refillTimer = setTimeout(() => {
    runtime.refillTimer = undefined;
    fillAll(runtime);
  }, Math.ceil(delayMs) + 1);
  runtime.refillTimer.unref();
}
