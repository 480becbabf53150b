// The sandbox's own way to DynamoDB Local for the functions' shared client (functions/shared/aws.ts
// takes `clientConfig` from the sandbox when it is there): an AWS SDK request handler that writes
// each call on a kept-alive socket as one HTTP/1.1 request and reads its answer whole, and a signer
// that only names the access key. On Lambda the SDK's own HTTP client and SigV4 carry the same
// calls to DynamoDB's endpoint; here DynamoDB Local checks no signature (IAM is enforced by the
// meter before a call leaves), and the two cost a sandbox CPU that the machine's other parts need
// (local/bench/dynamodb-clients.ts: 0.45–0.51 ms of a client's CPU per call through both,
// 0.29–0.34 through this). What a call asks and what it is answered do not change.
import { connect, type Socket } from 'node:net';

/** A call's answer made here, never sent: DynamoDB's status and JSON body. */
export interface LocalAnswer {
  readonly status: number;
  readonly body: unknown;
  /** Begins the answer's request id, which says who answered (`local-iam`, `local-fault`). */
  readonly requestIdPrefix: string;
}

/** One DynamoDB call as the meter sees it, whichever way it travels. */
export interface MeteredCall {
  /**
   * The answer that stops the call before it leaves, or undefined: IAM's
   * refusal first (a call the function's role does not allow), then
   * DynamoDB's own (the fault rules in force).
   */
  refusal(): LocalAnswer | undefined;
  /** The body to send: a read asks for its consumed capacity (unless the caller did). */
  outgoing(): Buffer;
  /** Counts the call once DynamoDB Local has answered it `200` with `response`. */
  succeeded(response: () => string): void;
}

/** The headers DynamoDB sends with an answer made here. */
export const localAnswerHeaders = (answer: LocalAnswer, length: number) => ({
  'content-type': 'application/x-amz-json-1.0',
  'content-length': String(length),
  'x-amzn-requestid': `${answer.requestIdPrefix}-${Date.now().toString(36)}`,
});

/** A header's value whatever the case of its name. */
export function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    if (k.toLowerCase() === name) return String(v);
  }
  return undefined;
}

/** The request the SDK hands its handler (`HttpRequest` of @smithy/types, the fields used here). */
interface SdkRequest {
  readonly protocol: string;
  readonly hostname: string;
  readonly port?: number;
  readonly method: string;
  readonly path: string;
  readonly query?: Record<string, string | string[] | null>;
  readonly headers: Record<string, string>;
  readonly body?: unknown;
}

/** The answer the SDK reads (`HttpResponse` of @smithy/types, which the SDK recognizes by shape). */
interface SdkResponse {
  readonly statusCode: number;
  readonly reason?: string;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener?(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener?(type: 'abort', listener: () => void): void;
}

/** What the functions' client takes from the sandbox: a subset of the SDK's client configuration. */
export interface DynamoTransportConfig {
  readonly requestHandler: {
    readonly metadata: { readonly handlerProtocol: 'http/1.1' };
    handle(
      request: SdkRequest,
      options?: { abortSignal?: AbortSignalLike },
    ): Promise<{ response: SdkResponse }>;
    updateHttpClientConfig(): void;
    httpHandlerConfigs(): Record<string, never>;
    destroy(): void;
  };
  readonly signer: { sign(request: SdkRequest): Promise<SdkRequest> };
}

/**
 * DynamoDB Local reads only the access key from `authorization`; the
 * function's own key is kept in it (the same as the SDK's signature names).
 */
const authorization = (accessKey: string) =>
  `AWS4-HMAC-SHA256 Credential=${accessKey}/20250101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0`;

/** A transport error the SDK retries as it retries Node's (its codes are among the transient ones). */
const connectionError = (message: string, code: string) => Object.assign(new Error(message), { code });

/** One kept-alive connection: one request at a time, its answer read whole. */
class Connection {
  /** What has come of the answer awaited, while it is incomplete. */
  private partial: Buffer | undefined;
  private waiting: { resolve: (response: SdkResponse) => void; reject: (error: Error) => void } | undefined;
  closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly idle: (connection: Connection) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => this.arrived(data));
    socket.on('error', (error) => this.close(error));
    socket.on('close', () =>
      this.close(connectionError('DynamoDB Local closed the connection', 'ECONNRESET')),
    );
  }

  send(request: Buffer): Promise<SdkResponse> {
    this.socket.ref();
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(request);
    });
  }

  close(error: Error) {
    if (!this.closed) {
      this.closed = true;
      this.socket.destroy();
    }
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(error);
  }

  private arrived(data: Buffer) {
    const all = this.partial ? Buffer.concat([this.partial, data]) : data;
    const response = parseResponse(all);
    if (response === 'incomplete') {
      this.partial = all;
      return;
    }
    this.partial = undefined;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (response instanceof Error || !waiting) {
      this.close(
        response instanceof Error ? response : connectionError('an answer nobody asked for', 'EPROTO'),
      );
      return;
    }
    if (response.headers.connection?.toLowerCase() === 'close')
      this.close(connectionError('closed', 'ECONNRESET'));
    else {
      this.socket.unref();
      this.idle(this);
    }
    waiting.resolve(response);
  }
}

/** An HTTP/1.1 answer from `data`, or 'incomplete' while more is due (its length from `content-length` or chunks). */
function parseResponse(data: Buffer): SdkResponse | 'incomplete' | Error {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd < 0) return 'incomplete';
  const lines = data.toString('latin1', 0, headEnd).split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0] ?? '');
  if (!status) return connectionError(`not an HTTP answer: ${lines[0]}`, 'EPROTO');
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const bodyStart = headEnd + 4;
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    let at = bodyStart;
    for (;;) {
      const sizeEnd = data.indexOf('\r\n', at);
      if (sizeEnd < 0) return 'incomplete';
      const size = Number.parseInt(data.toString('latin1', at, sizeEnd), 16);
      if (!Number.isFinite(size)) return connectionError('a malformed chunk', 'EPROTO');
      if (data.length < sizeEnd + 2 + size + 2) return 'incomplete';
      if (size === 0) break;
      parts.push(data.subarray(sizeEnd + 2, sizeEnd + 2 + size));
      at = sizeEnd + 2 + size + 2;
    }
    delete headers['transfer-encoding'];
    const body = Buffer.concat(parts);
    headers['content-length'] = String(body.length);
    return { statusCode: Number(status[1]), reason: status[2], headers, body };
  }
  const length = Number(headers['content-length'] ?? 0);
  if (!Number.isSafeInteger(length) || length < 0)
    return connectionError('a malformed content-length', 'EPROTO');
  if (data.length < bodyStart + length) return 'incomplete';
  return {
    statusCode: Number(status[1]),
    reason: status[2],
    headers,
    // A view: one request at a time on a connection, so nothing else is in this buffer.
    body: data.subarray(bodyStart, bodyStart + length),
  };
}

/** The request line, headers and body as one buffer: one socket write per call. */
function encodeRequest(request: SdkRequest, body: Buffer): Buffer {
  const query = Object.entries(request.query ?? {}).flatMap(([key, value]) =>
    (Array.isArray(value) ? value : [value]).map((v) =>
      v === null ? encodeURIComponent(key) : `${encodeURIComponent(key)}=${encodeURIComponent(v)}`,
    ),
  );
  let head = `${request.method} ${request.path || '/'}${query.length > 0 ? `?${query.join('&')}` : ''} HTTP/1.1\r\n`;
  let host = false;
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'transfer-encoding') continue;
    if (lower === 'host') host = true;
    head += `${name}: ${value}\r\n`;
  }
  if (!host) head += `host: ${request.hostname}${request.port ? `:${request.port}` : ''}\r\n`;
  head += `content-length: ${body.length}\r\n\r\n`;
  const headBytes = Buffer.from(head, 'latin1');
  return Buffer.concat([headBytes, body], headBytes.length + body.length);
}

const bodyOf = (body: unknown): Buffer =>
  body === undefined || body === null
    ? Buffer.alloc(0)
    : typeof body === 'string'
      ? Buffer.from(body, 'utf8')
      : body instanceof Uint8Array
        ? Buffer.from(body.buffer, body.byteOffset, body.byteLength)
        : Buffer.from(String(body), 'utf8');

/**
 * The transport: a call to DynamoDB Local's `port` is first put to the meter
 * (`call`), which may answer it here (IAM, fault rules) or change its body (a
 * read's consumed capacity), and counts it once answered. Connections are
 * kept per host and port, newest idle first; a sandbox runs one invocation
 * at a time, so it holds as many as that invocation had calls in flight.
 */
export function dynamoTransport(options: {
  readonly port: number;
  readonly call: (target: string | undefined, body: Buffer) => MeteredCall | undefined;
}): DynamoTransportConfig {
  const idle = new Map<string, Connection[]>();
  const take = (host: string, port: number) => {
    const key = `${host}:${port}`;
    const free = idle.get(key) ?? [];
    idle.set(key, free);
    for (let connection = free.pop(); connection; connection = free.pop())
      if (!connection.closed) return connection;
    return new Connection(connect(port, host), (connection) => free.push(connection));
  };

  return {
    requestHandler: {
      metadata: { handlerProtocol: 'http/1.1' },
      async handle(request, handlerOptions) {
        const signal = handlerOptions?.abortSignal;
        if (signal?.aborted) throw Object.assign(new Error('Request aborted'), { name: 'AbortError' });
        // The local cloud's endpoints are plain HTTP on 127.0.0.1; anything else is not this transport's.
        if (request.protocol !== 'http:')
          throw new Error(`the sandbox's DynamoDB transport speaks HTTP only, not ${request.protocol}`);
        const port = request.port ?? 80;
        const body = bodyOf(request.body);
        const call =
          port === options.port ? options.call(header(request.headers, 'x-amz-target'), body) : undefined;
        const refusal = call?.refusal();
        if (refusal) {
          const payload = Buffer.from(JSON.stringify(refusal.body));
          return {
            response: {
              statusCode: refusal.status,
              reason: 'Bad Request',
              headers: localAnswerHeaders(refusal, payload.length),
              body: new Uint8Array(payload),
            },
          };
        }
        const connection = take(request.hostname, port);
        const onAbort = () =>
          connection.close(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
        signal?.addEventListener?.('abort', onAbort, { once: true });
        try {
          const response = await connection.send(encodeRequest(request, call ? call.outgoing() : body));
          if (call && response.statusCode === 200)
            call.succeeded(() =>
              Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength).toString(
                'utf8',
              ),
            );
          return { response };
        } finally {
          signal?.removeEventListener?.('abort', onAbort);
        }
      },
      updateHttpClientConfig() {},
      httpHandlerConfigs: () => ({}),
      destroy() {
        for (const free of idle.values())
          for (const connection of free.splice(0)) connection.close(new Error('closed'));
      },
    },
    signer: {
      async sign(request) {
        const accessKey = process.env.AWS_ACCESS_KEY_ID ?? 'local';
        request.headers.authorization = authorization(accessKey);
        return request;
      },
    },
  };
}
