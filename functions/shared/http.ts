import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyEventV2WithJWTAuthorizer,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { type Caller, callerOf } from './caller';
import { ClientError, isCapacityRefusal, throttled, validationError } from './errors';
import { logger, startInvocation } from './powertools';
import type { Routes } from './seams';
import * as z from './zod';

export const MAX_BODY_BYTES = 64 * 1024;

export type HttpResult = APIGatewayProxyStructuredResultV2 & { statusCode: number; body: string };

export interface HttpRequest {
  readonly routeKey: string;
  readonly path: string;
  readonly pathParameters: Readonly<Record<string, string | undefined>>;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The parsed JSON body; undefined when there was none. */
  readonly body: unknown;
  readonly correlationId: string;
  /** Who is calling, from the JWT authorizer's claims (a public route's is `ANONYMOUS`). */
  readonly caller: Caller;
  readonly now: Date;
  /** When API Gateway received the request (`requestContext.timeEpoch`); before `now` by the time it took to get here. */
  readonly receivedAt: Date;
  readonly context: Context;
}

export type RouteHandler = (request: HttpRequest) => Promise<HttpResult>;

export const json = (
  statusCode: number,
  payload: unknown,
  headers: Record<string, string> = {},
): HttpResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(payload),
});

/** The caller of a route with no authorizer (the documentation): nobody, and no admin. */
export const ANONYMOUS: Caller = { sub: '', isAdmin: false };

/**
 * API Gateway's own answer to a request without a valid token. A function
 * sees such a request only when it was invoked without the authorizer (a
 * misconfiguration): it answers as the gateway would, and does nothing.
 */
const UNAUTHORIZED: HttpResult = json(401, { message: 'Unauthorized' });

/** Seconds a client waits before it sends a refused (`429`) request again. */
const RETRY_AFTER_SECONDS = 1;

export const errorResult = (error: ClientError): HttpResult =>
  json(
    error.status,
    { error: { code: error.code, message: error.message, details: error.details } },
    error.status === 429 ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : {},
  );

/** Parses `input` with `schema`, or throws a 400 naming every offending field. */
export function validate<T>(schema: z.ZodMiniType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw validationError(
    'the request is not valid',
    parsed.error.issues.flatMap((issue) =>
      // One detail per unknown field, named by its full path (`items.0.price`), not by its parent's.
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ field: [...issue.path, key].join('.'), message: 'unknown field' }))
        : [{ field: issue.path.length > 0 ? issue.path.join('.') : '(body)', message: issue.message }],
    ),
  );
}

function readBody(event: APIGatewayProxyEventV2): unknown {
  if (event.body === undefined || event.body === null || event.body === '') return undefined;
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (raw.length > MAX_BODY_BYTES) {
    throw new ClientError(
      413,
      'PAYLOAD_TOO_LARGE',
      `the body is ${raw.length} bytes; at most ${MAX_BODY_BYTES}`,
    );
  }
  const contentType = (event.headers?.['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'application/json' && !contentType.endsWith('+json')) {
    throw new ClientError(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      'the body must be JSON (content-type: application/json)',
    );
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw validationError('the body is not valid JSON', [{ field: '(body)', message: 'malformed JSON' }]);
  }
}

/**
 * The HTTP edge of a service: routes an API Gateway v2 event by its route key,
 * parses and bounds the body, and answers every failure in the contract's
 * error shape. Only a fault of ours becomes a 5xx, logged with its stack.
 *
 * `routes` are the module's route keys by name (its seams.ts, which its
 * construct routes to this function too); `handlers` has one function per
 * name, no more, no less. The handler carries its `routeKeys`, which a test
 * compares with the template's routes to this function.
 */
export function httpHandler<R extends Routes>(
  routes: R,
  handlers: { readonly [K in keyof R]: RouteHandler },
  /** `anonymous`: the module's routes have no authorizer (functions/docs); otherwise every request names its caller. */
  { anonymous = false }: { readonly anonymous?: boolean } = {},
) {
  const byRouteKey = new Map<string, RouteHandler>(
    Object.entries(routes).map(([name, routeKey]) => [routeKey, handlers[name as keyof R]]),
  );
  const handle = async (event: APIGatewayProxyEventV2, context: Context): Promise<HttpResult> => {
    startInvocation(context);
    const correlationId =
      event.headers?.['x-correlation-id'] || event.requestContext?.requestId || context.awsRequestId;
    logger.appendKeys({ correlationId, route: event.routeKey });
    // One line per request (its canonical log line): `npm run logs -- --correlation-id` follows a
    // request by it through every function, and the line carries the invocation's Lambda context.
    const withCorrelation = (result: HttpResult): HttpResult => {
      logger.info('answered', { status: result.statusCode });
      return { ...result, headers: { ...result.headers, 'x-correlation-id': correlationId } };
    };
    try {
      const route = byRouteKey.get(event.routeKey);
      if (!route) throw new ClientError(404, 'NOT_FOUND', `no route ${event.routeKey}`);
      const caller = anonymous ? ANONYMOUS : callerOf(event as APIGatewayProxyEventV2WithJWTAuthorizer);
      if (!caller) return withCorrelation(UNAUTHORIZED);
      const now = new Date();
      const request: HttpRequest = {
        routeKey: event.routeKey,
        path: event.rawPath,
        pathParameters: event.pathParameters ?? {},
        headers: event.headers ?? {},
        body: readBody(event),
        correlationId,
        caller,
        now,
        receivedAt: new Date(Math.min(event.requestContext?.timeEpoch ?? now.getTime(), now.getTime())),
        context,
      };
      return withCorrelation(await route(request));
    } catch (error) {
      if (error instanceof ClientError) return withCorrelation(errorResult(error));
      if (isCapacityRefusal(error)) {
        logger.warn('request refused for capacity', error as Error);
        return withCorrelation(errorResult(throttled('the platform is busy; send the request again')));
      }
      logger.error('request failed', error as Error);
      return withCorrelation(
        json(500, {
          error: { code: 'INTERNAL_ERROR', message: 'the request could not be completed', details: [] },
        }),
      );
    } finally {
      logger.removeKeys(['correlationId', 'route']);
    }
  };
  return Object.assign(handle, { routeKeys: [...byRouteKey.keys()] as readonly string[] });
}

/** Routes with a JSON body reject an empty one the same way as a wrong one. */
export const requireBody = (request: HttpRequest): unknown => {
  if (request.body === undefined) {
    throw validationError('a JSON body is required', [{ field: '(body)', message: 'missing' }]);
  }
  return request.body;
};
