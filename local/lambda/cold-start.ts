import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { readAssembly, resolver } from '../assembly';
import { PROJECT_ROOT, synthesize } from '../synth';
import { functionSpecs, LambdaRuntime } from './runtime';

export interface ColdStartOptions {
  /** Where the assembly is synthesized (as `npm start` does, unless it is up to date); default cdk.out. */
  readonly assemblyDir?: string;
  /** Take the assembly in `assemblyDir` as it is, without synthesizing (e.g. an earlier build, to compare). */
  readonly asIs?: boolean;
  /** The stage synthesized; default dev (what `npm start` runs). */
  readonly stage?: string;
  /** Fresh sandboxes started per function; default 5. */
  readonly runs?: number;
  readonly log?: (message: string) => void;
}

/** One function's fresh starts. */
export interface ColdStart {
  readonly functionId: string;
  /** The handler's file in its asset (index.js), bytes: what the sandbox loads. */
  readonly bundleBytes: number;
  /** From creating the sandbox to its handler loaded and resolved (the worker's `ready`), ms, one per run. */
  readonly startMs: readonly number[];
  /** The sandbox thread's CPU time until then, ms, one per run. */
  readonly startCpuMs: readonly number[];
}

/** The handler file of a function's asset: the largest .js/.mjs/.cjs file (source maps aside). */
function bundleBytes(codeDir: string): number {
  const sizes = readdirSync(codeDir)
    .filter((f) => /\.(m|c)?js$/.test(f))
    .map((f) => statSync(join(codeDir, f)).size);
  return Math.max(0, ...sizes);
}

/**
 * Times each function's fresh sandbox, as the local cloud starts one on a
 * function's first invocation: a worker thread with the function's
 * environment that loads the bundle and resolves its handler. Each run
 * starts every function once, one at a time, in a runtime of its own whose
 * V8 compile cache starts empty (a cold start on Lambda has none either);
 * nothing is invoked, and no AWS endpoint is called (the clients are made at
 * load, and connect on their first call).
 */
export async function timeColdStarts(options: ColdStartOptions = {}): Promise<ColdStart[]> {
  const log = options.log ?? (() => undefined);
  const runs = options.runs ?? 5;
  const assemblyPath = resolvePath(options.assemblyDir ?? join(PROJECT_ROOT, 'cdk.out'));
  const assemblyDir = options.asIs
    ? assemblyPath
    : await synthesize(assemblyPath, { stage: options.stage ?? 'dev' }, log);
  const assembly = readAssembly(assemblyDir);
  const specs = functionSpecs(assembly, resolver(assembly), {
    // Nothing listens there: a call at load would fail the start rather than reach anything.
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    AWS_SECRET_ACCESS_KEY: 'local',
  }).map((spec) => ({ ...spec, environment: { ...spec.environment, AWS_ACCESS_KEY_ID: spec.logicalId } }));

  const results = new Map<string, { startMs: number[]; startCpuMs: number[] }>(
    specs.map((s) => [s.logicalId, { startMs: [], startCpuMs: [] }]),
  );
  for (let run = 1; run <= runs; run++) {
    const logDir = mkdtempSync(join(tmpdir(), 'cold-start-'));
    const runtime = new LambdaRuntime(specs, logDir, {});
    try {
      for (const spec of specs) {
        const started = performance.now();
        await runtime.warm([spec.logicalId]);
        const ms = performance.now() - started;
        const cpuMs = runtime.sandboxes()[spec.logicalId]?.startCpuMs ?? Number.NaN;
        const result = results.get(spec.logicalId)!;
        result.startMs.push(ms);
        result.startCpuMs.push(cpuMs);
      }
    } finally {
      await runtime.stop();
      rmSync(logDir, { recursive: true, force: true });
    }
    log(`run ${run} of ${runs} done`);
  }
  return specs.map((spec) => ({
    functionId: spec.logicalId,
    bundleBytes: bundleBytes(spec.codeDir),
    ...results.get(spec.logicalId)!,
  }));
}
