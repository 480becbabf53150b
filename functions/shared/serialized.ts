const tails = new Map<string, Promise<unknown>>();

/**
 * Runs `task` after every earlier task with the same key in this sandbox has
 * finished. Commands on one aggregate that arrive together in one sandbox then
 * take turns instead of losing optimistic-concurrency races to each other;
 * writers in other sandboxes are still kept apart by the conditional append.
 */
export async function serialized<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(task, task);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
