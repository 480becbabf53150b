import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  askForConsumedCapacity,
  consumedReadUnits,
  READ_OPERATIONS,
  tablesWritten,
  WRITE_OPERATIONS,
} from './capacity';
import { accessKeyOf } from './iam-actions';

/**
 * The local AWS endpoint (the functions' AWS_ENDPOINT_URL). AWS's JSON
 * protocols name the operation in `X-Amz-Target`: DynamoDB and DynamoDB
 * Streams calls are passed to DynamoDB Local untouched (and observed for the
 * counters and to wake the stream pollers at once) — for clients outside the
 * sandboxes (tests, the load tools): the functions call DynamoDB Local
 * directly (AWS_ENDPOINT_URL_DYNAMODB) and meter their own calls; other
 * services are served by the local implementations registered here. An
 * operation nobody serves is answered with an error, never forwarded to AWS.
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

export type WriteObserver = (
  tableNames: readonly string[],
  operation: string,
  input: Record<string, unknown>,
) => void;

/** A successful read: the read units it consumed per table (as DynamoDB reports them). */
export type ReadObserver = (unitsByTable: ReadonlyMap<string, number>, operation: string) => void;

export class AwsEndpoint {
  private server?: Server;
  private readonly services = new Map<string, ServiceHandler>();
  private readonly writeObservers: WriteObserver[] = [];
  private readonly readObservers: ReadObserver[] = [];
  private readonly routes: PathRoute[] = [];
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  private authorizer?: CallAuthorizer;
  port = 0;

  constructor(private readonly dynamoPort: number) {}

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

  /** Observes every successful DynamoDB read (units per table and operation), for the counters. */
  onRead(observer: ReadObserver) {
    this.readObservers.push(observer);
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
        if (target.startsWith('DynamoDB_20120810.') || target.startsWith('DynamoDBStreams_20120810.')) {
          const operation = target.slice(target.indexOf('.') + 1);
          const isRead = target.startsWith('DynamoDB_') && READ_OPERATIONS.has(operation);
          // Reads are asked for their consumed capacity, so the counters bill them as AWS would.
          const forwarded = isRead ? askForConsumedCapacity(body) : body;
          this.forwardToDynamo(req, forwarded, (status, headers, payload) => {
            res.writeHead(status, headers).end(payload);
            if (status !== 200) return;
            if (WRITE_OPERATIONS.has(operation)) this.notifyWrite(operation, body);
            else if (isRead) this.notifyRead(operation, payload);
          });
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

  private forwardToDynamo(
    req: IncomingMessage,
    body: Buffer,
    reply: (status: number, headers: Record<string, string>, payload: Buffer) => void,
  ) {
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: this.dynamoPort,
        method: req.method,
        path: req.url,
        headers: {
          ...req.headers,
          host: `127.0.0.1:${this.dynamoPort}`,
          'content-length': String(body.length),
        },
        agent: this.agent,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(response.headers)) {
            if (v !== undefined && k !== 'transfer-encoding' && k !== 'connection') headers[k] = String(v);
          }
          reply(response.statusCode ?? 500, headers, Buffer.concat(chunks));
        });
      },
    );
    upstream.on('error', (error) => {
      reply(
        500,
        { 'content-type': 'application/x-amz-json-1.0' },
        Buffer.from(JSON.stringify({ __type: 'InternalServerError', message: error.message })),
      );
    });
    upstream.end(body);
  }

  private notifyRead(operation: string, response: Buffer) {
    if (this.readObservers.length === 0) return;
    const units = consumedReadUnits(response.toString('utf8'));
    for (const observer of this.readObservers) observer(units, operation);
  }

  private notifyWrite(operation: string, body: Buffer) {
    if (this.writeObservers.length === 0) return;
    const input = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    const tables = tablesWritten(operation, input);
    for (const observer of this.writeObservers) observer(tables, operation, input);
  }

  async stop() {
    this.agent.destroy();
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server!.close(resolve));
  }
}
