import { parseArgs } from 'node:util';
import { DynamoJsonClient } from '../dynamo-client';
import { startDynamoDbLocal } from '../dynamodb';

/**
 * What a projector's batch of writes does to the request path's calls on the
 * same DynamoDB Local, by how many of the batch's writes are in flight at
 * once: request-path calls arrive at a steady rate (a GetItem and then a
 * conditional PutItem, a pair every `--every-ms`, each pair started on time
 * whether the ones before it have answered or not) while, once a
 * second, a batch of `--batch` UpdateItems of 1.7 KB view items (a 64-shard
 * product's size) is written `--concurrency` at a time. Prints the
 * request-path calls' latency and the batches' duration per variant:
 *
 *   npx tsx local/bench/projection-flood.ts --seconds 20 --concurrency 60 --concurrency 4
 *
 * Variants alternate over `--repeat` rounds, so that the host's state
 * spreads over all of them.
 */
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    batch: { type: 'string', default: '60' },
    'every-ms': { type: 'string', default: '10' },
    repeat: { type: 'string', default: '2' },
    concurrency: { type: 'string', multiple: true, default: ['60', '4'] },
  },
});

const ENTRY = 'x'.repeat(26);
const VIEW_SHARDS = 64;

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function main() {
  const ddb = await startDynamoDbLocal({});
  const client = new DynamoJsonClient(ddb.port);
  await client.call('DynamoDB_20120810.CreateTable', {
    TableName: 'bench',
    AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  });
  // One view write: every shard's entry of one product, as the projector's UpdateItem sets them.
  const viewUpdate = (product: number, version: number) => {
    const names: Record<string, string> = {};
    const vals: Record<string, { S: string }> = {};
    const sets: string[] = [];
    for (let s = 0; s < VIEW_SHARDS; s++) {
      names[`#e${s}`] = `s${s}`;
      vals[`:e${s}`] = { S: `${String(version).padStart(9, '0')}:${ENTRY}` };
      sets.push(`#e${s} = :e${s}`);
    }
    return client.call('DynamoDB_20120810.UpdateItem', {
      TableName: 'bench',
      Key: { id: { S: `view-${product}` } },
      UpdateExpression: `SET ${sets.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: vals,
    });
  };
  const requestPath = async (i: number) => {
    await client.call('DynamoDB_20120810.GetItem', {
      TableName: 'bench',
      Key: { id: { S: `order-${i % 500}` } },
      ConsistentRead: true,
    });
    await client.call('DynamoDB_20120810.PutItem', {
      TableName: 'bench',
      Item: { id: { S: `order-${i}` }, version: { N: '1' }, body: { S: 'y'.repeat(400) } },
      ConditionExpression: 'attribute_not_exists(id)',
    });
  };
  // Warm the JVM on both kinds of call before anything is measured.
  for (let i = 0; i < 1500; i++) await (i % 3 ? requestPath(-i) : viewUpdate(i % 100, i));

  const batch = Number(values.batch);
  let version = 10_000;
  let order = 0;
  const run = async (concurrency: number) => {
    const latencies: number[] = [];
    const batches: number[] = [];
    const until = performance.now() + Number(values.seconds) * 1000;
    // Open loop, as requests arrive: one pair every `--every-ms`, whether the ones before it have answered or not.
    const foreground = (async () => {
      const pairs: Promise<void>[] = [];
      const every = Number(values['every-ms']);
      const start = performance.now();
      for (let k = 0; start + k * every < until; k++) {
        const due = start + k * every;
        if (due > performance.now())
          await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
        const started = performance.now();
        pairs.push(requestPath(order++).then(() => void latencies.push(performance.now() - started)));
      }
      await Promise.all(pairs);
    })();
    const background = (async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const products = Array.from({ length: batch }, (_, p) => p);
        version++;
        const lane = async () => {
          for (let p = products.shift(); p !== undefined; p = products.shift()) await viewUpdate(p, version);
        };
        await Promise.all(Array.from({ length: Math.min(concurrency, batch) }, lane));
        batches.push(performance.now() - started);
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, 1000 - (performance.now() - started))),
        );
      }
    })();
    await Promise.all([foreground, background]);
    latencies.sort((a, b) => a - b);
    batches.sort((a, b) => a - b);
    return { latencies, batches };
  };

  for (let r = 0; r < Number(values.repeat); r++) {
    for (const c of values.concurrency.map(Number)) {
      const { latencies, batches } = await run(c);
      console.log(
        `batch of ${batch}, ${c} at a time: request-path pair p50 ${percentile(latencies, 50).toFixed(1)} ms, ` +
          `p95 ${percentile(latencies, 95).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms ` +
          `(${latencies.length} pairs); batch p50 ${percentile(batches, 50).toFixed(0)} ms`,
      );
    }
  }
  client.close();
  await ddb.stop();
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
