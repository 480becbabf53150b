import { DynamoDbDocuments } from './dynamodb-documents';
import { DynamoDbEventStore } from './dynamodb-event-store';
import { DeadlineRetries } from './retries';
import type { Environment, Values, Variable } from './seams';

/**
 * Clients shared by every invocation of a function. Endpoints come from the
 * standard AWS_ENDPOINT_URL* variables where they are set (SAM and other
 * emulators set them; Lambda leaves them unset).
 */
export const documents = new DynamoDbDocuments({
  retryStrategy: new DeadlineRetries(5),
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
