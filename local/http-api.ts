import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AdmissionControl, Refusal } from './admission';
import { ACCOUNT, type Assembly, type Resolve, resourcesOfType } from './assembly';
import {
  authorizeRequest,
  type JwtAuthorizerSpec,
  type JwtContext,
  type JwtExpectation,
  jwtAuthorizers,
  type RouteAuthorization,
  routeAuthorization,
} from './auth';
import { FunctionError, type LambdaRuntime, QueueWaitExceeded, THROTTLED_ERROR } from './lambda/runtime';
import { type ThrottleLimit, TokenBucket } from './throttle';

export interface RouteSpec {
  readonly logicalId: string;
  readonly routeKey: string;
  readonly method: string;
  readonly functionId: string;
  readonly matcher: RegExp;
  readonly parameterNames: readonly string[];
  readonly literalSegments: number;
  /** The stage's throttle for this route, if it has one. */
  readonly throttle?: ThrottleLimit;
  /** Who may call it: its AuthorizationType, authorizer and scopes, from the template. */
  readonly authorization: RouteAuthorization;
}

/** API Gateway's own limit on an HTTP API request body. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** Reads each AWS::ApiGatewayV2::Route, the Lambda its integration targets and its authorization. */
export function routeSpecs(
  assembly: Assembly,
  resolve: Resolve,
  runtime: LambdaRuntime,
  throttleOf: (routeKey: string) => ThrottleLimit | undefined = () => undefined,
): RouteSpec[] {
  const { Resources } = assembly.template;
  const authorizers = jwtAuthorizers(assembly, resolve);
  return resourcesOfType(assembly.template, 'AWS::ApiGatewayV2::Route').map(([logicalId, r]) => {
    const p = r.Properties ?? {};
    const routeKey = String(p.RouteKey);
    const target = p.Target as { 'Fn::Join'?: [string, unknown[]] } | undefined;
    const integrationRef = target?.['Fn::Join']?.[1]?.find((part) => typeof part === 'object') as
      | { Ref: string }
      | undefined;
    const integration = integrationRef && Resources[integrationRef.Ref];
    if (integration?.Type !== 'AWS::ApiGatewayV2::Integration') {
      throw new Error(`route ${routeKey} has no Lambda integration`);
    }
    const ip = integration.Properties ?? {};
    if (ip.IntegrationType !== 'AWS_PROXY' || ip.PayloadFormatVersion !== '2.0') {
      throw new Error(`route ${routeKey}: only AWS_PROXY integrations with payload 2.0 run locally`);
    }
    const functionId = runtime.functionIdOf(String(resolve(ip.IntegrationUri)));
    const throttle = throttleOf(routeKey);
    const [method, path = ''] = routeKey === '$default' ? ['ANY', '/{proxy+}'] : routeKey.split(' ');
    const parameterNames: string[] = [];
    const segments = path.split('/').filter(Boolean);
    const pattern = segments
      .map((segment) => {
        const param = /^\{(.+?)(\+)?\}$/.exec(segment);
        if (!param) return `/${segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
        parameterNames.push(param[1]!);
        return param[2] ? '/(.+)' : '/([^/]+)';
      })
      .join('');
    return {
      logicalId,
      routeKey,
      method: method!,
      functionId,
      matcher: new RegExp(`^${pattern || '/'}$`),
      parameterNames,
      literalSegments: segments.filter((s) => !s.startsWith('{')).length,
      ...(throttle ? { throttle } : {}),
      authorization: routeAuthorization(routeKey, p, authorizers),
    };
  });
}

/** API Gateway passes a segment it cannot percent-decode through as it came. */
function decodePath(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export interface RequestRecord {
  readonly routeKey: string;
  readonly status: number;
  readonly durationMs: number;
  /** Set when admission control refused the request (it was answered 429 without an invocation). */
  readonly refused?: Refusal;
}

/** The keys a JWT authorizer trusts for its issuer (locally: the local issuer's, see local/auth). */
export type KeysOf = (authorizer: JwtAuthorizerSpec) => JwtExpectation['keys'];

/**
 * The HTTP API on 127.0.0.1: matches a request to a route as API Gateway
 * does (most literal segments first), checks its token as the route's JWT
 * authorizer does (a 401 or 403 before any function runs), invokes the
 * route's function with an API Gateway v2 (payload 2.0) event, and maps its
 * result back to HTTP.
 */
export class LocalHttpApi {
  private server?: Server;
  private readonly routes: RouteSpec[];
  private readonly listeners: ((record: RequestRecord) => void)[] = [];
  private readonly buckets = new Map<string, TokenBucket>();
  port = 0;

  constructor(
    routes: readonly RouteSpec[],
    private readonly runtime: LambdaRuntime,
    private readonly log: (message: string) => void,
    private readonly admission?: AdmissionControl,
    /** No keys: every token is refused (a JWT route answers 401). */
    private readonly keysOf: KeysOf = () => new Map(),
  ) {
    this.routes = [...routes].sort((a, b) => b.literalSegments - a.literalSegments);
    for (const route of routes) {
      if (route.throttle) this.buckets.set(route.routeKey, new TokenBucket(route.throttle));
    }
  }

  get routeKeys(): string[] {
    return this.routes.map((r) => r.routeKey);
  }

  onRequest(listener: (record: RequestRecord) => void) {
    this.listeners.push(listener);
  }

  async start(port: number) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: Error) => {
        this.log(`request failed in the local API: ${error.stack ?? error.message}`);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'Internal Server Error' }));
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  private match(method: string, path: string) {
    for (const route of this.routes) {
      if (route.method !== 'ANY' && route.method !== method) continue;
      const m = route.matcher.exec(path);
      if (!m) continue;
      const pathParameters = Object.fromEntries(
        route.parameterNames.map((name, i) => [name, decodePath(m[i + 1]!)]),
      );
      return { route, pathParameters };
    }
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_REQUEST_BYTES) {
        return this.reply(res, started, 'TOO_LARGE', 413, { message: 'Request Entity Too Large' });
      }
      chunks.push(chunk as Buffer);
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const found = this.match(method, url.pathname);
    if (!found) return this.reply(res, started, 'NOT_FOUND', 404, { message: 'Not Found' });
    const { route, pathParameters } = found;
    // The authorizer answers before anything else runs (the throttle counts only what it let through).
    const authorization = authorizeRequest(route.authorization, req.headers, this.keysOf);
    if ('refusal' in authorization) {
      const { status, body, headers } = authorization.refusal;
      return this.reply(res, started, route.routeKey, status, body, undefined, headers);
    }
    if (this.buckets.get(route.routeKey)?.take() === false) {
      return this.throttled(
        res,
        started,
        route.routeKey,
        `Too many requests: the stage's limit for ${route.routeKey} was reached`,
      );
    }
    const refusal = this.admission?.check(route);
    if (refusal) {
      const what =
        refusal === 'saga'
          ? 'the sagas already running would not finish in time'
          : `${route.routeKey} has more queued than it can serve in time`;
      return this.throttled(
        res,
        started,
        route.routeKey,
        `Too many requests: the local cloud is overloaded (${what})`,
        refusal,
      );
    }
    const event = this.eventFor(
      req,
      url,
      Buffer.concat(chunks),
      route,
      pathParameters,
      authorization.context,
    );
    let result: unknown;
    try {
      const admission = this.admission;
      result = admission
        ? await admission.admitted(route, (sagaStarted) =>
            // A request that pauses waits for its saga, which it has started (see AdmissionControl.admitted).
            // Admitted on an estimate, it waits for a sandbox only as long as admission allows: when the
            // estimate proves wrong (other work took the CPU the sandboxes share), it is refused unrun then,
            // instead of waiting past the client's patience.
            this.runtime.invoke(route.functionId, event, {
              onPause: sagaStarted,
              maxQueueWaitMs: admission.settings.maxQueueWaitMs,
            }),
          )
        : await this.runtime.invoke(route.functionId, event);
    } catch (error) {
      const e = error as Error;
      if (e instanceof QueueWaitExceeded) {
        return this.throttled(
          res,
          started,
          route.routeKey,
          `Too many requests: the local cloud is overloaded (${route.routeKey} waited its bound for a sandbox and did not run)`,
          'queue',
        );
      }
      if (e instanceof FunctionError && e.errorType === THROTTLED_ERROR) {
        return this.throttled(
          res,
          started,
          route.routeKey,
          "Too many requests: the function's reserved concurrency was reached",
        );
      }
      this.log(
        `${route.routeKey}: ${e instanceof FunctionError ? `${e.errorType}: ${e.message}` : e.message}`,
      );
      return this.reply(res, started, route.routeKey, 500, { message: 'Internal Server Error' });
    }
    this.send(res, started, route.routeKey, result);
  }

  /**
   * A refusal for load, in the contract's error shape. (API Gateway's own
   * throttle answers 429 with `{"message":"Too Many Requests"}`; the status is
   * what a client should act on.)
   */
  private throttled(
    res: ServerResponse,
    started: number,
    routeKey: string,
    reason: string,
    refused?: Refusal,
  ) {
    res.setHeader('retry-after', '1');
    return this.reply(
      res,
      started,
      routeKey,
      429,
      { error: { code: 'THROTTLED', message: `${reason}; retry later`, details: [] } },
      refused,
    );
  }

  private eventFor(
    req: IncomingMessage,
    url: URL,
    body: Buffer,
    route: RouteSpec,
    pathParameters: Record<string, string>,
    authorizer: JwtContext | undefined,
  ) {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && name !== 'cookie')
        headers[name] = Array.isArray(value) ? value.join(',') : value;
    }
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = k in query ? `${query[k]},${v}` : v;
    const contentType = headers['content-type'] ?? '';
    const textual = /^(text\/|application\/(json|xml|x-www-form-urlencoded|[\w.+-]+\+json))/.test(
      contentType,
    );
    const now = new Date();
    return {
      version: '2.0',
      routeKey: route.routeKey,
      rawPath: url.pathname,
      rawQueryString: url.search.slice(1),
      ...(req.headers.cookie ? { cookies: req.headers.cookie.split('; ') } : {}),
      headers,
      ...(url.search ? { queryStringParameters: query } : {}),
      requestContext: {
        accountId: ACCOUNT,
        apiId: 'local',
        ...(authorizer ? { authorizer } : {}),
        domainName: headers.host ?? '127.0.0.1',
        domainPrefix: 'local',
        http: {
          method: req.method,
          path: url.pathname,
          protocol: `HTTP/${req.httpVersion}`,
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          userAgent: headers['user-agent'] ?? '',
        },
        requestId: randomUUID(),
        routeKey: route.routeKey,
        stage: '$default',
        time: now.toISOString(),
        timeEpoch: now.getTime(),
      },
      ...(Object.keys(pathParameters).length ? { pathParameters } : {}),
      ...(body.length ? { body: textual ? body.toString('utf8') : body.toString('base64') } : {}),
      isBase64Encoded: body.length > 0 && !textual,
    };
  }

  /** Maps a payload 2.0 result as API Gateway does, including a bare value meaning 200 JSON. */
  private send(res: ServerResponse, started: number, routeKey: string, result: unknown) {
    const structured =
      result !== null && typeof result === 'object' && 'statusCode' in (result as Record<string, unknown>);
    if (!structured) return this.reply(res, started, routeKey, 200, result);
    const r = result as {
      statusCode: number;
      headers?: Record<string, string>;
      body?: string;
      isBase64Encoded?: boolean;
      cookies?: string[];
    };
    const body =
      r.body === undefined ? Buffer.alloc(0) : Buffer.from(r.body, r.isBase64Encoded ? 'base64' : 'utf8');
    res.writeHead(r.statusCode, {
      ...(r.headers ?? {}),
      ...(r.cookies ? { 'set-cookie': r.cookies } : {}),
      'content-length': body.length,
    });
    res.end(body);
    this.record(routeKey, r.statusCode, started);
  }

  private reply(
    res: ServerResponse,
    started: number,
    routeKey: string,
    status: number,
    payload: unknown,
    refused?: Refusal,
    headers: Record<string, string> = {},
  ) {
    const body = Buffer.from(JSON.stringify(payload));
    res
      .writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': body.length })
      .end(body);
    this.record(routeKey, status, started, refused);
  }

  private record(routeKey: string, status: number, started: number, refused?: Refusal) {
    const record = {
      routeKey,
      status,
      durationMs: performance.now() - started,
      ...(refused ? { refused } : {}),
    };
    for (const listener of this.listeners) listener(record);
  }

  async stop() {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server!.close(resolve));
  }
}
