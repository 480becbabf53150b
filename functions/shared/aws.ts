import { Agent } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { traced } from './powertools';

/**
 * Clients shared by every invocation of a function. Endpoints come from the
 * standard AWS_ENDPOINT_URL* variables, which the local cloud sets and AWS
 * leaves unset.
 */
export const dynamo = traced(
  new DynamoDBClient({
    maxAttempts: 5,
    // Keep-alive sockets, and more of them than the SDK's default 50: a Lambda sandbox runs one
    // invocation at a time, but the local cloud runs a function's concurrent invocations in one sandbox.
    requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 512 }) }),
  }),
);
export const documents = DynamoDBDocumentClient.from(dynamo, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});

/** Reads a required environment variable set by the CDK construct. */
export function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
}
