import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CACHE_DIR } from '../cache-dir';
import { fetchMavenDependencies } from './maven';

/**
 * AWS's own event-pattern matcher, event-ruler (Java), as an oracle for ./pattern.ts.
 * Test-only: it needs Maven (first run only) and a Java 17+ runtime.
 */

const RULER_DIR = join(__dirname, 'ruler');
const RULER_CHECK = join(RULER_DIR, 'RulerCheck.java');
/** Where event-ruler and its dependencies are copied, once (local/.cache/event-ruler). */
export const RULER_LIB_DIR = join(CACHE_DIR, 'event-ruler');

/** event-ruler's answer for one case: its verdict, or why it rejected the pattern (or event). */
export type RulerResult = boolean | { readonly error: string };

let libDir: string | undefined;

/**
 * Runs event-ruler once over every case of `casesFile` (a JSON array of objects with
 * `pattern` and `event`) and returns its result for each, in order.
 */
export function rulerResults(casesFile: string): RulerResult[] {
  libDir ??= fetchMavenDependencies(RULER_DIR, RULER_LIB_DIR);
  const java = process.env['JAVA'] ?? 'java';
  const run = spawnSync(java, ['-cp', join(libDir, '*'), RULER_CHECK, casesFile], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  if (run.error) throw new Error(`Could not run ${java} (is a JDK 17+ installed?): ${run.error.message}`);
  if (run.status !== 0) {
    throw new Error(`RulerCheck.java failed on ${casesFile} (exit ${run.status}):\n${run.stderr}`);
  }
  const lines = run.stdout.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, index): RulerResult => {
    if (line === 'true') return true;
    if (line === 'false') return false;
    if (line.startsWith('error\t')) return { error: line.slice('error\t'.length) };
    throw new Error(`RulerCheck.java printed an unexpected line for case ${index}: ${line}`);
  });
}

/**
 * event-ruler's verdict for every case of `casesFile`, in order. Throws if event-ruler
 * rejects any case's pattern or event.
 */
export function rulerVerdicts(casesFile: string): boolean[] {
  return rulerResults(casesFile).map((result, index) => {
    if (typeof result === 'boolean') return result;
    throw new Error(`event-ruler rejected case ${index} of ${casesFile}: ${result.error}`);
  });
}
