import type { CommandSpec } from './command-line';

/** `npm start`'s command line (local/main.ts): its options, their defaults, its help. */
export const START_COMMAND = {
  usage: 'npm start -- [options]',
  description:
    'Synthesizes the CDK app and runs it on 127.0.0.1 until Ctrl-C: the HTTP API, and beside it the AWS\n' +
    'endpoint (DynamoDB, EventBridge, Step Functions, the local issuer POST /_local/token, the counters\n' +
    'GET /_local/stats and the saga console). See README, "Run it locally", and docs/local-cloud.md.',
  options: {
    port: {
      type: 'string',
      value: 'N',
      default: process.env.PORT ?? '3000',
      defaultText: 'PORT, else 3000',
      description: "the HTTP API's port (0: a free one)",
    },
    // Default: the API's port plus one (3001 beside 3000), so the load tools find the counters.
    'aws-port': {
      type: 'string',
      value: 'N',
      defaultText: "the API's port plus one (0 with --port 0)",
      description: "the AWS endpoint's port: DynamoDB, EventBridge, the issuer, the counters",
    },
    stage: {
      type: 'string',
      value: 'NAME',
      default: 'dev',
      description: 'the stage whose settings it synthesizes',
    },
    'schedule-interval-ms': {
      type: 'string',
      value: 'MS',
      defaultText: "each rule's own rate",
      description: 'fire every scheduled rule (the expiry sweepers) at this interval',
    },
    'reservation-ttl-seconds': {
      type: 'string',
      value: 'S',
      defaultText: "the stage's",
      description: 'how long a reservation holds its stock',
    },
    'saga-deadline-seconds': {
      type: 'string',
      value: 'S',
      defaultText: "the stage's",
      description: 'how long an order may stay PENDING before the sweeper cancels it',
    },
    'sweeper-grace-seconds': {
      type: 'string',
      value: 'S',
      defaultText: "the stage's",
      description: "the sweeper's grace past a deadline",
    },
    faults: {
      type: 'string',
      value: 'RULES',
      defaultText: 'none',
      description:
        'saga step faults, e.g. ReserveStock:error=TransientError:rate=0.2,CapturePayment:delayMs=500',
    },
    'assembly-dir': {
      type: 'string',
      value: 'DIR',
      defaultText: 'cdk.out',
      description: 'where the app is synthesized',
    },
    // Keep the data on disk here and resume from it (see docs/local-cloud.md, "Keeping the data"); default: in memory.
    'data-dir': {
      type: 'string',
      value: 'DIR',
      defaultText: 'in memory',
      description: 'keep the data in DIR and resume from it on the next start',
    },
    // Unminified bundles with source maps, lifted timeouts, and the inspector open (README, "Debug a function").
    debug: {
      type: 'boolean',
      default: false,
      description:
        'a debug build: unminified bundles with source maps (cdk.out.debug), 15-minute timeouts, the inspector open',
    },
    'inspect-port': {
      type: 'string',
      value: 'N',
      default: '9229',
      description: "the inspector's port on 127.0.0.1, with --debug",
    },
    'echo-function-logs': {
      type: 'boolean',
      default: false,
      description: "also print the functions' logs here",
    },
    'max-sandboxes': {
      type: 'string',
      value: 'N',
      defaultText: '4',
      description: 'sandboxes per function at most (reserved concurrency wins)',
    },
    'max-total-sandboxes': {
      type: 'string',
      value: 'N',
      defaultText: '12',
      description: 'sandboxes of all functions at most',
    },
    'max-lent-sandboxes': {
      type: 'string',
      value: 'N',
      defaultText: '4',
      description: 'sandboxes beyond the caps, in the room of paused ones',
    },
    'max-queue-wait-ms': {
      type: 'string',
      value: 'MS',
      defaultText: '5000',
      description: 'refuse a request (429) that would wait longer than this for a sandbox',
    },
    'max-saga-backlog-ms': {
      type: 'string',
      value: 'MS',
      defaultText: '10000',
      description: 'refuse a new order (429) while the running sagas would take longer than this',
    },
    // Re-synthesize on a change to the sources and run the functions' new bundles (see the README).
    watch: {
      type: 'boolean',
      default: false,
      description: "re-synthesize on a change to the sources and run the functions' new code",
    },
  },
  environment: { PORT: 'the default of --port' },
  examples: [
    'npm start',
    'npm start -- --port 3100                     # the AWS endpoint on 3101',
    'npm start -- --data-dir .data --watch',
    'npm start -- --faults CapturePayment:error=TransientError:rate=0.1',
  ],
} as const satisfies CommandSpec;
