import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDbEngine } from './engine';
import { DynamoDbError } from './errors';

const JSON_1_0 = 'application/x-amz-json-1.0';

/** DynamoDB's and DynamoDB Streams' JSON protocols name the operation in `X-Amz-Target`. */
export const DYNAMODB_TARGET = 'DynamoDB_20120810.';
export const STREAMS_TARGET = 'DynamoDBStreams_20120810.';

export const isDynamoDbTarget = (target: string) =>
  target.startsWith(DYNAMODB_TARGET) || target.startsWith(STREAMS_TARGET);

/** An answer on the wire: status and JSON text. */
export interface WireAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * Serves one call of the JSON protocol: parses the body, runs the operation
 * and answers as DynamoDB does (errors with their `__type`, never a stack
 * trace; a body that is not JSON is a `SerializationException`).
 */
export function answer(engine: DynamoDbEngine, operation: string, body: string): WireAnswer {
  const input = parseBody(body);
  if (input instanceof DynamoDbError) return failure(input);
  return run(engine, operation, input);
}

/** A request body's JSON, or the error DynamoDB answers a malformed one with. */
export function parseBody(body: string): unknown {
  try {
    return body.length === 0 ? {} : JSON.parse(body);
  } catch {
    return new DynamoDbError('SerializationException', 'Malformed JSON in the request body');
  }
}

/** Runs a parsed request on the engine and answers as DynamoDB does. */
export function run(engine: DynamoDbEngine, operation: string, input: unknown): WireAnswer {
  try {
    return { status: 200, body: JSON.stringify(engine.handle(operation, input as Record<string, unknown>)) };
  } catch (error) {
    if (error instanceof DynamoDbError) return failure(error);
    // A fault of the engine's own: answered as DynamoDB answers its own faults, and shown.
    console.error(`[dynamodb] ${operation} failed:`, error);
    return failure(new DynamoDbError('InternalServerError', (error as Error).message, {}, 500));
  }
}

export const failure = (error: DynamoDbError): WireAnswer => ({
  status: error.status,
  body: JSON.stringify(error.body),
});

/** The operation named by a request's target, or undefined if it is not DynamoDB's. */
export function operationOf(target: string): string | undefined {
  return isDynamoDbTarget(target) ? target.slice(target.indexOf('.') + 1) : undefined;
}

export function send(res: ServerResponse, { status, body }: WireAnswer) {
  res.writeHead(status, { 'content-type': JSON_1_0, 'content-length': Buffer.byteLength(body) }).end(body);
}

/**
 * The engine on its own HTTP port on 127.0.0.1, for clients that want a
 * DynamoDB endpoint and nothing else (the conformance suite, the
 * benchmarks). The local cloud serves the engine on its AWS endpoint instead.
 */
export async function serveDynamoDb(
  engine: DynamoDbEngine,
  port = 0,
): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const operation = operationOf(String(req.headers['x-amz-target'] ?? ''));
      if (!operation) {
        send(res, failure(new DynamoDbError('UnknownOperationException', 'Unknown operation')));
        return;
      }
      send(res, answer(engine, operation, Buffer.concat(chunks).toString('utf8')));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
