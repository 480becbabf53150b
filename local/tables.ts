import { type Assembly, type Resolve, resourcesOfType } from './assembly';
import type { DynamoJsonClient } from './dynamo-client';

export interface LocalTable {
  readonly logicalId: string;
  readonly tableName: string;
  readonly streamArn?: string;
  /** The partition key's attribute name. */
  readonly partitionKey: string;
}

/**
 * Creates every AWS::DynamoDB::Table of the template in DynamoDB Local, with
 * its keys, indexes and stream. All at start: DynamoDB Local becomes very
 * slow at creating a stream table after others have taken many writes.
 */
export async function createTables(assembly: Assembly, resolve: Resolve, dynamo: DynamoJsonClient) {
  const tables = new Map<string, LocalTable>();
  for (const [logicalId, r] of resourcesOfType(assembly.template, 'AWS::DynamoDB::Table')) {
    const p = resolve(r.Properties ?? {}) as Record<string, unknown>;
    const stream = p.StreamSpecification as { StreamViewType: string } | undefined;
    const input: Record<string, unknown> = {
      TableName: logicalId,
      KeySchema: p.KeySchema,
      AttributeDefinitions: p.AttributeDefinitions,
      BillingMode: 'PAY_PER_REQUEST',
      ...(p.GlobalSecondaryIndexes
        ? {
            GlobalSecondaryIndexes: (p.GlobalSecondaryIndexes as Record<string, unknown>[]).map((index) => ({
              IndexName: index.IndexName,
              KeySchema: index.KeySchema,
              Projection: index.Projection,
            })),
          }
        : {}),
      ...(p.LocalSecondaryIndexes ? { LocalSecondaryIndexes: p.LocalSecondaryIndexes } : {}),
      ...(stream
        ? { StreamSpecification: { StreamEnabled: true, StreamViewType: stream.StreamViewType } }
        : {}),
    };
    const created = await dynamo.call<{ TableDescription: { LatestStreamArn?: string } }>(
      'DynamoDB_20120810.CreateTable',
      input,
    );
    const streamArn = created.TableDescription.LatestStreamArn;
    const partitionKey = (p.KeySchema as { AttributeName: string; KeyType: string }[]).find(
      (k) => k.KeyType === 'HASH',
    )!.AttributeName;
    tables.set(logicalId, {
      logicalId,
      tableName: logicalId,
      partitionKey,
      ...(streamArn ? { streamArn } : {}),
    });
  }
  return tables;
}
