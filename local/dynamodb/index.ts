import { DynamoDbEngine } from './engine';
import { Journal } from './journal';
import { serveDynamoDb } from './server';

export { DynamoDbEngine } from './engine';
export { DynamoDbError } from './errors';
export { Journal } from './journal';

/** A DynamoDB engine served on its own port of 127.0.0.1 (see serveDynamoDb). */
export interface LocalDynamoDb {
  /** `http://127.0.0.1:<port>`, for SDK clients' `endpoint`. */
  readonly endpoint: string;
  readonly engine: DynamoDbEngine;
  stop(): Promise<void>;
}

/**
 * Starts an engine in this process, in memory or journaled in `dataDir`,
 * and serves it on `port` (0: a free one): DynamoDB for a store's tests and
 * the benchmarks, with nothing to install.
 */
export async function startDynamoDb(
  options: { port?: number; dataDir?: string } = {},
): Promise<LocalDynamoDb> {
  const journal = options.dataDir === undefined ? undefined : new Journal(options.dataDir);
  const engine = new DynamoDbEngine(journal);
  const server = await serveDynamoDb(engine, options.port ?? 0);
  return {
    endpoint: server.endpoint,
    engine,
    stop: async () => {
      await server.stop();
      journal?.close();
    },
  };
}
