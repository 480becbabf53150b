import { DynamoDBClient, ListTablesCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { awsEndpoint } from './api';

/** An item of an event table, as the event stores write it. */
export interface StoredEvent {
  readonly type: string;
  readonly version: number;
  readonly occurredAt: string;
  readonly data: Record<string, unknown>;
}

/**
 * Every event of one aggregate, oldest first, read straight from its event
 * table (`tablePattern`, e.g. /^Orders.*Events/) on the local cloud's AWS
 * endpoint: the test's own client, which no fault injected touches.
 */
export async function eventsOf(
  tablePattern: RegExp,
  aggregateId: string,
  endpoint = awsEndpoint(),
): Promise<StoredEvent[]> {
  const dynamo = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const tables = (await dynamo.send(new ListTablesCommand({}))).TableNames ?? [];
    const table = tables.find((t) => tablePattern.test(t));
    if (!table) throw new Error(`no table ${tablePattern} among ${tables.join(', ')}`);
    const items: StoredEvent[] = [];
    let start: Record<string, never> | undefined;
    do {
      const page = await dynamo.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'aggregateId = :id',
          ExpressionAttributeValues: { ':id': { S: aggregateId } },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) items.push(unmarshall(item) as StoredEvent);
      start = page.LastEvaluatedKey as Record<string, never> | undefined;
    } while (start);
    return items;
  } finally {
    dynamo.destroy();
  }
}

/** Sets one kind of the local cloud's faults (`POST /_local/faults/<kind>`); `[]` or `{}` lifts it. */
export async function setLocalFaults(
  kind: 'dynamodb' | 'functions' | 'duplicates' | 'eventbridge' | 'deliveries',
  rules: unknown,
  endpoint = awsEndpoint(),
) {
  const response = await fetch(`${endpoint}/_local/faults/${kind}`, {
    method: 'POST',
    body: JSON.stringify(rules),
  });
  if (!response.ok) throw new Error(`${kind} faults not set: ${response.status} ${await response.text()}`);
}

/** What the local cloud's faults have done since it started (`GET /_local/faults`). */
export async function injectedSoFar(endpoint = awsEndpoint()) {
  const response = await fetch(`${endpoint}/_local/faults`);
  return (
    (await response.json()) as {
      injected: {
        dynamodb: { refused: number; lostAnswers: number };
        functions: { afterWork: number; midway: number };
      };
    }
  ).injected;
}
