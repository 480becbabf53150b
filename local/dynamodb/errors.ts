/**
 * An error the engine answers with, as DynamoDB does: the exception's short
 * name (`ValidationException`, `ConditionalCheckFailedException`, ...) goes
 * in `__type` with DynamoDB's namespace, and `message` as DynamoDB words it.
 */
export class DynamoDbError extends Error {
  constructor(
    readonly type: string,
    message: string,
    /** Extra members of the error body (e.g. `Item`, `CancellationReasons`). */
    readonly extra: Record<string, unknown> = {},
    /** HTTP status: 400 for client errors, 500 for InternalServerError. */
    readonly status = 400,
  ) {
    super(message);
  }

  /** The JSON body DynamoDB sends for this error. */
  get body(): Record<string, unknown> {
    return { __type: `com.amazonaws.dynamodb.v20120810#${this.type}`, message: this.message, ...this.extra };
  }
}

/** DynamoDB's most common refusal: a request that breaks the API's rules. */
export const validation = (message: string) => new DynamoDbError('ValidationException', message);
