/**
 * Each function's bundle and its fresh sandbox's start (`npm run cold-start`):
 * synthesizes the app as `npm start` does (unless cdk.out is up to date), then
 * starts every function's sandbox from nothing, `--runs` times, and prints a
 * Markdown table (docs/benchmarks.md, "Cold starts") with the host's CPU probe.
 * A light benchmark: it starts one sandbox at a time and invokes nothing.
 */
import { type CommandSpec, parseCommandLine, timeColdStarts } from '@commerce/local-cloud';
import { cpuProbe } from './cpu-probe';

export const COLD_START_COMMAND = {
  usage: 'npm run cold-start -- [options]',
  description:
    "Prints each function's bundle size and how long a fresh sandbox of it takes to start (the bundle\n" +
    'loaded, the handler resolved: the median of fresh starts), with the CPU probe of the host before\n' +
    'and after. Synthesizes the app first unless cdk.out is up to date. See docs/benchmarks.md.',
  options: {
    runs: { type: 'string', value: 'N', default: '5', description: 'fresh sandboxes per function' },
    stage: { type: 'string', value: 'STAGE', default: 'dev', description: 'the stage synthesized' },
    assembly: {
      type: 'string',
      value: 'DIR',
      defaultText: 'cdk.out, synthesized first unless up to date',
      description: 'time the functions of this cloud assembly as it is (no synthesis), e.g. an earlier build',
    },
  },
  examples: [
    'npm run cold-start',
    'npm run cold-start -- --runs 9',
    'npm run cold-start -- --assembly ../before/cdk.out',
  ],
} as const satisfies CommandSpec;

// Parsed when run (imported, e.g. by the help's test, it has its defaults and runs nothing).
const { values } = parseCommandLine(COLD_START_COMMAND, require.main === module ? process.argv.slice(2) : []);

const median = (xs: readonly number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** A function's name without the CDK's hash suffix. */
const shortName = (logicalId: string) => logicalId.replace(/Function[0-9A-F]{8}$/, '');

async function main() {
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs takes a positive integer, not ${values.runs}`);
  const before = cpuProbe();
  const starts = await timeColdStarts({
    runs,
    stage: values.stage,
    ...(values.assembly === undefined ? {} : { assemblyDir: values.assembly, asIs: true }),
    log: (m) => console.error(`[cold-start] ${m}`),
  });
  const after = cpuProbe();
  console.log(
    `CPU probe ${Math.round(before.ms)} / ${Math.round(after.ms)} ms (before / after); ` +
      `${runs} fresh sandboxes per function, stage ${values.stage}\n`,
  );
  console.log(
    '| function | bundle (KB) | start, median (ms) | start CPU, median (ms) | start, min–max (ms) |',
  );
  console.log('| --- | --: | --: | --: | --: |');
  for (const s of starts) {
    console.log(
      `| ${shortName(s.functionId)} | ${(s.bundleBytes / 1000).toFixed(0)} | ${median(s.startMs).toFixed(0)} | ` +
        `${median(s.startCpuMs).toFixed(0)} | ${Math.min(...s.startMs).toFixed(0)}–${Math.max(...s.startMs).toFixed(0)} |`,
    );
  }
}

if (require.main === module)
  main().catch((error: Error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
