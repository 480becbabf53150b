import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What the local cloud's sandbox (local/lambda/worker.js) offers an
 * invocation to say that it is pausing and resuming. Lambda has no such
 * thing: there the pause is a plain timer and the hook is absent.
 */
const LOCAL_SANDBOX_PAUSING = Symbol.for('local-cloud.lambda.pausing');
type PausingHook = (pausing: boolean) => void;

/**
 * Pauses an invocation that has nothing to do but wait for another process
 * (the saga a waiting `POST /orders` waits for). On Lambda the execution
 * environment is held all the same, as it is for any wait. The local cloud
 * runs a few sandboxes on a small machine: told of the pause, it does not
 * count the paused sandbox as work, so that other invocations are not queued
 * behind one that only waits (see local/lambda/runtime.ts).
 */
export async function pause(ms: number): Promise<void> {
  const hook = (globalThis as Record<symbol, PausingHook | undefined>)[LOCAL_SANDBOX_PAUSING];
  hook?.(true);
  try {
    await sleep(ms);
  } finally {
    hook?.(false);
  }
}
