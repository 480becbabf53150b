/**
 * Where the conformance suite runs: the local engine (default; started in
 * this process and served on 127.0.0.1) or, with
 * DYNAMODB_CONFORMANCE_TARGET=aws, real DynamoDB with the default credential
 * chain and AWS_REGION (opt-in, never in CI). The suite only speaks the AWS
 * SDK v3 to the endpoint, so both targets run the same cases unchanged.
 */
import { randomBytes } from 'node:crypto';
import {
  type AttributeValue,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DynamoDBClient,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { type LocalDynamoDb, startDynamoDb } from '../../../dynamodb';

export type Item = Record<string, AttributeValue>;

export const ON_AWS = process.env.DYNAMODB_CONFORMANCE_TARGET === 'aws';

/** Generous for AWS (CreateTable and its wait), irrelevant locally. */
export const SETUP_TIMEOUT_MS = ON_AWS ? 600_000 : 30_000;

const RUN = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
let tables = 0;

export interface Target {
  readonly db: DynamoDBClient;
  readonly streams: DynamoDBStreamsClient;
  /** The engine when running locally (undefined against AWS). */
  readonly local?: LocalDynamoDb;
  /** Creates a uniquely named on-demand table and waits until it is ACTIVE; returns its name. */
  table(input: Omit<CreateTableCommandInput, 'TableName' | 'BillingMode'>): Promise<string>;
  /** Deletes the tables it created and stops the engine. */
  close(): Promise<void>;
}

export async function openTarget(): Promise<Target> {
  const local = ON_AWS ? undefined : await startDynamoDb();
  const config = local
    ? {
        endpoint: local.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'conformance', secretAccessKey: 'conformance' },
        maxAttempts: 1,
      }
    : {};
  const db = new DynamoDBClient(config);
  const streams = new DynamoDBStreamsClient(config);
  const created: string[] = [];
  return {
    db,
    streams,
    ...(local ? { local } : {}),
    async table(input) {
      const name = `conformance-${RUN}-${++tables}`;
      await db.send(new CreateTableCommand({ ...input, TableName: name, BillingMode: 'PAY_PER_REQUEST' }));
      created.push(name);
      await waitUntilTableExists({ client: db, maxWaitTime: 300 }, { TableName: name });
      return name;
    },
    async close() {
      if (ON_AWS) {
        for (const name of created)
          await db.send(new DeleteTableCommand({ TableName: name })).catch(() => {});
      }
      db.destroy();
      streams.destroy();
      await local?.stop();
    },
  };
}

/** The error a call was refused with (failing the test if it succeeded). */
export async function refusal(call: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await call;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected the call to be refused, and it succeeded');
}

/**
 * Runs `check` until it passes: once locally (the engine is immediately
 * consistent and must pass at once), for up to `ms` against AWS, where
 * indexes and streams follow the table asynchronously.
 */
export async function eventually<T>(check: () => Promise<T>, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (!ON_AWS || Date.now() > until) throw error;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

export const s = (value: string): AttributeValue => ({ S: value });
export const n = (value: number | string): AttributeValue => ({ N: String(value) });

/**
 * A table's `KeySchema` and `AttributeDefinitions` (CreateTable, API
 * Reference): the partition key and, optionally, the sort key, each with its
 * scalar type.
 */
export function keyed(
  hash: readonly [string, 'S' | 'N' | 'B'],
  range?: readonly [string, 'S' | 'N' | 'B'],
): Pick<CreateTableCommandInput, 'KeySchema' | 'AttributeDefinitions'> {
  const keys = range ? [hash, range] : [hash];
  return {
    KeySchema: keys.map(([name], i) => ({ AttributeName: name, KeyType: i === 0 ? 'HASH' : 'RANGE' })),
    AttributeDefinitions: keys.map(([name, type]) => ({ AttributeName: name, AttributeType: type })),
  };
}
