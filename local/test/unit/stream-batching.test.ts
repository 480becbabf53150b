import type { DynamoJsonClient } from '../../dynamo-client';
import type { LambdaRuntime } from '../../lambda/runtime';
import type { LocalQueues } from '../../queues';
import type { MappingSpec } from '../../stream-mappings';
import { StreamPoller } from '../../streams';

/**
 * A mapping's batching window (MaximumBatchingWindowInSeconds) gathers the
 * records yet to come; records already waiting in the stream (a consumer
 * behind) are read batch after batch without waiting a window each, and a
 * batch read part full gathers on until it is full or its window ends, as on
 * Lambda. A fake stream stands in for the DynamoDB engine's.
 */
const spec = (batchingWindowMs: number): MappingSpec => ({
  logicalId: 'Mapping',
  functionId: 'Consumer',
  tableLogicalId: 'Table',
  streamArn: 'arn:stream',
  batchSize: 100,
  batchingWindowMs,
  maximumRetryAttempts: 0,
  bisectOnError: false,
  reportBatchItemFailures: true,
  enabled: true,
  filters: [],
});

/** A stream of `total()` records so far (the total may grow as writes go on). */
function fakeStream(total: () => number) {
  let next = 0;
  const call = async (target: string, input: { Limit?: number }) => {
    if (target.endsWith('DescribeStream')) return { StreamDescription: { Shards: [{ ShardId: 'shard-0' }] } };
    if (target.endsWith('GetShardIterator')) return { ShardIterator: 'it' };
    const page = Array.from({ length: Math.min(input.Limit ?? 100, total() - next) }, () => {
      next++;
      return { eventID: `e${next}`, eventName: 'INSERT', dynamodb: { SequenceNumber: String(next) } };
    });
    return { Records: page, NextShardIterator: 'it' };
  };
  return { call } as unknown as DynamoJsonClient;
}

/** Drains `total` records; `writesGoOn`: each batch's delivery sees more writes to the table (a busy table). */
async function drain(batchingWindowMs: number, total: number, writesGoOn = false) {
  const batches: number[] = [];
  let poller: StreamPoller | undefined;
  const runtime = {
    invoke: async (_: string, event: { Records: unknown[] }) => {
      batches.push(event.Records.length);
      if (writesGoOn) poller?.poke();
      return { batchItemFailures: [] };
    },
  } as unknown as LambdaRuntime;
  poller = new StreamPoller(
    spec(batchingWindowMs),
    fakeStream(() => total),
    runtime,
    {} as LocalQueues,
    () => {},
  );
  const started = Date.now();
  poller.poke(); // the writes that put the records there, seen as the poller starts
  poller.start();
  while (batches.reduce((a, b) => a + b, 0) < total) await new Promise((resolve) => setTimeout(resolve, 10));
  const ms = Date.now() - started;
  await poller.stop();
  return { batches, gathers: poller.stats.gathers, ms };
}

describe('a stream mapping with a batching window', () => {
  test('a backlog of several batches is read batch after batch, after one window, while writes go on', async () => {
    const { batches, gathers } = await drain(300, 350, true);
    expect(batches).toEqual([100, 100, 100, 50]);
    // One window before the first batch (and perhaps one begun after the last): never one per batch.
    expect(gathers).toBeLessThanOrEqual(2);
  });

  test('records that come after a write wait the window, gathered into one batch', async () => {
    const { batches, gathers, ms } = await drain(300, 40);
    expect(batches).toEqual([40]);
    expect(gathers).toBe(1);
    expect(ms).toBeGreaterThanOrEqual(290);
  });

  test('a batch read part full gathers the records still to come, until it is full', async () => {
    // A busy table: 150 records wait, and 10 more are written every 10 ms until there are 400.
    let written = 150;
    const batches: number[] = [];
    const runtime = {
      invoke: async (_: string, event: { Records: unknown[] }) => {
        batches.push(event.Records.length);
        await new Promise((resolve) => setTimeout(resolve, 30)); // the function's work
        return { batchItemFailures: [] };
      },
    } as unknown as LambdaRuntime;
    const poller = new StreamPoller(
      spec(1000),
      fakeStream(() => written),
      runtime,
      {} as LocalQueues,
      () => {},
    );
    const writes = setInterval(() => {
      written = Math.min(400, written + 10);
      poller.poke();
    }, 10);
    // Started on the waiting records (no write seen yet): the first batch is read at once.
    poller.start();
    while (batches.reduce((a, b) => a + b, 0) < 400) await new Promise((resolve) => setTimeout(resolve, 10));
    clearInterval(writes);
    await poller.stop();
    // Without the gathering, a batch read after a full one took only what had come in meanwhile (seen: 70, 30).
    expect(batches).toEqual([100, 100, 100, 100]);
  });
});
