import { Collection, type KeyNames } from './collection';
import { DynamoDbError, validation } from './errors';
import { normalizeItem } from './normalize';
import { type StreamViewType, TableStream } from './stream';
import { type AttributeValue, type Item, itemSize, keyString } from './values';

export const REGION = 'us-east-1';
export const ACCOUNT = '000000000000';

interface KeySchemaElement {
  AttributeName: string;
  KeyType: 'HASH' | 'RANGE';
}
interface AttributeDefinition {
  AttributeName: string;
  AttributeType: 'S' | 'N' | 'B';
}
interface Projection {
  ProjectionType?: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  NonKeyAttributes?: string[];
}
interface IndexInput {
  IndexName: string;
  KeySchema: KeySchemaElement[];
  Projection: Projection;
}

/** What CreateTable takes (the parts this engine keeps), also what the journal records of a table. */
export interface TableDefinition {
  TableName: string;
  KeySchema: KeySchemaElement[];
  AttributeDefinitions: AttributeDefinition[];
  BillingMode?: string;
  ProvisionedThroughput?: { ReadCapacityUnits: number; WriteCapacityUnits: number };
  GlobalSecondaryIndexes?: IndexInput[];
  LocalSecondaryIndexes?: IndexInput[];
  StreamSpecification?: { StreamEnabled: boolean; StreamViewType?: StreamViewType };
  /** When it was created, epoch milliseconds (kept so that a table rebuilt from the journal keeps its ARNs). */
  CreatedAt?: number;
}

export interface Index {
  readonly name: string;
  readonly global: boolean;
  readonly collection: Collection;
  readonly projection: Projection;
  readonly input: IndexInput;
}

/** One table: its items, its indexes and its stream. */
export class Table {
  readonly name: string;
  readonly arn: string;
  readonly key: KeyNames;
  readonly keyTypes = new Map<string, 'S' | 'N' | 'B'>();
  readonly items: Collection;
  readonly indexes = new Map<string, Index>();
  readonly stream?: TableStream;
  readonly createdAt: number;
  ttlAttribute?: string;

  constructor(readonly definition: TableDefinition) {
    this.name = definition.TableName;
    this.createdAt = definition.CreatedAt ?? Date.now();
    this.arn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${this.name}`;
    for (const d of definition.AttributeDefinitions) this.keyTypes.set(d.AttributeName, d.AttributeType);
    this.key = keyNames(definition.KeySchema, 'table');
    this.items = new Collection(this.key);
    for (const [inputs, global] of [
      [definition.GlobalSecondaryIndexes, true],
      [definition.LocalSecondaryIndexes, false],
    ] as const) {
      for (const input of inputs ?? []) {
        const key = keyNames(input.KeySchema, `index ${input.IndexName}`);
        this.indexes.set(input.IndexName, {
          name: input.IndexName,
          global,
          collection: new Collection(key, this.key),
          projection: input.Projection ?? { ProjectionType: 'ALL' },
          input,
        });
      }
    }
    const spec = definition.StreamSpecification;
    if (spec?.StreamEnabled) {
      const label = new Date(this.createdAt).toISOString().replace(/Z$/, '');
      this.stream = new TableStream(
        `${this.arn}/stream/${label}`,
        label,
        spec.StreamViewType ?? 'NEW_AND_OLD_IMAGES',
        this.createdAt,
        (item) => this.keyOf(item),
      );
    }
  }

  /** The key attributes of `item` (a table key, in key-schema order). */
  keyOf(item: Item): Item {
    const key: Item = { [this.key.hash]: item[this.key.hash]! };
    if (this.key.range) key[this.key.range] = item[this.key.range]!;
    return key;
  }

  /** What names one item of this table, whatever order its key's attributes came in. */
  idOf(key: Item): string {
    const hash = keyString(key[this.key.hash]!);
    return this.key.range ? `${hash}\u0000${keyString(key[this.key.range]!)}` : hash;
  }

  /**
   * A request's `Key`: exactly the table's key attributes, of their defined
   * types ("The provided key element does not match the schema" otherwise,
   * as DynamoDB answers).
   */
  checkKey(key: unknown): Item {
    if (!key || typeof key !== 'object')
      throw validation('The provided key element does not match the schema');
    const names = Object.keys(key);
    const expected = this.key.range ? 2 : 1;
    if (names.length !== expected) throw validation('The provided key element does not match the schema');
    for (const name of [this.key.hash, this.key.range]) {
      if (!name) continue;
      const value = (key as Item)[name];
      if (!value || Object.keys(value)[0] !== this.keyTypes.get(name)) {
        throw validation('The provided key element does not match the schema');
      }
      checkKeyValue(name, value, name === this.key.hash);
    }
    return normalizeItem(key as Item, 'Key');
  }

  /** An item to store: its keys present and typed as defined, index keys typed too, at most 400 KB. */
  checkItem(item: Item) {
    for (const name of [this.key.hash, this.key.range]) {
      if (!name) continue;
      const value = item[name];
      if (value === undefined) {
        throw validation(`One or more parameter values were invalid: Missing the key ${name} in the item`);
      }
      const type = Object.keys(value)[0];
      if (type !== this.keyTypes.get(name)) {
        throw validation(
          `One or more parameter values were invalid: Type mismatch for key ${name} expected: ${this.keyTypes.get(name)} actual: ${type}`,
        );
      }
      checkKeyValue(name, value, name === this.key.hash);
    }
    for (const index of this.indexes.values()) {
      for (const name of [index.collection.key.hash, index.collection.key.range]) {
        if (!name) continue;
        const value = item[name];
        if (value === undefined) continue;
        const type = Object.keys(value)[0];
        if (type !== this.keyTypes.get(name)) {
          throw validation(
            `One or more parameter values were invalid: Type mismatch for Index Key ${name} Expected: ${this.keyTypes.get(name)} Actual: ${type} IndexName: ${index.name}`,
          );
        }
        if (type !== 'N' && String(Object.values(value)[0]).length === 0) {
          throw validation(
            `One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: ${index.name}, IndexKey: ${name}`,
          );
        }
      }
    }
    if (itemSize(item) > 400 * 1024) throw validation('Item size has exceeded the maximum allowed size');
  }

  /** The item as an index projects it. */
  project(index: Index, item: Item): Item {
    const type = index.projection.ProjectionType ?? 'ALL';
    if (type === 'ALL') return item;
    const projected: Item = this.keyOf(item);
    const { hash, range } = index.collection.key;
    projected[hash] = item[hash]!;
    if (range) projected[range] = item[range]!;
    if (type === 'INCLUDE') {
      for (const name of index.projection.NonKeyAttributes ?? []) {
        if (item[name] !== undefined) projected[name] = item[name]!;
      }
    }
    return projected;
  }

  describe() {
    const d = this.definition;
    const size = this.items.size;
    const describeIndex = (index: Index) => ({
      IndexName: index.name,
      KeySchema: index.input.KeySchema,
      Projection: index.projection,
      IndexArn: `${this.arn}/index/${index.name}`,
      ItemCount: index.collection.size,
      IndexSizeBytes: 0,
      ...(index.global ? { IndexStatus: 'ACTIVE' } : {}),
    });
    const indexes = [...this.indexes.values()];
    return {
      TableName: this.name,
      TableArn: this.arn,
      TableId: this.arn,
      TableStatus: 'ACTIVE',
      CreationDateTime: this.createdAt / 1000,
      KeySchema: d.KeySchema,
      AttributeDefinitions: d.AttributeDefinitions,
      ItemCount: size,
      TableSizeBytes: 0,
      BillingModeSummary: { BillingMode: d.BillingMode ?? 'PROVISIONED' },
      ProvisionedThroughput: {
        NumberOfDecreasesToday: 0,
        ReadCapacityUnits: d.ProvisionedThroughput?.ReadCapacityUnits ?? 0,
        WriteCapacityUnits: d.ProvisionedThroughput?.WriteCapacityUnits ?? 0,
      },
      ...(indexes.some((i) => i.global)
        ? { GlobalSecondaryIndexes: indexes.filter((i) => i.global).map(describeIndex) }
        : {}),
      ...(indexes.some((i) => !i.global)
        ? { LocalSecondaryIndexes: indexes.filter((i) => !i.global).map(describeIndex) }
        : {}),
      ...(this.stream
        ? {
            StreamSpecification: { StreamEnabled: true, StreamViewType: this.stream.viewType },
            LatestStreamArn: this.stream.arn,
            LatestStreamLabel: this.stream.label,
          }
        : {}),
    };
  }
}

function keyNames(schema: KeySchemaElement[], what: string): KeyNames {
  const hash = schema.find((k) => k.KeyType === 'HASH')?.AttributeName;
  const range = schema.find((k) => k.KeyType === 'RANGE')?.AttributeName;
  if (!hash || schema.length > 2 || (schema.length === 2 && !range)) {
    throw validation(`Invalid KeySchema of ${what}: one HASH key and at most one RANGE key`);
  }
  return range ? { hash, range } : { hash };
}

/** Key values: not empty, at most 2048 bytes for a partition key and 1024 for a sort key (Service quotas). */
function checkKeyValue(name: string, value: AttributeValue, isHash: boolean) {
  const [type, v] = Object.entries(value)[0]!;
  if (type === 'N') return;
  const bytes = type === 'S' ? Buffer.byteLength(String(v)) : Buffer.from(String(v), 'base64').length;
  if (bytes === 0) {
    throw validation(
      `One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty ${type === 'S' ? 'string' : 'binary'} value. Key: ${name}`,
    );
  }
  const limit = isHash ? 2048 : 1024;
  if (bytes > limit) {
    throw validation(
      `One or more parameter values were invalid: Size of ${isHash ? 'hashkey' : 'rangekey'} has exceeded the maximum size limit of${isHash ? ' 2048' : '1024'} bytes`,
    );
  }
}

/** The tables of one engine, by name. */
export class Tables {
  private readonly byName = new Map<string, Table>();

  create(definition: TableDefinition): Table {
    if (this.byName.has(definition.TableName)) {
      throw new DynamoDbError('ResourceInUseException', `Table already exists: ${definition.TableName}`);
    }
    checkDefinition(definition);
    const table = new Table(definition);
    this.byName.set(table.name, table);
    return table;
  }

  delete(name: string): Table {
    const table = this.get(name);
    this.byName.delete(name);
    return table;
  }

  get(name: unknown): Table {
    const table = typeof name === 'string' ? this.byName.get(name) : undefined;
    if (!table) throw new DynamoDbError('ResourceNotFoundException', 'Requested resource not found');
    return table;
  }

  /** The table whose stream has this ARN. */
  byStream(arn: unknown): Table {
    for (const table of this.byName.values()) if (table.stream?.arn === arn) return table;
    throw new DynamoDbError(
      'ResourceNotFoundException',
      `Requested resource not found: Stream: ${String(arn)} not found`,
    );
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  all(): IterableIterator<Table> {
    return this.byName.values();
  }
}

const NAME = /^[a-zA-Z0-9_.-]{3,255}$/;

function checkDefinition(d: TableDefinition) {
  if (typeof d.TableName !== 'string' || !NAME.test(d.TableName)) {
    throw validation(
      `1 validation error detected: Value '${String(d.TableName)}' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+`,
    );
  }
  if (!Array.isArray(d.KeySchema) || !Array.isArray(d.AttributeDefinitions)) {
    throw validation('KeySchema and AttributeDefinitions are required');
  }
  const defined = new Set(d.AttributeDefinitions.map((a) => a.AttributeName));
  const used = new Set<string>();
  for (const schema of [
    d.KeySchema,
    ...(d.GlobalSecondaryIndexes ?? []).map((i) => i.KeySchema),
    ...(d.LocalSecondaryIndexes ?? []).map((i) => i.KeySchema),
  ]) {
    for (const k of schema) {
      if (!defined.has(k.AttributeName)) {
        throw validation(
          'One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [' +
            `${k.AttributeName}], AttributeDefinitions: [${[...defined].join(', ')}]`,
        );
      }
      used.add(k.AttributeName);
    }
  }
  if (used.size !== defined.size) {
    throw validation(
      'One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions',
    );
  }
  for (const a of d.AttributeDefinitions) {
    if (!['S', 'N', 'B'].includes(a.AttributeType)) {
      throw validation(`Member must satisfy enum value set: [B, N, S] (AttributeType of ${a.AttributeName})`);
    }
  }
}
