import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { processCpuMs } from '../cpu';
import { DynamoJsonClient } from '../dynamo-client';
import { defaultJvmFlags, startDynamoDbLocal } from '../dynamodb';

/**
 * DynamoDB Local's CPU per call and memory under a JVM flag set: starts it
 * with the project's own code (local/dynamodb.ts), warms it, then makes a
 * bounded number of PutItem/GetItem calls (half each, `--concurrency` at a
 * time) and reads the JVM's CPU time (utime + stime, /proc/<pid>/stat) before
 * and after, and its resident memory at the end.
 *
 *   npx tsx local/bench/dynamodb-local.ts --calls 5000 --repeat 3 \
 *     --variant=default --variant="-Xmx256m -Xms32m -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1"
 *
 * A variant is a space-separated list of JVM flags, or "default". Variants are
 * interleaved across repeats, so that a neighbour's load spreads over all.
 */
const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '5000' },
    warmup: { type: 'string', default: '2000' },
    repeat: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1' },
    variant: { type: 'string', multiple: true, default: ['default'] },
    // put-get: PutItem and GetItem; put-expression: PutItem with a condition expression and a Query;
    // transact: two-item TransactWriteItems and a consistent Query.
    workload: { type: 'string', default: 'put-get' },
    // The table with a stream (NEW_AND_OLD_IMAGES), as the platform's event tables have.
    streams: { type: 'boolean', default: false },
  },
});

/** The JVM's CPU time, ms (NaN where /proc cannot be read). */
const jvmCpuMs = (pid: number) => processCpuMs(pid) ?? Number.NaN;
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function calls(client: DynamoJsonClient, n: number, concurrency: number, offset: number) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const id = `item-${(offset + i) % 1000}`;
      if (values.workload === 'transact') {
        if (i % 2 === 0) {
          await client.call('DynamoDB_20120810.TransactWriteItems', {
            TransactItems: [0, 1].map((k) => ({
              Put: {
                TableName: 'bench',
                Item: { id: { S: `${id}-${k}` }, n: { N: String(i) }, payload: { S: 'x'.repeat(200) } },
              },
            })),
          });
        } else {
          await client.call('DynamoDB_20120810.Query', {
            TableName: 'bench',
            KeyConditionExpression: 'id = :id',
            ExpressionAttributeValues: { ':id': { S: `${id}-0` } },
            ConsistentRead: true,
            Limit: 1,
          });
        }
      } else if (values.workload === 'put-expression') {
        // PutItem with a condition expression and a consistent Query with a key condition expression, as the platform writes and reads.
        if (i % 2 === 0) {
          await client.call('DynamoDB_20120810.PutItem', {
            TableName: 'bench',
            Item: { id: { S: `${id}-${offset}-${i}` }, n: { N: String(i) }, payload: { S: 'x'.repeat(200) } },
            ConditionExpression: 'attribute_not_exists(#id)',
            ExpressionAttributeNames: { '#id': 'id' },
          });
        } else {
          await client.call('DynamoDB_20120810.Query', {
            TableName: 'bench',
            KeyConditionExpression: '#id = :id',
            ExpressionAttributeNames: { '#id': 'id' },
            ExpressionAttributeValues: { ':id': { S: id } },
            ConsistentRead: true,
            Limit: 1,
          });
        }
      } else if (i % 2 === 0) {
        await client.call('DynamoDB_20120810.PutItem', {
          TableName: 'bench',
          Item: { id: { S: id }, n: { N: String(i) }, payload: { S: 'x'.repeat(200) } },
        });
      } else {
        await client.call('DynamoDB_20120810.GetItem', { TableName: 'bench', Key: { id: { S: id } } });
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function measure(flags: readonly string[] | undefined) {
  const ddb = await startDynamoDbLocal(flags ? { jvmFlags: flags } : {});
  const client = new DynamoJsonClient(ddb.port);
  try {
    await client.call('DynamoDB_20120810.CreateTable', {
      TableName: 'bench',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      ...(values.streams
        ? { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } }
        : {}),
    });
    await calls(client, Number(values.warmup), Number(values.concurrency), 0);
    const cpu0 = jvmCpuMs(ddb.pid);
    const t0 = performance.now();
    const n = Number(values.calls);
    await calls(client, n, Number(values.concurrency), 7);
    const wallS = (performance.now() - t0) / 1000;
    const cpuMsPerCall = (jvmCpuMs(ddb.pid) - cpu0) / n;
    return { cpuMsPerCall, callsPerS: n / wallS, rssMb: rssMb(ddb.pid) };
  } finally {
    client.close();
    await ddb.stop();
  }
}

async function main() {
  const variants = values.variant.map((v) => (v === 'default' ? undefined : v.split(/\s+/).filter(Boolean)));
  const results = new Map<number, Awaited<ReturnType<typeof measure>>[]>();
  for (let r = 0; r < Number(values.repeat); r++) {
    for (const [i, flags] of variants.entries()) {
      const result = await measure(flags);
      results.set(i, [...(results.get(i) ?? []), result]);
      console.log(
        `${values.variant[i]} #${r + 1}: ${result.cpuMsPerCall.toFixed(2)} ms CPU/call, ` +
          `${result.callsPerS.toFixed(0)} calls/s, RSS ${result.rssMb.toFixed(0)} MB`,
      );
    }
  }
  console.log(
    `\nsummary (${values.workload}${values.streams ? ', with a stream' : ''}, ${values.calls} calls, concurrency ${values.concurrency}; min / median / max):`,
  );
  for (const [i, rs] of results) {
    const stats = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return `${s[0]!.toFixed(2)} / ${s[Math.floor(s.length / 2)]!.toFixed(2)} / ${s.at(-1)!.toFixed(2)}`;
    };
    const label =
      values.variant[i] === 'default' ? `default (${defaultJvmFlags(256).join(' ')})` : values.variant[i];
    console.log(
      `${label}\n  CPU ms/call ${stats(rs.map((r) => r.cpuMsPerCall))}; calls/s ${stats(rs.map((r) => r.callsPerS))}; RSS MB ${stats(rs.map((r) => r.rssMb))}`,
    );
  }
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
