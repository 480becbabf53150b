/**
 * Invocations handed over to a busy sandbox, which starts each the moment
 * the one it runs has answered (see `handOver`), and asked back when a
 * sandbox of their function frees first.
 */
import { randomUUID } from 'node:crypto';
import { endTurn, workingCount } from './pauses';
import { maxSandboxes, type Pool, type RuntimeState, sandboxCount, starvedPool } from './pools';
import type { Sandbox } from './sandbox';

/**
 * An invocation given to a busy sandbox: its worker holds it and starts it
 * the moment the one it runs has answered, as Lambda's runtime asks for the
 * next event as soon as it has posted a response (see `handOver`).
 */
export interface HandOver {
  readonly id: string;
  /** When its invocation arrived (performance.now()): it waits as a queued one does (see `fill`). */
  readonly since: number;
  /** 'started' once the sandbox runs it; 'returned' if given back unstarted (it then waits for a sandbox again). */
  readonly outcome: Promise<'started' | 'returned'>;
  settle(outcome: 'started' | 'returned'): void;
}

/**
 * Hands the first waiting invocation over to `sandbox`, busy, when it may
 * take one (see `handOverTarget`): its worker then holds it and starts it
 * the moment its current invocation answers, as Lambda's runtime asks for
 * the next event as soon as it has posted a response. Without it, a queued
 * invocation waited for the answer to reach this (main) thread and for its
 * event to go back, each behind whatever this thread was doing: measured at
 * 50 iterations/s, the saga's busy sandbox sat idle 0.8–2.6 ms at the
 * median (2.8–9 ms at p90) between steps that were waiting for it. Only
 * invocations without a bound on their wait (saga steps, stream batches,
 * scheduled and asynchronous runs) are handed over: an HTTP API request
 * keeps its place in the queue, where its bound is kept.
 */
export function handOver(runtime: RuntimeState, sandbox: Sandbox) {
  const { pool } = sandbox;
  const head = pool.queue[0];
  if (!head || head.bounded || !mayHoldNext(sandbox) || !mayHandOver(runtime, pool)) return;
  pool.queue.shift();
  head.grant({ sandbox, handOver: holdNext(sandbox, head.since) });
}

/** Whether `sandbox` may be handed an invocation to start after its current one (its pool permitting). */
function mayHoldNext(sandbox: Sandbox): boolean {
  return (
    sandbox.state === 'busy' &&
    sandbox.nextUp === undefined &&
    !sandbox.paused &&
    sandbox.spec === sandbox.pool.spec
  );
}

/** Whether `pool`'s busy sandboxes may be handed invocations at all. */
function mayHandOver(runtime: RuntimeState, pool: Pool): boolean {
  return (
    // Room over the caps (lent while others paused) is given back as soon as it is free.
    pool.sandboxes.size <= pool.cap &&
    sandboxCount(runtime) <= maxSandboxes(runtime) &&
    // A function with no sandbox at all at the total cap gets the next one to free (see `release`).
    !(workingCount(runtime) >= maxSandboxes(runtime) && starvedPool(runtime, pool))
  );
}

/** The busy sandbox of `pool` an arriving invocation may be handed over to: the one busy the longest. */
export function handOverTarget(runtime: RuntimeState, pool: Pool): Sandbox | undefined {
  if (!mayHandOver(runtime, pool)) return undefined;
  let target: Sandbox | undefined;
  for (const s of pool.sandboxes) {
    if (mayHoldNext(s) && (!target || s.busySince < target.busySince)) target = s;
  }
  return target;
}

export function holdNext(sandbox: Sandbox, since: number): HandOver {
  let resolve!: (outcome: 'started' | 'returned') => void;
  const outcome = new Promise<'started' | 'returned'>((r) => {
    resolve = r;
  });
  const handOver: HandOver = {
    id: randomUUID(),
    since,
    outcome,
    settle: (settled) => {
      if (sandbox.nextUp !== handOver) return;
      sandbox.nextUp = undefined;
      if (settled === 'returned') sandbox.pool.stats.givenBack++;
      resolve(settled);
    },
  };
  sandbox.nextUp = handOver;
  return handOver;
}

/** The sandbox started the invocation handed over to it: it is now its current one, and the next may be handed over. */
export function promote(runtime: RuntimeState, sandbox: Sandbox, id: string) {
  const started = sandbox.nextUp;
  if (started?.id !== id) return;
  endTurn(runtime, sandbox);
  sandbox.current = id;
  sandbox.busySince = performance.now();
  started.settle('started');
  handOver(runtime, sandbox);
}

/**
 * `pool` has a free sandbox: an invocation handed over to another of its
 * sandboxes, still busy, is asked back to run here (that sandbox's worker
 * gives it back if it has not started it yet).
 */
export function takeBackFor(pool: Pool) {
  for (const s of pool.sandboxes) {
    if (s.nextUp && s.state === 'busy') {
      s.worker.postMessage({ takeBack: s.nextUp.id });
      return;
    }
  }
}
