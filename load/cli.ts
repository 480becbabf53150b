/**
 * `npm run seed -- [options]` and `npm run load -- <mix|smoke|soak> [options]`; see
 * docs/load-testing.md. Exits non-zero when a run fails (a broken invariant; for smoke and soak also
 * any error).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type CommandSpec, parseCommandLine, usageError } from '@commerce/local-cloud';
import { DEFAULT_INVARIANT_OPTIONS } from './invariants';
import { PROFILES, type Profile, waitOption } from './profiles';
import { runProfile } from './run';
import { DEFAULT_SEED, seed, writePayload, writeSeed } from './seed';
import type { Target } from './target';

/** The options of both: where the target is. */
const TARGET_OPTIONS = {
  target: {
    type: 'string',
    value: 'URL',
    default: 'http://127.0.0.1:3000',
    description: "the platform's API (a stage's: tokens from COMMERCE_TOKEN_URL, …)",
  },
  'aws-endpoint': {
    type: 'string',
    value: 'URL',
    defaultText: "LOCAL_AWS_ENDPOINT, else for http://127.0.0.1:<port> the port after it (npm start's)",
    description: "the local cloud's AWS endpoint: its issuer and counters",
  },
  'no-counters': {
    type: 'boolean',
    default: false,
    description: "without the local cloud's counters (resources and cost n/a, as on a stage)",
  },
} as const;

const ENVIRONMENT = {
  LOCAL_AWS_ENDPOINT: 'the default of --aws-endpoint',
  COMMERCE_TOKEN_URL: "a stage's token endpoint (client credentials grant)",
  COMMERCE_CLIENT_ID: "the operators' app client",
  COMMERCE_CLIENT_SECRET: 'its secret',
  COMMERCE_SHOP_TOKENS: "optional: a file of customers' shop tokens, one per line",
} as const;

export const SEED_COMMAND = {
  usage: 'npm run seed -- [options]',
  description:
    'Creates customers (each owned by a sub of its own, with plenty of credit) and products (with plenty\n' +
    'of stock) through the API, and writes their ids: a seed file for `npm run load -- <profile> --seed`,\n' +
    'and beside it the CSV payload of the Artillery scripts (load/*.yml).',
  options: {
    ...TARGET_OPTIONS,
    out: { type: 'string', value: 'FILE', default: 'load/out/seed.json', description: 'the seed file' },
    payload: {
      type: 'string',
      value: 'FILE',
      defaultText: 'the seed file with .csv (load/out/seed.csv, which load/mix.yml and soak.yml read)',
      description: "Artillery's payload CSV (customerId,sub,productId)",
    },
    customers: {
      type: 'string',
      value: 'N',
      default: String(DEFAULT_SEED.customers),
      description: 'customers to create',
    },
    products: {
      type: 'string',
      value: 'N',
      default: String(DEFAULT_SEED.products),
      description: 'products to create',
    },
    stock: {
      type: 'string',
      value: 'N',
      default: String(DEFAULT_SEED.stock),
      description: 'units of each product',
    },
  },
  environment: ENVIRONMENT,
  examples: [
    'npm run seed',
    'npm run seed -- --customers 10 --products 10',
    'npm run seed -- --target "$COMMERCE_API_URL" --out load/out/dev-seed.json',
  ],
} as const satisfies CommandSpec;

/** The options of a profile's run; the profile's own values are the defaults of the first three. */
const runOptions = (defaults: { levels: string; duration: string; warmUp: string }) =>
  ({
    ...TARGET_OPTIONS,
    levels: {
      type: 'string',
      value: 'R1,R2,…',
      defaultText: defaults.levels,
      description: 'the arrival rates (iterations/s), one level each',
    },
    duration: {
      type: 'string',
      value: 'S',
      defaultText: defaults.duration,
      description: 'seconds per level',
    },
    'warm-up': {
      type: 'string',
      value: 'S',
      defaultText: defaults.warmUp,
      description: "seconds at the first level's rate before it, not measured",
    },
    seed: {
      type: 'string',
      value: 'FILE',
      defaultText: 'seed its own data',
      description: 'a seed file of `npm run seed` to run on',
    },
    out: {
      type: 'string',
      value: 'DIR',
      defaultText: 'load/out/<profile>-<time>',
      description: 'where the report goes',
    },
    'saga-deadline-seconds': {
      type: 'string',
      value: 'S',
      defaultText: String(DEFAULT_INVARIANT_OPTIONS.sagaDeadlineSeconds),
      description: 'the finality check: an order is final by its deadline…',
    },
    'final-grace-seconds': {
      type: 'string',
      value: 'S',
      defaultText: String(DEFAULT_INVARIANT_OPTIONS.finalGraceSeconds),
      description: "…plus this grace (the sweeper's grace and interval)",
    },
    wait: {
      type: 'string',
      value: 'S',
      defaultText: 'no Prefer header',
      description: 'send orders with Prefer: wait=S (1–10)',
    },
  }) as const;

const profileCommand = (profile: Profile) =>
  ({
    usage: `npm run load -- ${profile.name} [options]`,
    description:
      `The ${profile.name} profile: ${profile.description}. It seeds (or reads --seed), runs each level with\n` +
      'Artillery, checks the invariants through the API and writes the report (exit 1 on a failure).\n' +
      'See docs/load-testing.md.',
    options: runOptions({
      levels: profile.levels.join(','),
      duration: String(profile.durationSeconds),
      warmUp: String(profile.warmUpSeconds),
    }),
    environment: ENVIRONMENT,
    examples: [
      `npm run load -- ${profile.name}`,
      `npm run load -- ${profile.name} --levels 5 --duration 20 --seed load/out/seed.json`,
      `npm run load -- ${profile.name} --target "$COMMERCE_API_URL" --no-counters`,
    ],
  }) as const satisfies CommandSpec;

/** `npm run load -- --help`: the profiles, and the options they share. */
export const LOAD_COMMAND = {
  usage: `npm run load -- <${Object.keys(PROFILES).join('|')}> [options]   (npm run load -- <profile> --help: its defaults)`,
  description:
    'Runs a load profile with Artillery against a target, checks the invariants and writes a report.\n' +
    'The same workload as plain Artillery scripts: load/mix.yml, soak.yml, flash-sale.yml (see\n' +
    'docs/load-testing.md, "Artillery scripts").',
  positionals: {
    ...Object.fromEntries(Object.values(PROFILES).map((p) => [p.name, p.description])),
    seed: 'write a seed file and the Artillery payload (npm run seed)',
  },
  options: runOptions({ levels: "the profile's", duration: "the profile's", warmUp: "the profile's" }),
  environment: ENVIRONMENT,
  examples: [
    'npm run load -- smoke',
    'npm run load -- mix --levels 10,25 --duration 30',
    'npm run load -- soak --help',
  ],
} as const satisfies CommandSpec;

/** Each subcommand's own table. */
export const LOAD_COMMANDS: Readonly<Record<string, CommandSpec>> = {
  seed: SEED_COMMAND,
  ...Object.fromEntries(Object.values(PROFILES).map((p) => [p.name, profileCommand(p)])),
};

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

/** The target of the command line: the API, and a local cloud's AWS endpoint unless --no-counters. */
function targetOf(values: {
  target: string;
  'aws-endpoint'?: string | undefined;
  'no-counters': boolean;
}): Target {
  const api = values.target.replace(/\/$/, '');
  const awsEndpoint = values['no-counters']
    ? undefined
    : (values['aws-endpoint'] ?? process.env.LOCAL_AWS_ENDPOINT ?? besideLocalApi(api));
  return { api, ...(awsEndpoint ? { awsEndpoint: awsEndpoint.replace(/\/$/, '') } : {}) };
}

const nonNegative = (name: string, value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number of 0 or more, not ${value}`);
  return n;
};

async function main(args: readonly string[]) {
  const [command] = args;
  if (command === undefined || command.startsWith('-')) {
    // --help, or an option the profiles do not know, is answered here; else a profile is missing.
    parseCommandLine(LOAD_COMMAND, args);
    usageError(LOAD_COMMAND, `name a profile (${Object.keys(PROFILES).join(', ')}) or seed`);
  }
  if (!Object.hasOwn(LOAD_COMMANDS, command)) usageError(LOAD_COMMAND, `no profile ${command}`);
  if (command === 'seed') {
    const { values } = parseCommandLine(SEED_COMMAND, args.slice(1));
    const target = targetOf(values);
    const out = values.out;
    const data = await seed(target, {
      ...DEFAULT_SEED,
      customers: positive('customers', values.customers),
      products: positive('products', values.products),
      stock: positive('stock', values.stock),
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
  const { values } = parseCommandLine(profileCommand(base), args.slice(1));
  const target = targetOf(values);
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

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: Error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
