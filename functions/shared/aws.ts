import { Agent } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { DynamoDbEventStore } from './dynamodb-event-store';
import { DeadlineRetries } from './retries';
import type { Environment, Values, Variable } from './seams';

/**
 * Clients shared by every invocation of a function. Endpoints come from the
 * standard AWS_ENDPOINT_URL* variables where they are set (SAM and other
 * emulators set them; Lambda leaves them unset).
 */
export const dynamo = new DynamoDBClient({
  retryStrategy: new DeadlineRetries(5),
  // Keep-alive sockets, so that calls reuse connections across invocations. (A sandbox runs one
  // invocation at a time, on Lambda as locally; the bound is only a ceiling for fan-out within one.)
  requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 512 }) }),
});
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
