import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WRITE_OPERATIONS } from './capacity';
import type { DynamoDbEngine } from './dynamodb/engine';
import { DynamoDbError } from './dynamodb/errors';
import { failure, operationOf, parseBody, run, send, type WireAnswer } from './dynamodb/server';
import { accessKeyOf } from './iam-actions';

/**
 * The local AWS endpoint (the functions' and every other client's
 * AWS_ENDPOINT_URL). AWS's JSON protocols name the operation in
 * `X-Amz-Target`: DynamoDB and DynamoDB Streams calls are run by the engine
 * in this process (local/dynamodb), after the caller's checks; other services
 * are served by the local implementations registered here. An operation
 * nobody serves is answered with an error, never forwarded to AWS. The
 * caller is known by the access key it signs with: each function has its own.
 */
export type ServiceHandler = (operation: string, input: Record<string, unknown>) => Promise<unknown>;

/**
 * Checks a call before it is served (IAM enforced locally): `caller` is the
 * SigV4 access key the request was signed with (each function's sandbox has
 * its own); throws the error to answer with (e.g. AccessDeniedException).
 */
export type CallAuthorizer = (
  caller: string | undefined,
  prefix: string,
  operation: string,
  input: Record<string, unknown>,
) => void;

/** A path's answer: `body` is sent as JSON, or as it is when it is `text` (with its own content-type). */
export type PathHandler = (
  match: RegExpExecArray,
  body: Buffer,
  query: URLSearchParams,
) => Promise<{ status: number; body: unknown; headers?: Record<string, string>; text?: boolean }>;

interface PathRoute {
  readonly method: string;
  readonly path: RegExp;
  readonly handler: PathHandler;
}

/** A successful DynamoDB write: who made it (the access key), the operation and its input. */
export type WriteObserver = (
  caller: string | undefined,
  operation: string,
  input: Record<string, unknown>,
) => void;

/**
 * A write to run and then lose the answer to (a fault injected): once the
 * engine has made it, the caller gets DynamoDB's `500 InternalServerError`,
 * or its connection is reset, instead of the answer; `lost` is told each
 * time an answer is lost. A write the engine refuses is answered as it is.
 */
export interface LoseTheAnswer {
  readonly loseAnswer: 'InternalServerError' | 'ConnectionReset';
  readonly lost: () => void;
}

/**
 * Looks at a DynamoDB call before the engine runs it: the answer to give
 * instead (IAM's denial, a fault injected), the answer to lose after it
 * runs, or undefined to run it.
 */
export type DynamoGate = (
  caller: string | undefined,
  operation: string,
  input: Record<string, unknown>,
) => WireAnswer | LoseTheAnswer | undefined;

/** DynamoDB's answer to a call that failed inside the service (the SDK retries it). */
const INTERNAL_SERVER_ERROR: WireAnswer = {
  status: 500,
  body: JSON.stringify({
    __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
    message: 'Internal server error',
  }),
};

export class AwsEndpoint {
  private server?: Server;
  private readonly services = new Map<string, ServiceHandler>();
  private readonly writeObservers: WriteObserver[] = [];
  private readonly routes: PathRoute[] = [];
  private dynamoGate?: DynamoGate;
  private authorizer?: CallAuthorizer;
  port = 0;

  constructor(private readonly engine: DynamoDbEngine) {}

  /** Serves every operation whose target starts with `prefix` (e.g. `AWSEvents.`). */
  register(prefix: string, handler: ServiceHandler) {
    this.services.set(prefix, handler);
  }

  /** Checks every call to a registered service before it is served (see CallAuthorizer). */
  authorize(authorizer: CallAuthorizer) {
    this.authorizer = authorizer;
  }

  /** A GET path answering the local cloud's own state (wiring, counters) as JSON. */
  serveAdmin(path: string, answer: () => unknown) {
    this.servePath('GET', new RegExp(`^${path}$`), async () => ({ status: 200, body: await answer() }));
  }

  /** Serves a REST-style path (Lambda's Invoke, the local admin calls) outside the JSON protocols. */
  servePath(method: string, path: RegExp, handler: PathHandler) {
    this.routes.push({ method, path, handler });
  }

  /** Checks every DynamoDB call before it runs (see DynamoGate). */
  gateDynamo(gate: DynamoGate) {
    this.dynamoGate = gate;
  }

  onWrite(observer: WriteObserver) {
    this.writeObservers.push(observer);
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = 0) {
    this.server = createServer((req, res) => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const [path = '/', search = ''] = (req.url ?? '/').split('?', 2);
        for (const route of this.routes) {
          const match = req.method === route.method ? route.path.exec(path) : null;
          if (!match) continue;
          route.handler(match, body, new URLSearchParams(search)).then(
            (r) =>
              res
                .writeHead(r.status, { 'content-type': 'application/json', ...r.headers })
                .end(r.text ? String(r.body) : JSON.stringify(r.body)),
            (error: Error) =>
              res
                .writeHead(400, { 'content-type': 'application/json' })
                .end(JSON.stringify({ message: error.message })),
          );
          return;
        }
        const dynamoOperation = operationOf(target);
        if (dynamoOperation) {
          const answer = this.serveDynamo(dynamoOperation, body, String(req.headers.authorization ?? ''));
          // The write is made; the connection is cut before its answer (the SDK sees ECONNRESET).
          if (answer === 'reset') req.socket.destroy();
          else send(res, answer);
          return;
        }
        this.serve(target, body, String(req.headers.authorization ?? '')).then(
          (output) => {
            res
              .writeHead(200, { 'content-type': 'application/x-amz-json-1.1' })
              .end(JSON.stringify(output ?? {}));
          },
          (error: Error & { code?: string; status?: number }) => {
            res
              .writeHead(error.status ?? 400, { 'content-type': 'application/x-amz-json-1.1' })
              .end(JSON.stringify({ __type: error.code ?? 'ValidationException', message: error.message }));
          },
        );
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private async serve(target: string, body: Buffer, authorization: string) {
    const dot = target.indexOf('.');
    const prefix = target.slice(0, dot + 1);
    const handler = this.services.get(prefix);
    if (!handler) {
      throw Object.assign(new Error(`${target || 'this request'} is not served by the local cloud`), {
        code: 'UnknownOperationException',
      });
    }
    const operation = target.slice(dot + 1);
    const input = body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
    this.authorizer?.(accessKeyOf(authorization), prefix, operation, input);
    return handler(operation, input);
  }

  /**
   * A DynamoDB or DynamoDB Streams call, served by the engine in this
   * process: checked first (the caller's role, faults injected for it),
   * then run; a successful write is told to the write observers.
   */
  private serveDynamo(operation: string, body: Buffer, authorization: string): WireAnswer | 'reset' {
    const input = parseBody(body.toString('utf8'));
    if (input instanceof DynamoDbError) return failure(input);
    const caller = accessKeyOf(authorization);
    const gate = this.dynamoGate?.(caller, operation, input as Record<string, unknown>);
    if (gate && !('loseAnswer' in gate)) return gate;
    const answer = run(this.engine, operation, input);
    if (answer.status === 200 && WRITE_OPERATIONS.has(operation)) {
      for (const observer of this.writeObservers)
        observer(caller, operation, input as Record<string, unknown>);
    }
    if (gate && answer.status === 200) {
      gate.lost();
      return gate.loseAnswer === 'ConnectionReset' ? 'reset' : INTERNAL_SERVER_ERROR;
    }
    return answer;
  }

  async stop() {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server!.close(resolve));
  }
}
