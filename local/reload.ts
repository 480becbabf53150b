import { type FSWatcher, watch } from 'node:fs';
import { join } from 'node:path';
import { type Assembly, type Resource, readAssembly, type Template } from './assembly';
import type { LambdaRuntime } from './lambda/runtime';
import { synthesize } from './synth';

/** What differs between the running template and a newly synthesized one. */
export interface TemplateChanges {
  /** Functions whose bundle alone changed: logical id → the new asset's path in the assembly. */
  readonly code: ReadonlyMap<string, string>;
  /** Everything else that changed, as `<logical id> (<type>) added|removed|changed`. */
  readonly other: readonly string[];
}

/**
 * Resources that run nothing locally and that nothing local reads: a change
 * to them needs no restart. (The CDK's metadata also differs between synths
 * by different CLI runs, with no change to the app.)
 */
const NO_LOCAL_EFFECT = new Set([
  'AWS::CDK::Metadata',
  'AWS::CloudWatch::Alarm',
  'AWS::CloudWatch::Dashboard',
]);

/** A function's resource without what names its bundle (the asset's path and S3 key), and that asset path. */
function withoutBundle(resource: Resource): { rest: Resource; assetPath: unknown } {
  if (resource.Type !== 'AWS::Lambda::Function') return { rest: resource, assetPath: undefined };
  const { Code: _code, ...properties } = resource.Properties ?? {};
  const { 'aws:asset:path': assetPath, ...metadata } = resource.Metadata ?? {};
  return { rest: { ...resource, Properties: properties, Metadata: metadata }, assetPath };
}

/**
 * Compares two templates of the stack: which functions only got new code
 * (what the running local cloud can take without a restart: a new sandbox
 * loads the new bundle), and what else changed (tables, routes, rules, state
 * machines, a function's environment or role), which it cannot take safely.
 */
export function templateChanges(running: Template, next: Template): TemplateChanges {
  const code = new Map<string, string>();
  const other: string[] = [];
  for (const [id, resource] of Object.entries(next.Resources)) {
    if (NO_LOCAL_EFFECT.has(resource.Type)) continue;
    const before = running.Resources[id];
    if (!before) {
      other.push(`${id} (${resource.Type}) added`);
      continue;
    }
    const was = withoutBundle(before);
    const now = withoutBundle(resource);
    if (JSON.stringify(was.rest) !== JSON.stringify(now.rest)) other.push(`${id} (${resource.Type}) changed`);
    else if (was.assetPath !== now.assetPath && typeof now.assetPath === 'string')
      code.set(id, now.assetPath);
  }
  for (const [id, resource] of Object.entries(running.Resources)) {
    if (!next.Resources[id] && !NO_LOCAL_EFFECT.has(resource.Type))
      other.push(`${id} (${resource.Type}) removed`);
  }
  return { code, other };
}

/**
 * Re-synthesizes the app (`npm start -- --watch`) and, if only functions'
 * bundles changed, points those functions at their new bundles (their
 * sandboxes are replaced as they free up; the tables and their data stay).
 * Anything else that changed is reported and nothing is applied: tables,
 * routes, rules and state machines are wired once, at start.
 */
export function reloader(
  assemblyPath: string,
  context: Record<string, string>,
  log: (message: string) => void,
  assembly: Assembly,
  runtime: LambdaRuntime,
): () => Promise<TemplateChanges> {
  // The assembly the cloud runs; `reload` moves it on when only functions' bundles changed.
  let running = assembly;
  return async (): Promise<TemplateChanges> => {
    const next = readAssembly(await synthesize(assemblyPath, context, log));
    const changes = templateChanges(running.template, next.template);
    if (changes.other.length > 0) return changes;
    for (const [functionId, assetPath] of changes.code) {
      const current = runtime.specs.get(functionId)!;
      const codeDir = join(next.dir, assetPath);
      runtime.replaceFunction({
        ...current,
        codeDir,
        environment: { ...current.environment, LAMBDA_TASK_ROOT: codeDir },
      });
    }
    running = next;
    return changes;
  };
}

/** Editors' swap, backup and temporary files (and vim's write test, `4913`): not the app's sources. */
const NOT_SOURCE = /(^|[/\\])(\.[^/\\]*|[^/\\]*~|\.?#[^/\\]*|4913)$|\.(swp|swx|swo|tmp)$/;

/**
 * Calls `onChange` once the sources under `dirs` have been quiet for
 * `debounceMs` after a change, and never twice at once: a change while it
 * runs calls it once more afterwards. Returns a function that stops watching.
 */
export function watchSources(
  root: string,
  dirs: readonly string[],
  onChange: (files: readonly string[]) => Promise<void>,
  debounceMs = 300,
): () => void {
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  const run = async () => {
    timer = undefined;
    if (running || changed.size === 0) return;
    running = true;
    const files = [...changed];
    changed.clear();
    try {
      await onChange(files);
    } finally {
      running = false;
      if (changed.size > 0 && !timer) timer = setTimeout(run, debounceMs);
    }
  };
  const watchers: FSWatcher[] = dirs.map((dir) =>
    watch(join(root, dir), { recursive: true }, (_event, file) => {
      if (!file || NOT_SOURCE.test(file)) return;
      changed.add(join(dir, file));
      clearTimeout(timer);
      timer = setTimeout(run, debounceMs);
    }),
  );
  return () => {
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
}
