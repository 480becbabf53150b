/**
 * The functions' DynamoDB client: DynamoDB's JSON protocol
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.LowLevelAPI.html)
 * sent over keep-alive connections, signed with Signature Version 4, its
 * items converted to and from plain values by the SDK's own `marshall` and
 * `unmarshall`, retried by the SDK's retry strategy with the SDK's
 * classification of errors. It takes the inputs of `@aws-sdk/lib-dynamodb`'s
 * commands and answers their outputs (less `$metadata`); its errors carry
 * the names, fields and `$metadata` of the SDK's.
 *
 * Why not the SDK's client (docs/decisions/0011-dynamodb-json-client.md):
 * a call through it costs the calling thread three times the CPU (its
 * middleware stack, schema serde, endpoint rules, logger filter), and a
 * Lambda invocation pays for that time; its code was most of every bundle.
 */

import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
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
import {
  isServerError,
  isThrottlingError,
  isTransientError,
  type StandardRetryStrategy,
} from '@smithy/core/retry';
import { type Credentials, signJsonPost } from './sigv4';

type Wire = Record<string, unknown>;
type Item = Record<string, unknown>;
type WireItem = Record<string, AttributeValue>;
type Answer<O> = Omit<O, '$metadata'>;

/** A call DynamoDB refused, as the SDK raises it: `name` is DynamoDB's error code. */
export class DynamoDbError extends Error {
  readonly $fault: 'client' | 'server';
  readonly $metadata: {
    httpStatusCode: number;
    requestId?: string;
    attempts?: number;
    totalRetryDelay?: number;
  };
  /** `TransactionCanceledException`'s reason per action. */
  declare readonly CancellationReasons?: { Code?: string; Message?: string; Item?: WireItem }[];
  /** `ConditionalCheckFailedException`'s item, with `ReturnValuesOnConditionCheckFailure: ALL_OLD` (as stored). */
  declare readonly Item?: WireItem;

  constructor(name: string, message: string, status: number, requestId: string | undefined, fields: Wire) {
    super(message);
    this.name = name;
    this.$fault = status >= 500 ? 'server' : 'client';
    this.$metadata = { httpStatusCode: status, requestId };
    if (Array.isArray(fields.CancellationReasons)) this.CancellationReasons = fields.CancellationReasons;
    if (fields.Item && typeof fields.Item === 'object') this.Item = fields.Item as WireItem;
  }
}

/** Whether `error` is DynamoDB's refusal named `name` (e.g. `ConditionalCheckFailedException`). */
export const isDynamoDbError = (error: unknown, name: string): error is DynamoDbError =>
  error instanceof DynamoDbError && error.name === name;

export interface DynamoDbDocumentsOptions {
  readonly retryStrategy: StandardRetryStrategy;
  readonly marshallOptions?: marshallOptions;
  /** Default: `AWS_ENDPOINT_URL_DYNAMODB`, else `AWS_ENDPOINT_URL`, else the region's public endpoint. */
  readonly endpoint?: string;
  /** Default: `AWS_REGION` (Lambda sets it; without one the client refuses to start, as the SDK's). */
  readonly region?: string;
  /** Default: the environment's (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), as Lambda sets them. */
  readonly credentials?: Credentials;
  /** Told each call's operation before it is sent (tests count calls with it). */
  readonly onCall?: (operation: string) => void;
}

const CONTENT_TYPE = 'application/x-amz-json-1.0';
const TARGET_PREFIX = 'DynamoDB_20120810.';

/** The environment's credentials, as the SDK's first provider reads them (its error's name included). */
function environmentCredentials(): Credentials {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = process.env;
  if (!accessKeyId || !secretAccessKey) {
    throw Object.assign(new Error('Unable to find environment variable credentials.'), {
      name: 'CredentialsProviderError',
    });
  }
  return { accessKeyId, secretAccessKey, sessionToken: process.env.AWS_SESSION_TOKEN || undefined };
}

/** Where the calls go and how: resolved at the first call, as the SDK resolves its configuration. */
interface Endpoint {
  readonly url: URL;
  readonly region: string;
  readonly agent: HttpAgent;
  readonly send: typeof httpRequest;
}

function endpointOf(options: DynamoDbDocumentsOptions): Endpoint {
  const region = options.region ?? process.env.AWS_REGION;
  if (!region) throw new Error('Region is missing: set AWS_REGION');
  const url = new URL(
    options.endpoint ??
      process.env.AWS_ENDPOINT_URL_DYNAMODB ??
      process.env.AWS_ENDPOINT_URL ??
      `https://dynamodb.${region}.amazonaws.com`,
  );
  // Keep-alive sockets, so that calls reuse connections across invocations. (A sandbox runs one
  // invocation at a time, on Lambda as locally; the bound is only a ceiling for fan-out within one.)
  const https = url.protocol === 'https:';
  return {
    url,
    region,
    agent: https
      ? new HttpsAgent({ keepAlive: true, maxSockets: 512 })
      : new HttpAgent({ keepAlive: true, maxSockets: 512 }),
    send: https ? httpsRequest : httpRequest,
  };
}

export class DynamoDbDocuments {
  private endpoint: Endpoint | undefined;
  /** A copy: the SDK's document client sets `convertTopLevelContainer` on the options object it is given. */
  private readonly marshallOptions: marshallOptions;

  constructor(private readonly options: DynamoDbDocumentsOptions) {
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
    this.endpoint?.agent.destroy();
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

  /**
   * One operation, retried as the SDK retries: the strategy decides from the
   * error's kind (throttling, transient, server, client) whether and after what
   * backoff; when it will not, the last error is thrown, with the attempts made.
   */
  private async call(operation: string, input: Wire): Promise<Wire> {
    this.options.onCall?.(operation);
    const body = JSON.stringify(input);
    const strategy = this.options.retryStrategy;
    let token = await strategy.acquireInitialRetryToken(operation);
    let attempts = 0;
    let totalRetryDelay = 0;
    for (;;) {
      attempts++;
      try {
        const answer = await this.attempt(operation, body);
        strategy.recordSuccess(token);
        return answer;
      } catch (error) {
        const failed = error as Error & { $metadata?: Record<string, unknown> };
        const backoffFrom = Date.now();
        try {
          // It waits out the backoff before it answers (or refuses: no retry left, or none in time).
          token = await strategy.refreshRetryTokenForRetry(token, { errorType: errorTypeOf(failed) });
        } catch {
          failed.$metadata = { ...failed.$metadata, attempts, totalRetryDelay };
          throw failed;
        }
        totalRetryDelay += Date.now() - backoffFrom;
      }
    }
  }

  private async attempt(operation: string, body: string): Promise<Wire> {
    this.endpoint ??= endpointOf(this.options);
    const { url, region, agent, send } = this.endpoint;
    const headers = signJsonPost(
      {
        host: url.host,
        region,
        service: 'dynamodb',
        target: TARGET_PREFIX + operation,
        contentType: CONTENT_TYPE,
        body,
      },
      this.options.credentials ?? environmentCredentials(),
    );
    headers['content-length'] = String(Buffer.byteLength(body));
    // Lambda's trace id, sent on each call as the SDK's recursion-detection middleware sends it (unsigned, as there).
    const traceId = process.env._X_AMZN_TRACE_ID;
    if (traceId && process.env.AWS_LAMBDA_FUNCTION_NAME) headers['x-amzn-trace-id'] = traceId;
    return new Promise<Wire>((resolve, reject) => {
      const request = send(
        {
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/',
          headers,
          agent,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            const parsed = parseJson(text);
            if (status >= 200 && status < 300 && parsed) return resolve(parsed);
            const requestId = response.headers['x-amzn-requestid'];
            reject(
              refusalOf(
                status,
                parsed,
                response.headers['x-amzn-errortype'],
                typeof requestId === 'string' ? requestId : undefined,
              ),
            );
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }
}

function parseJson(text: string): Wire | undefined {
  try {
    const value: unknown = JSON.parse(text || '{}');
    return value && typeof value === 'object' ? (value as Wire) : undefined;
  } catch {
    return undefined;
  }
}

/** DynamoDB's error answer as the SDK names it: the code from `x-amzn-errortype`, else `__type`, after its namespace. */
function refusalOf(
  status: number,
  body: Wire | undefined,
  errorType: string | string[] | undefined,
  requestId: string | undefined,
): DynamoDbError {
  const raw = (typeof errorType === 'string' && errorType) || String(body?.__type ?? body?.code ?? '');
  const name =
    raw.split(':')[0]!.split('#').pop() || (status >= 500 ? 'InternalServerError' : 'UnknownError');
  const message = String(body?.message ?? body?.Message ?? `DynamoDB answered ${status}`);
  return new DynamoDbError(name, message, status, requestId, body ?? {});
}

/** The SDK's retry classification, in its order (its retry middleware's). */
function errorTypeOf(failed: Error) {
  // A DynamoDbError or a socket's error: the fields the classifiers read (`name`, `code`, `$metadata`) or none.
  const error = failed as Parameters<typeof isThrottlingError>[0];
  if (isThrottlingError(error)) return 'THROTTLING' as const;
  if (isTransientError(error)) return 'TRANSIENT' as const;
  if (isServerError(error)) return 'SERVER_ERROR' as const;
  return 'CLIENT_ERROR' as const;
}
