import { type Assembly, type Resolve, resourcesOfType } from './assembly';
import type { DynamoJsonClient } from './dynamo-client';

export interface LocalTable {
  readonly logicalId: string;
  readonly tableName: string;
  readonly streamArn?: string;
  /** The partition key's attribute name. */
  readonly partitionKey: string;
}

interface TableDescription {
  KeySchema?: unknown;
  GlobalSecondaryIndexes?: { IndexName: string; KeySchema: unknown }[];
  LatestStreamArn?: string;
}

/**
 * Creates every AWS::DynamoDB::Table of the template in the DynamoDB engine,
 * with its keys, indexes and stream, all at start.
 *
 * A table that exists already (replayed from the journal of `--data-dir`,
 * started again on the same data) is kept as it is, data and stream
 * included, if its keys and indexes are the template's; if they are not,
 * the start fails rather than run the app on a table it was not written for.
 */
export async function createTables(assembly: Assembly, resolve: Resolve, dynamo: DynamoJsonClient) {
  const tables = new Map<string, LocalTable>();
  const existing = new Set<string>();
  let startName: string | undefined;
  do {
    const page = await dynamo.call<{ TableNames: string[]; LastEvaluatedTableName?: string }>(
      'DynamoDB_20120810.ListTables',
      startName ? { ExclusiveStartTableName: startName } : {},
    );
    for (const name of page.TableNames) existing.add(name);
    startName = page.LastEvaluatedTableName;
  } while (startName);
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
    const description = existing.has(logicalId)
      ? await existingTable(dynamo, logicalId, input)
      : (await dynamo.call<{ TableDescription: TableDescription }>('DynamoDB_20120810.CreateTable', input))
          .TableDescription;
    const streamArn = description.LatestStreamArn;
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

/** The description of a table kept from an earlier start, checked against what the template would create. */
async function existingTable(
  dynamo: DynamoJsonClient,
  tableName: string,
  input: Record<string, unknown>,
): Promise<TableDescription> {
  const { Table } = await dynamo.call<{ Table: TableDescription }>('DynamoDB_20120810.DescribeTable', {
    TableName: tableName,
  });
  const indexes = (list: { IndexName?: unknown; KeySchema?: unknown }[] | undefined) =>
    JSON.stringify(
      (list ?? [])
        .map((i) => [i.IndexName, i.KeySchema])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
  const differs: string[] = [];
  if (JSON.stringify(Table.KeySchema) !== JSON.stringify(input.KeySchema)) differs.push('key schema');
  if (
    indexes(Table.GlobalSecondaryIndexes) !==
    indexes(input.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown }[] | undefined)
  ) {
    differs.push('global secondary indexes');
  }
  if (Boolean(Table.LatestStreamArn) !== Boolean(input.StreamSpecification)) differs.push('stream');
  if (differs.length > 0) {
    throw new Error(
      `table ${tableName} kept from an earlier start differs from the template (${differs.join(', ')}): ` +
        'start on a new --data-dir, or delete this one',
    );
  }
  return Table;
}
