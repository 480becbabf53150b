import { Agent } from 'node:http';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { DynamoDbEventStore } from './event-store';
import { traced } from './powertools';
import { DeadlineRetries } from './retries';
import type { Environment, Values, Variable } from './seams';

/**
 * What the local cloud's sandbox (local/lambda/dynamo-transport.ts) offers
 * the DynamoDB client: its own request handler and signer, which carry the
 * calls to DynamoDB Local and meter them there. Lambda has no such thing:
 * there it is absent, and the SDK's HTTP client and SigV4 are used.
 */
const LOCAL_DYNAMODB_CLIENT = Symbol.for('local-cloud.dynamodb.client');
const localClientConfig = (globalThis as Record<symbol, Partial<DynamoDBClientConfig> | undefined>)[
  LOCAL_DYNAMODB_CLIENT
];

/**
 * Clients shared by every invocation of a function. Endpoints come from the
 * standard AWS_ENDPOINT_URL* variables, which the local cloud sets and AWS
 * leaves unset.
 */
export const dynamo = traced(
  new DynamoDBClient({
    retryStrategy: new DeadlineRetries(5),
    // Keep-alive sockets, so that calls reuse connections across invocations. (A sandbox runs one
    // invocation at a time, on Lambda as locally; the bound is only a ceiling for fan-out within one.)
    requestHandler:
      localClientConfig?.requestHandler ??
      new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 512 }) }),
    ...(localClientConfig?.signer ? { signer: localClientConfig.signer } : {}),
  }),
);
export const documents = DynamoDBDocumentClient.from(dynamo, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});

/**
 * Reads a group of environment variables the CDK construct set (a module's
 * seams.ts declares it). Call it once per sandbox, at module scope: the
 * environment never changes within one.
 */
export const fromEnvironment = <S extends Record<string, Variable<unknown>>>(
  variables: Environment<S>,
): Values<S> => variables.read(process.env);

/** The functions' event store: DynamoDB, through the shared client. */
export const dynamoEvents = new DynamoDbEventStore(documents);
