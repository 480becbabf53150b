import type { DynamoDbEngine } from './dynamodb/engine';
import { DynamoDbError } from './dynamodb/errors';

/**
 * The local cloud's own DynamoDB calls (creating tables, reading streams,
 * the saga's GetItem tasks), made on the engine in this process with no
 * HTTP in between. Answers and errors are the wire protocol's: a stream
 * record comes back in exactly the shape Lambda delivers. What it returns
 * is the engine's own data, shared: read it, never change it.
 */
export class DynamoJsonClient {
  constructor(private readonly engine: DynamoDbEngine) {}

  /** Runs `target` (e.g. `DynamoDBStreams_20120810.GetRecords`); rejects with the error's `code`, as a client would. */
  async call<T = Record<string, unknown>>(target: string, input: unknown): Promise<T> {
    const operation = target.slice(target.indexOf('.') + 1);
    try {
      return this.engine.handle(operation, input as Record<string, unknown>) as T;
    } catch (error) {
      if (!(error instanceof DynamoDbError)) throw error;
      throw Object.assign(new Error(`${target}: ${error.message}`), { code: error.type });
    }
  }
}
