/**
 * Redrives a dead-letter queue of a deployed stage, once the cause of the
 * failures is fixed: each message is delivered again the way it failed, and
 * deleted only when that delivery succeeds. What a message cannot be
 * redelivered from stays in the queue, and is reported.
 *
 * The platform's dead letters are of three kinds, told apart by their shape:
 * - a stream batch a projector or the outbox relay gave up on (its
 *   on-failure record names the function, the stream, the shard and the
 *   sequence range): the records are read again from the table's stream (it
 *   keeps them 24 hours) and the function is invoked with them;
 * - a scheduled sweep whose function failed every attempt (a Lambda
 *   on-failure destination record, carrying the payload): invoked again;
 * - an event EventBridge could not deliver to a rule's target (the event,
 *   with the target in the message's attributes): the saga is started with
 *   it, or the function invoked with it.
 * Every consumer is idempotent, so a message redriven twice does no harm.
 *
 *   AWS_REGION=eu-west-1 npx tsx scripts/redrive-dlq.ts --queue-url <url> [--dry-run] [--max-messages 100]
 *
 * The queue URLs are the stack's outputs `<Name>QueueUrl`.
 */
import { parseArgs } from 'node:util';
import {
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

export interface DeadLetter {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** String message attributes (EventBridge puts RULE_ARN, TARGET_ARN, ERROR_CODE, ERROR_MESSAGE there). */
  readonly attributes: Readonly<Record<string, string>>;
}

/** A stream record in the shape Lambda delivers it (what the projectors and the relay read). */
export interface StreamRecord {
  readonly eventID?: string;
  readonly eventName?: string;
  readonly eventSource: 'aws:dynamodb';
  readonly eventSourceARN: string;
  readonly dynamodb: { readonly SequenceNumber?: string } & Record<string, unknown>;
}

/** What the redrive needs of AWS; the AWS SDK in `awsPorts`, fakes in the tests. */
export interface RedrivePorts {
  receive(queueUrl: string, max: number): Promise<DeadLetter[]>;
  remove(queueUrl: string, receiptHandle: string): Promise<void>;
  /** Invokes synchronously and returns the function's error type, if it failed, and its result. */
  invoke(functionArn: string, payload: unknown): Promise<{ functionError?: string; result: unknown }>;
  startExecution(stateMachineArn: string, input: string): Promise<void>;
  /** The records of one shard from `start` to `end` (sequence numbers, inclusive) still in the stream. */
  streamRecords(streamArn: string, shardId: string, start: string, end: string): Promise<StreamRecord[]>;
}

export type Redelivery =
  | {
      readonly kind: 'stream-batch';
      readonly functionArn: string;
      readonly streamArn: string;
      readonly shardId: string;
      readonly startSequenceNumber: string;
      readonly endSequenceNumber: string;
    }
  | { readonly kind: 'async-invocation'; readonly functionArn: string; readonly payload: unknown }
  | { readonly kind: 'rule-target'; readonly targetArn: string; readonly event: string }
  | { readonly kind: 'unknown'; readonly reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** What a dead letter is, from its shape, and so how it is delivered again. */
export function classify(message: DeadLetter): Redelivery {
  const targetArn = message.attributes.TARGET_ARN;
  if (targetArn) return { kind: 'rule-target', targetArn, event: message.body };
  let body: unknown;
  try {
    body = JSON.parse(message.body);
  } catch {
    return { kind: 'unknown', reason: 'the body is not JSON and names no rule target' };
  }
  const functionArn =
    isObject(body) && isObject(body.requestContext) ? body.requestContext.functionArn : undefined;
  if (typeof functionArn !== 'string') return { kind: 'unknown', reason: 'no function or rule target named' };
  const batch = isObject(body) ? body.DDBStreamBatchInfo : undefined;
  if (isObject(batch)) {
    const { streamArn, shardId, startSequenceNumber, endSequenceNumber } = batch;
    if ([streamArn, shardId, startSequenceNumber, endSequenceNumber].some((v) => typeof v !== 'string')) {
      return { kind: 'unknown', reason: 'an incomplete DDBStreamBatchInfo' };
    }
    return {
      kind: 'stream-batch',
      functionArn,
      streamArn: streamArn as string,
      shardId: shardId as string,
      startSequenceNumber: startSequenceNumber as string,
      endSequenceNumber: endSequenceNumber as string,
    };
  }
  if (isObject(body) && 'requestPayload' in body) {
    return { kind: 'async-invocation', functionArn, payload: body.requestPayload };
  }
  return { kind: 'unknown', reason: 'a function record with neither a stream batch nor a request payload' };
}

/** Delivers one dead letter again; resolves when the consumer took it, throws why it did not. */
async function redeliver(redelivery: Exclude<Redelivery, { kind: 'unknown' }>, ports: RedrivePorts) {
  const invoke = async (functionArn: string, payload: unknown) => {
    const { functionError, result } = await ports.invoke(functionArn, payload);
    if (functionError)
      throw new Error(`${functionArn} failed again (${functionError}): ${JSON.stringify(result)}`);
    return result;
  };
  switch (redelivery.kind) {
    case 'stream-batch': {
      const { streamArn, shardId, startSequenceNumber, endSequenceNumber } = redelivery;
      const records = await ports.streamRecords(streamArn, shardId, startSequenceNumber, endSequenceNumber);
      if (records.length === 0) {
        throw new Error(
          'the records are no longer in the stream (it keeps them 24 hours): rebuild from the table',
        );
      }
      const result = await invoke(redelivery.functionArn, { Records: records });
      const failures =
        isObject(result) && Array.isArray(result.batchItemFailures) ? result.batchItemFailures : [];
      if (failures.length > 0)
        throw new Error(`${failures.length} records failed again: ${JSON.stringify(failures)}`);
      return;
    }
    case 'async-invocation':
      await invoke(redelivery.functionArn, redelivery.payload);
      return;
    case 'rule-target': {
      const service = redelivery.targetArn.split(':')[2];
      if (service === 'states') return ports.startExecution(redelivery.targetArn, redelivery.event);
      if (service === 'lambda') {
        await invoke(redelivery.targetArn, JSON.parse(redelivery.event));
        return;
      }
      throw new Error(`rule targets of ${service} are not redriven by this script`);
    }
  }
}

export interface RedriveOptions {
  /** Stop after this many messages (the queue may keep receiving while it runs). */
  readonly maxMessages: number;
  /** Classify and report only: nothing is delivered or deleted. */
  readonly dryRun: boolean;
  readonly log: (line: string) => void;
}

export interface RedriveSummary {
  readonly redriven: number;
  readonly failed: number;
  readonly skipped: number;
}

/** Drains up to `maxMessages` from the queue, redelivering each and deleting it when that worked. */
export async function redrive(
  queueUrl: string,
  ports: RedrivePorts,
  options: RedriveOptions,
): Promise<RedriveSummary> {
  const summary = { redriven: 0, failed: 0, skipped: 0 };
  const seen = new Set<string>();
  let handled = 0;
  while (handled < options.maxMessages) {
    const batch = (await ports.receive(queueUrl, Math.min(10, options.maxMessages - handled))).filter(
      // A message kept (failed, skipped, dry run) comes back after its visibility timeout: handle it once per run.
      (m) => !seen.has(m.messageId),
    );
    if (batch.length === 0) break;
    for (const message of batch) {
      seen.add(message.messageId);
      handled++;
      const redelivery = classify(message);
      if (redelivery.kind === 'unknown') {
        summary.skipped++;
        options.log(`skipped ${message.messageId}: ${redelivery.reason}`);
        continue;
      }
      const what =
        redelivery.kind === 'rule-target'
          ? `event to ${redelivery.targetArn}`
          : `${redelivery.kind} of ${redelivery.functionArn}`;
      if (options.dryRun) {
        summary.skipped++;
        options.log(`would redrive ${message.messageId}: ${what}`);
        continue;
      }
      try {
        await redeliver(redelivery, ports);
        await ports.remove(queueUrl, message.receiptHandle);
        summary.redriven++;
        options.log(`redriven ${message.messageId}: ${what}`);
      } catch (error) {
        summary.failed++;
        options.log(`kept ${message.messageId} (${what}): ${(error as Error).message}`);
      }
    }
  }
  return summary;
}

/** The AWS SDK behind the ports, with the region and credentials of the environment. */
export function awsPorts(): RedrivePorts {
  const sqs = new SQSClient({});
  const lambda = new LambdaClient({});
  const sfn = new SFNClient({});
  const streams = new DynamoDBStreamsClient({});
  return {
    async receive(queueUrl, max) {
      const result = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: 2,
          // Long enough to redeliver a batch; a message not deleted by then is received again next run.
          VisibilityTimeout: 120,
          MessageAttributeNames: ['All'],
        }),
      );
      return (result.Messages ?? []).map((m) => ({
        messageId: m.MessageId!,
        receiptHandle: m.ReceiptHandle!,
        body: m.Body ?? '',
        attributes: Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).flatMap(([k, v]) =>
            v.StringValue ? [[k, v.StringValue]] : [],
          ),
        ),
      }));
    },
    async remove(queueUrl, receiptHandle) {
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle }));
    },
    async invoke(functionArn, payload) {
      const result = await lambda.send(
        new InvokeCommand({
          FunctionName: functionArn,
          InvocationType: 'RequestResponse',
          Payload: new TextEncoder().encode(JSON.stringify(payload)),
        }),
      );
      const text = result.Payload ? new TextDecoder().decode(result.Payload) : '';
      return {
        ...(result.FunctionError ? { functionError: result.FunctionError } : {}),
        result: text ? JSON.parse(text) : null,
      };
    },
    async startExecution(stateMachineArn, input) {
      await sfn.send(new StartExecutionCommand({ stateMachineArn, input }));
    },
    async streamRecords(streamArn, shardId, start, end) {
      const records: StreamRecord[] = [];
      let iterator: string | undefined;
      try {
        const first = await streams.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: shardId,
            ShardIteratorType: 'AT_SEQUENCE_NUMBER',
            SequenceNumber: start,
          }),
        );
        iterator = first.ShardIterator;
      } catch (error) {
        // Trimmed past the stream's 24 hours, or the shard is gone.
        if (
          (error as Error).name === 'TrimmedDataAccessException' ||
          (error as Error).name === 'ResourceNotFoundException'
        ) {
          return [];
        }
        throw error;
      }
      const last = BigInt(end);
      // An open shard answers empty pages at its end: a few in a row mean there is nothing more to read.
      for (let emptyPages = 0; iterator && emptyPages < 3; ) {
        const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
        iterator = page.NextShardIterator;
        if (!page.Records?.length) {
          emptyPages++;
          continue;
        }
        emptyPages = 0;
        for (const r of page.Records) {
          if (BigInt(r.dynamodb?.SequenceNumber ?? '0') > last) return records;
          records.push({
            eventID: r.eventID,
            eventName: r.eventName,
            eventSource: 'aws:dynamodb',
            eventSourceARN: streamArn,
            dynamodb: {
              ...r.dynamodb,
              // Lambda delivers the creation time in epoch seconds, the Streams API as a Date.
              ApproximateCreationDateTime: r.dynamodb?.ApproximateCreationDateTime
                ? Math.floor(r.dynamodb.ApproximateCreationDateTime.getTime() / 1000)
                : undefined,
            },
          });
        }
      }
      return records;
    },
  };
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      'queue-url': { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      'max-messages': { type: 'string', default: '100' },
    },
  });
  const queueUrl = values['queue-url'];
  const maxMessages = Number(values['max-messages']);
  if (!queueUrl || !Number.isInteger(maxMessages) || maxMessages < 1) {
    console.error('usage: tsx scripts/redrive-dlq.ts --queue-url <url> [--dry-run] [--max-messages N]');
    process.exit(2);
  }
  redrive(queueUrl, awsPorts(), {
    maxMessages,
    dryRun: values['dry-run'] ?? false,
    log: (l) => console.log(l),
  })
    .then((s) => {
      console.log(`redriven ${s.redriven}, failed ${s.failed}, skipped ${s.skipped}`);
      process.exit(s.failed > 0 ? 1 : 0);
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
}
