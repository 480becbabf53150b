/**
 * When the local cloud is quiescent, read from `GET /_local/stats`: the one
 * reader that the tests (test/support/api.ts) and `npm run chaos` share.
 */

/** What quiescence reads of the stats. */
export interface QuiescenceStats {
  readonly writes: Record<string, { readonly itemWrites: number }>;
  readonly streams: Record<string, { readonly pending: boolean }>;
  readonly eventBridge: { readonly lateCopiesPending: number };
  readonly stepFunctions: { readonly running: number; readonly tasksInFlight: number };
}

/**
 * Whether anything is still on its way: a saga execution running, a Task
 * attempt unsettled (a late one still writes after its execution ended), a
 * stream mapping with records to deliver (a batch gathering over its window,
 * being delivered, or a late copy to come), or a late copy of a bus event.
 */
export const isBusy = (stats: QuiescenceStats) =>
  stats.stepFunctions.running > 0 ||
  stats.stepFunctions.tasksInFlight > 0 ||
  Object.values(stats.streams).some((s) => s.pending) ||
  stats.eventBridge.lateCopiesPending > 0;

/** Item writes per table, but for the tables whose name matches `leaveOut`. */
export const itemWrites = (stats: QuiescenceStats, leaveOut?: RegExp): Record<string, number> =>
  Object.fromEntries(
    Object.entries(stats.writes)
      .filter(([table]) => !leaveOut?.test(table))
      .map(([table, t]) => [table, t.itemWrites]),
  );

export interface QuiescenceOptions {
  /** How long nothing may be busy and no item written (ms). */
  readonly stillMs: number;
  /** How often the stats are read (ms). */
  readonly everyMs: number;
  /** When to give up (ms). */
  readonly timeoutMs: number;
  /** Tables whose writes are not counted (their writer runs on its own: a sweeper's, say). */
  readonly leaveOut?: RegExp;
}

/**
 * Reads the stats until the cloud has been quiet for `stillMs` (nothing busy
 * and no item written), or `timeoutMs` has passed; `quiet` says which. Every
 * effect of a request is an item written, so once nothing is on its way and
 * no write has landed for a while, every write an earlier request caused has.
 */
export async function waitForQuiescence<S extends QuiescenceStats>(
  read: () => Promise<S>,
  options: QuiescenceOptions,
): Promise<{ readonly quiet: boolean; readonly stats: S; readonly writes: Record<string, number> }> {
  const deadline = Date.now() + options.timeoutMs;
  let stats = await read();
  let key = JSON.stringify(itemWrites(stats, options.leaveOut));
  let stillSince = Date.now();
  for (;;) {
    if (isBusy(stats)) stillSince = Date.now();
    else if (Date.now() - stillSince >= options.stillMs)
      return { quiet: true, stats, writes: itemWrites(stats, options.leaveOut) };
    if (Date.now() > deadline) return { quiet: false, stats, writes: itemWrites(stats, options.leaveOut) };
    await new Promise((resolve) => setTimeout(resolve, options.everyMs));
    stats = await read();
    const next = JSON.stringify(itemWrites(stats, options.leaveOut));
    if (next !== key) {
      key = next;
      stillSince = Date.now();
    }
  }
}
