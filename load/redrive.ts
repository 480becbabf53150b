/**
 * `npm run redrive -- [--target URL] [--dry-run]`: delivers every dead letter
 * of the local cloud again, once the fault that put it there is lifted: a
 * stream batch given up to its mapping's on-failure destination is read
 * again from the table's stream and handed to its function; an event a rule's
 * target could not take is delivered to that target again. Each message
 * delivered is deleted; what fails again stays, and is reported (exit 1).
 * Every consumer is idempotent, so a message redriven twice does no harm.
 * For a deployed stage's queues, `scripts/redrive-dlq.ts` does the same
 * through AWS's APIs.
 */
import { type CommandSpec, parseCommandLine } from '@commerce/local-cloud';
import { localAwsEndpoint } from './tokens';

export const REDRIVE_COMMAND = {
  usage: 'npm run redrive -- [options]',
  description:
    'Delivers every dead letter of the local cloud (npm start) again, once its fault is lifted: a stream\n' +
    "batch to its mapping's function, read again from the stream; a rule's event to its target. Deletes\n" +
    'each message delivered; exits 1 if one fails again. See docs/reliability.md, "Dead letters".',
  options: {
    target: {
      type: 'string',
      value: 'URL',
      default: 'http://127.0.0.1:3000',
      description: "the local cloud's API (its AWS endpoint is the next port, or LOCAL_AWS_ENDPOINT)",
    },
    'dry-run': {
      type: 'boolean',
      default: false,
      description: 'list the dead letters, deliver nothing',
    },
  },
  examples: [
    'npm run redrive',
    'npm run redrive -- --dry-run',
    'npm run redrive -- --target http://127.0.0.1:3100',
  ],
} as const satisfies CommandSpec;

// Parsed when run (imported, e.g. by the help's test, it has its defaults and runs nothing).
const { values } = parseCommandLine(REDRIVE_COMMAND, require.main === module ? process.argv.slice(2) : []);

export interface RedriveResult {
  readonly redriven: readonly { queue: string; messageId: string }[];
  readonly left: readonly { queue: string; messageId: string; reason: string }[];
}

/** Redrives every dead letter of the local cloud at `awsEndpoint` (`POST /_local/dead-letters/redrive`). */
export async function redrive(awsEndpoint: string): Promise<RedriveResult> {
  const response = await fetch(`${awsEndpoint}/_local/dead-letters/redrive`, {
    method: 'POST',
    signal: AbortSignal.timeout(120_000),
  });
  if (!response.ok) throw new Error(`redrive: ${response.status} ${await response.text()}`);
  return (await response.json()) as RedriveResult;
}

async function main() {
  const endpoint = localAwsEndpoint(values.target);
  if (values['dry-run']) {
    const queues = (await (await fetch(`${endpoint}/_local/dead-letters`)).json()) as Record<
      string,
      { messageId: string; body: string }[]
    >;
    for (const [queue, messages] of Object.entries(queues))
      for (const m of messages) console.log(`${queue} ${m.messageId} ${m.body.slice(0, 160)}`);
    return;
  }
  const result = await redrive(endpoint);
  for (const r of result.redriven) console.log(`redriven: ${r.queue} ${r.messageId}`);
  for (const l of result.left) console.log(`left: ${l.queue} ${l.messageId}: ${l.reason}`);
  console.log(`${result.redriven.length} redriven, ${result.left.length} left`);
  if (result.left.length > 0) process.exitCode = 1;
}

if (require.main === module)
  main().catch((error: Error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
