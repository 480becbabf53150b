/**
 * The functions' DynamoDB client: DynamoDB's JSON protocol
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.LowLevelAPI.html)
 * sent by `AwsJsonClient` (./aws-json.ts), its items converted to and from
 * plain values by the SDK's own `marshall` and `unmarshall`. It takes the
 * inputs of `@aws-sdk/lib-dynamodb`'s commands and answers their outputs
 * (less `$metadata`); its errors carry the names, fields and `$metadata` of
 * the SDK's.
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type {
  BatchGetCommandInput,
  BatchGetCommandOutput,
  DeleteCommandInput,
  DeleteCommandOutput,
  GetCommandInput,
  GetCommandOutput,
  PutCommandInput,
  PutCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  TransactWriteCommandInput,
  UpdateCommandInput,
  UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { marshall, type marshallOptions, unmarshall } from '@aws-sdk/util-dynamodb';
import { AwsJsonClient, type AwsJsonClientOptions, AwsServiceError, type Wire } from './aws-json';

type Item = Record<string, unknown>;
type WireItem = Record<string, AttributeValue>;
type Answer<O> = Omit<O, '$metadata'>;

/** A call DynamoDB refused, as the SDK raises it: `name` is DynamoDB's error code. */
export class DynamoDbError extends AwsServiceError {
  /** `TransactionCanceledException`'s reason per action. */
  declare readonly CancellationReasons?: { Code?: string; Message?: string; Item?: WireItem }[];
  /** `ConditionalCheckFailedException`'s item, with `ReturnValuesOnConditionCheckFailure: ALL_OLD` (as stored). */
  declare readonly Item?: WireItem;

  constructor(name: string, message: string, status: number, requestId: string | undefined, fields: Wire) {
    super(name, message, status, requestId);
    if (Array.isArray(fields.CancellationReasons)) this.CancellationReasons = fields.CancellationReasons;
    if (fields.Item && typeof fields.Item === 'object') this.Item = fields.Item as WireItem;
  }
}

/** Whether `error` is DynamoDB's refusal named `name` (e.g. `ConditionalCheckFailedException`). */
export const isDynamoDbError = (error: unknown, name: string): error is DynamoDbError =>
  error instanceof DynamoDbError && error.name === name;

export interface DynamoDbDocumentsOptions extends AwsJsonClientOptions {
  readonly marshallOptions?: marshallOptions;
}

const DYNAMODB = {
  signingName: 'dynamodb',
  endpointVariable: 'DYNAMODB',
  targetPrefix: 'DynamoDB_20120810.',
  jsonVersion: '1.0',
} as const;

export class DynamoDbDocuments {
  private readonly client: AwsJsonClient;
  /** A copy: the SDK's document client sets `convertTopLevelContainer` on the options object it is given. */
  private readonly marshallOptions: marshallOptions;

  constructor(options: DynamoDbDocumentsOptions) {
    this.client = new AwsJsonClient(DYNAMODB, options, (...refusal) => new DynamoDbError(...refusal));
    // Each top-level value is an item or a map of values, never one value to convert.
    this.marshallOptions = { ...options.marshallOptions, convertTopLevelContainer: false };
  }

  async get(input: GetCommandInput): Promise<Answer<GetCommandOutput>> {
    const out = await this.call('GetItem', { ...input, Key: this.m(input.Key) });
    return { ...out, Item: this.u(out.Item) };
  }

  async put(input: PutCommandInput): Promise<Answer<PutCommandOutput>> {
    const out = await this.call('PutItem', this.withItem(input));
    return { ...out, Attributes: this.u(out.Attributes) };
  }

  async update(input: UpdateCommandInput): Promise<Answer<UpdateCommandOutput>> {
    const out = await this.call('UpdateItem', this.withKey(input));
    return { ...out, Attributes: this.u(out.Attributes) };
  }

  async delete(input: DeleteCommandInput): Promise<Answer<DeleteCommandOutput>> {
    const out = await this.call('DeleteItem', this.withKey(input));
    return { ...out, Attributes: this.u(out.Attributes) };
  }

  async query(input: QueryCommandInput): Promise<Answer<QueryCommandOutput>> {
    const out = await this.call('Query', {
      ...input,
      ExpressionAttributeValues: this.m(input.ExpressionAttributeValues),
      ExclusiveStartKey: this.m(input.ExclusiveStartKey),
    });
    return {
      ...out,
      Items: (out.Items as WireItem[] | undefined)?.map((item) => unmarshall(item)),
      LastEvaluatedKey: this.u(out.LastEvaluatedKey),
    };
  }

  async transactWrite(input: TransactWriteCommandInput): Promise<void> {
    await this.call('TransactWriteItems', {
      ...input,
      TransactItems: input.TransactItems?.map(({ ConditionCheck, Put, Delete, Update }) => ({
        ConditionCheck: ConditionCheck && this.withKey(ConditionCheck),
        Put: Put && this.withItem(Put),
        Delete: Delete && this.withKey(Delete),
        Update: Update && this.withKey(Update),
      })),
    });
  }

  async batchGet(input: BatchGetCommandInput): Promise<Answer<BatchGetCommandOutput>> {
    const tables = Object.entries(input.RequestItems ?? {});
    const out = await this.call('BatchGetItem', {
      ...input,
      RequestItems: Object.fromEntries(
        tables.map(([table, keys]) => [table, { ...keys, Keys: keys.Keys?.map((key) => this.m(key)) }]),
      ),
    });
    const responses = (out.Responses ?? {}) as Record<string, WireItem[]>;
    const unprocessed = (out.UnprocessedKeys ?? {}) as Record<string, { Keys?: WireItem[] }>;
    return {
      ...out,
      Responses: Object.fromEntries(
        Object.entries(responses).map(([table, items]) => [table, items.map((i) => unmarshall(i))]),
      ),
      UnprocessedKeys: Object.fromEntries(
        Object.entries(unprocessed).map(([table, keys]) => [
          table,
          { ...keys, Keys: keys.Keys?.map((key) => unmarshall(key)) },
        ]),
      ) as BatchGetCommandOutput['UnprocessedKeys'],
    };
  }

  /** Closes the kept-alive connections (a test's clean-up; a function never needs it). */
  destroy() {
    this.client.destroy();
  }

  /** A put (alone or in a transaction) with its item and values marshalled. */
  private withItem<T extends { Item?: Item; ExpressionAttributeValues?: Item }>(put: T) {
    return {
      ...put,
      Item: this.m(put.Item),
      ExpressionAttributeValues: this.m(put.ExpressionAttributeValues),
    };
  }

  /** An update, delete or condition check (alone or in a transaction) with its key and values marshalled. */
  private withKey<T extends { Key?: Item; ExpressionAttributeValues?: Item }>(action: T) {
    return {
      ...action,
      Key: this.m(action.Key),
      ExpressionAttributeValues: this.m(action.ExpressionAttributeValues),
    };
  }

  private m(values: Item | undefined): WireItem | undefined {
    return values && marshall(values, this.marshallOptions);
  }

  private u(item: unknown): Item | undefined {
    return item ? unmarshall(item as WireItem) : undefined;
  }

  private call(operation: string, input: Wire): Promise<Wire> {
    return this.client.call(operation, input);
  }
}
