import {
  classify,
  type DeadLetter,
  type RedrivePorts,
  redrive,
  type StreamRecord,
} from '../../scripts/redrive-dlq';

const PROJECTOR = 'arn:aws:lambda:eu-west-1:111111111111:function:Commerce-prod-AccountsProjector';
const SWEEPER = 'arn:aws:lambda:eu-west-1:111111111111:function:Commerce-prod-SagaSweeper';
const SAGA = 'arn:aws:states:eu-west-1:111111111111:stateMachine:SagaStateMachine';
const STREAM = 'arn:aws:dynamodb:eu-west-1:111111111111:table/Accounts/stream/2025-01-01T00:00:00.000';

/** The on-failure record Lambda sends for a stream batch it gave up on. */
const streamFailure = (id: string, start: string, end: string): DeadLetter => ({
  messageId: id,
  receiptHandle: `rh-${id}`,
  attributes: {},
  body: JSON.stringify({
    requestContext: { requestId: 'r', functionArn: PROJECTOR, condition: 'RetryAttemptsExhausted' },
    version: '1.0',
    DDBStreamBatchInfo: {
      shardId: 'shard-1',
      startSequenceNumber: start,
      endSequenceNumber: end,
      streamArn: STREAM,
    },
  }),
});

/** The on-failure destination record of an asynchronous invocation. */
const asyncFailure = (id: string): DeadLetter => ({
  messageId: id,
  receiptHandle: `rh-${id}`,
  attributes: {},
  body: JSON.stringify({
    requestContext: { functionArn: `${SWEEPER}:$LATEST`, condition: 'RetriesExhausted' },
    requestPayload: { 'detail-type': 'Scheduled Event' },
  }),
});

/** An event EventBridge could not deliver to its target. */
const ruleFailure = (id: string, event: object): DeadLetter => ({
  messageId: id,
  receiptHandle: `rh-${id}`,
  attributes: {
    RULE_ARN: 'arn:aws:events:...:rule/StartOnOrderPlaced',
    TARGET_ARN: SAGA,
    ERROR_CODE: 'Throttling',
  },
  body: JSON.stringify(event),
});

const record = (sequence: string): StreamRecord => ({
  eventName: 'INSERT',
  eventSource: 'aws:dynamodb',
  eventSourceARN: STREAM,
  dynamodb: { SequenceNumber: sequence },
});

/** An SQS queue that redelivers what is not deleted (as a visibility timeout would), and consumers that record calls. */
class FakeAws implements RedrivePorts {
  queue: DeadLetter[];
  invocations: { functionArn: string; payload: unknown }[] = [];
  executions: { stateMachineArn: string; input: string }[] = [];
  failFunction = new Set<string>();
  batchFailures: unknown[] = [];
  streamContents: StreamRecord[] = [record('100'), record('200'), record('300'), record('400')];

  constructor(messages: DeadLetter[]) {
    this.queue = [...messages];
  }
  async receive(_url: string, max: number) {
    return this.queue.slice(0, max);
  }
  async remove(_url: string, receiptHandle: string) {
    this.queue = this.queue.filter((m) => m.receiptHandle !== receiptHandle);
  }
  async invoke(functionArn: string, payload: unknown) {
    this.invocations.push({ functionArn, payload });
    if (this.failFunction.has(functionArn))
      return { functionError: 'Unhandled', result: { errorMessage: 'boom' } };
    return { result: { batchItemFailures: this.batchFailures } };
  }
  async startExecution(stateMachineArn: string, input: string) {
    this.executions.push({ stateMachineArn, input });
  }
  async streamRecords(_stream: string, _shard: string, start: string, end: string) {
    return this.streamContents.filter((r) => {
      const n = BigInt(r.dynamodb.SequenceNumber!);
      return n >= BigInt(start) && n <= BigInt(end);
    });
  }
}

const options = { maxMessages: 100, dryRun: false, log: () => {} };

describe('classifying dead letters', () => {
  test('by their shape: stream batch, asynchronous invocation, rule target, or unknown', () => {
    expect(classify(streamFailure('m1', '100', '300'))).toEqual({
      kind: 'stream-batch',
      functionArn: PROJECTOR,
      streamArn: STREAM,
      shardId: 'shard-1',
      startSequenceNumber: '100',
      endSequenceNumber: '300',
    });
    expect(classify(asyncFailure('m2'))).toEqual({
      kind: 'async-invocation',
      functionArn: `${SWEEPER}:$LATEST`,
      payload: { 'detail-type': 'Scheduled Event' },
    });
    expect(classify(ruleFailure('m3', { id: 'e' }))).toEqual({
      kind: 'rule-target',
      targetArn: SAGA,
      event: '{"id":"e"}',
    });
    expect(classify({ messageId: 'm4', receiptHandle: 'r', attributes: {}, body: 'not json' }).kind).toBe(
      'unknown',
    );
    expect(classify({ messageId: 'm5', receiptHandle: 'r', attributes: {}, body: '{"a":1}' }).kind).toBe(
      'unknown',
    );
  });
});

describe('redriving a dead-letter queue', () => {
  test('a stream batch is read again from the stream and given to its function; then the message is deleted', async () => {
    const aws = new FakeAws([streamFailure('m1', '100', '300')]);
    expect(await redrive('q', aws, options)).toEqual({ redriven: 1, failed: 0, skipped: 0 });
    expect(aws.invocations).toEqual([
      { functionArn: PROJECTOR, payload: { Records: [record('100'), record('200'), record('300')] } },
    ]);
    expect(aws.queue).toEqual([]);
  });

  test('a batch whose records fail again, or are gone from the stream, stays in the queue', async () => {
    const aws = new FakeAws([streamFailure('m1', '100', '300'), streamFailure('m2', '900', '950')]);
    aws.batchFailures = [{ itemIdentifier: '200' }];
    const lines: string[] = [];
    expect(await redrive('q', aws, { ...options, log: (l) => lines.push(l) })).toEqual({
      redriven: 0,
      failed: 2,
      skipped: 0,
    });
    expect(aws.queue.map((m) => m.messageId)).toEqual(['m1', 'm2']);
    expect(aws.invocations).toHaveLength(1);
    expect(lines.join('\n')).toMatch(/1 records failed again[\s\S]*no longer in the stream/);
  });

  test('a failed scheduled invocation is invoked again with its payload; a function that fails again keeps it', async () => {
    const aws = new FakeAws([asyncFailure('m1')]);
    aws.failFunction.add(`${SWEEPER}:$LATEST`);
    expect(await redrive('q', aws, options)).toEqual({ redriven: 0, failed: 1, skipped: 0 });
    expect(aws.queue).toHaveLength(1);
    aws.failFunction.clear();
    expect(await redrive('q', aws, options)).toEqual({ redriven: 1, failed: 0, skipped: 0 });
    expect(aws.invocations.at(-1)).toEqual({
      functionArn: `${SWEEPER}:$LATEST`,
      payload: { 'detail-type': 'Scheduled Event' },
    });
    expect(aws.queue).toEqual([]);
  });

  test('an undelivered OrderPlaced starts the saga with the event as its input', async () => {
    const event = { 'detail-type': 'OrderPlaced', detail: { data: { orderId: 'o-1' } } };
    const aws = new FakeAws([ruleFailure('m1', event)]);
    expect(await redrive('q', aws, options)).toEqual({ redriven: 1, failed: 0, skipped: 0 });
    expect(aws.executions).toEqual([{ stateMachineArn: SAGA, input: JSON.stringify(event) }]);
    expect(aws.queue).toEqual([]);
  });

  test('a dry run delivers and deletes nothing; unknown messages are skipped and kept', async () => {
    const unknown = { messageId: 'm9', receiptHandle: 'r9', attributes: {}, body: 'x' };
    const aws = new FakeAws([streamFailure('m1', '100', '200'), ruleFailure('m2', {}), unknown]);
    expect(await redrive('q', aws, { ...options, dryRun: true })).toEqual({
      redriven: 0,
      failed: 0,
      skipped: 3,
    });
    expect(aws.invocations).toEqual([]);
    expect(aws.executions).toEqual([]);
    expect(aws.queue).toHaveLength(3);
  });

  test('at most maxMessages are handled in one run', async () => {
    const aws = new FakeAws(Array.from({ length: 25 }, (_, i) => ruleFailure(`m${i}`, { n: i })));
    expect(await redrive('q', aws, { ...options, maxMessages: 12 })).toEqual({
      redriven: 12,
      failed: 0,
      skipped: 0,
    });
    expect(aws.queue).toHaveLength(13);
  });
});
