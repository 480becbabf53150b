/**
 * `npm run seed -- [options]` and `npm run load -- <mix|smoke|soak> [options]`; see
 * docs/load-testing.md. Exits non-zero when a run fails (a broken invariant; for smoke and soak also
 * any error).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_INVARIANT_OPTIONS } from './invariants';
import { PROFILES, type Profile, waitOption } from './profiles';
import { runProfile } from './run';
import { DEFAULT_SEED, seed, writePayload, writeSeed } from './seed';
import type { Target } from './target';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    target: { type: 'string', default: 'http://127.0.0.1:3000' },
    'aws-endpoint': { type: 'string', default: process.env.LOCAL_AWS_ENDPOINT },
    'no-counters': { type: 'boolean', default: false },
    levels: { type: 'string' },
    duration: { type: 'string' },
    'warm-up': { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    payload: { type: 'string' },
    customers: { type: 'string' },
    products: { type: 'string' },
    stock: { type: 'string' },
    'saga-deadline-seconds': { type: 'string' },
    'final-grace-seconds': { type: 'string' },
    wait: { type: 'string' },
  },
});

/** `npm start` serves its AWS endpoint on the API's port plus one; a remote stage has none. */
function besideLocalApi(api: string): string | undefined {
  const local = /^http:\/\/127\.0\.0\.1:(\d+)$/.exec(api);
  return local ? `http://127.0.0.1:${Number(local[1]) + 1}` : undefined;
}

const positive = (name: string, value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${value}`);
  return n;
};

const nonNegative = (name: string, value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number of 0 or more, not ${value}`);
  return n;
};

async function main() {
  const [command] = positionals;
  const api = values.target.replace(/\/$/, '');
  const awsEndpoint = values['no-counters'] ? undefined : (values['aws-endpoint'] ?? besideLocalApi(api));
  const target: Target = { api, ...(awsEndpoint ? { awsEndpoint: awsEndpoint.replace(/\/$/, '') } : {}) };
  if (command === 'seed') {
    const out = values.out ?? 'load/out/seed.json';
    const data = await seed(target, {
      ...DEFAULT_SEED,
      ...(values.customers ? { customers: positive('customers', values.customers) } : {}),
      ...(values.products ? { products: positive('products', values.products) } : {}),
      ...(values.stock ? { stock: positive('stock', values.stock) } : {}),
    });
    const payload = values.payload ?? out.replace(/(\.json)?$/, '.csv');
    for (const file of [out, payload]) mkdirSync(dirname(file), { recursive: true });
    writeSeed(out, data);
    writePayload(payload, data);
    console.log(
      `seeded ${data.customers.length} customers and ${data.products.length} products on ${target.api}: ${out}, ` +
        `and the Artillery payload ${payload}`,
    );
    return;
  }
  const base = PROFILES[command as Profile['name']];
  if (!base)
    throw new Error(`usage: npm run load -- <${Object.keys(PROFILES).join('|')}> [options], or npm run seed`);
  const profile: Profile = {
    ...base,
    ...(values.levels ? { levels: values.levels.split(',').map((l) => positive('levels', l)) } : {}),
    ...(values.duration ? { durationSeconds: positive('duration', values.duration) } : {}),
    ...(values['warm-up'] ? { warmUpSeconds: nonNegative('warm-up', values['warm-up']) } : {}),
    ...(values.wait ? { waitSeconds: waitOption(values.wait) } : {}),
  };
  if (!target.awsEndpoint)
    console.log('no --aws-endpoint (or LOCAL_AWS_ENDPOINT): no counters, so resources and cost will be n/a');
  const outcome = await runProfile({
    profile,
    target,
    ...(values.out ? { outDir: values.out } : {}),
    ...(values.seed ? { seedFile: values.seed } : {}),
    invariants: {
      ...DEFAULT_INVARIANT_OPTIONS,
      ...(values['saga-deadline-seconds']
        ? { sagaDeadlineSeconds: positive('saga-deadline-seconds', values['saga-deadline-seconds']) }
        : {}),
      ...(values['final-grace-seconds']
        ? { finalGraceSeconds: positive('final-grace-seconds', values['final-grace-seconds']) }
        : {}),
    },
  });
  console.log(`report: ${outcome.reportFile}`);
  if (!outcome.ok) {
    console.error(`FAILED:\n${outcome.failures.map((f) => `- ${f}`).join('\n')}`);
    process.exitCode = 1;
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exitCode = 1;
});
