/**
 * The HTTP contract's shared answers and the shape of an operation: the
 * error bodies, the answers every route gives, and how a module describes
 * its operations for the OpenAPI document (functions/docs/openapi.ts). Only
 * the document's generator and the tests load these: a handler's bundle
 * carries its module's request schemas (requests.ts) alone. No AWS import here.
 */

import { responseSchema } from './schemas';
import type { RouteAccess } from './seams';
import * as z from './zod';

// ---- errors ------------------------------------------------------------------------------------

const errorShape = <Code extends string, Detail extends z.ZodMiniType>(code: Code, detail: Detail) =>
  z.strictObject({
    error: z.strictObject({
      code: z.literal(code),
      message: z.string(),
      details: z.array(detail),
    }),
  });

const noDetail = z.never();

export const ValidationError = responseSchema(
  errorShape(
    'VALIDATION_ERROR',
    z.strictObject({
      field: z.string().check(z.meta({ description: 'the field’s path (`items.0.quantity`), or `(body)`' })),
      message: z.optional(z.string()),
    }),
  ),
  {
    id: 'ValidationError',
    description:
      'Malformed JSON, a missing or wrong-typed field, an out-of-range value, an unknown field, or a bad header: `details` names each.',
    examples: [
      {
        error: {
          code: 'VALIDATION_ERROR',
          message: 'the request is not valid',
          details: [{ field: 'quantity', message: 'Too big: expected number to be <=1000' }],
        },
      },
    ],
  },
);

export const NotFoundError = responseSchema(
  errorShape(
    'NOT_FOUND',
    z.strictObject({
      field: z.string().check(z.meta({ description: 'what was not found, or the field that named it' })),
      id: z.string(),
    }),
  ),
  {
    id: 'NotFoundError',
    description: 'An unknown id (on `POST /orders`, each unknown customer or product the body names).',
    examples: [
      {
        error: {
          code: 'NOT_FOUND',
          message: `customer cus_${'0'.repeat(32)} was not found`,
          details: [{ field: 'customer', id: `cus_${'0'.repeat(32)}` }],
        },
      },
    ],
  },
);

export const InsufficientStockError = responseSchema(
  errorShape(
    'INSUFFICIENT_STOCK',
    z.strictObject({
      productId: z.string(),
      requested: z.number().check(z.int()),
      available: z.number().check(z.int()),
    }),
  ),
  {
    id: 'InsufficientStockError',
    description: 'The reservation asks for more than is available; nothing was reserved.',
    examples: [
      {
        error: {
          code: 'INSUFFICIENT_STOCK',
          message: `product prd_${'0'.repeat(32)} has 2 available, 3 requested`,
          details: [{ productId: `prd_${'0'.repeat(32)}`, requested: 3, available: 2 }],
        },
      },
    ],
  },
);

export const ForbiddenError = responseSchema(
  errorShape('FORBIDDEN', z.strictObject({ field: z.string(), message: z.optional(z.string()) })),
  {
    id: 'ForbiddenError',
    description: 'The caller may not do this: `details` names each field only an admin may set.',
    examples: [
      {
        error: {
          code: 'FORBIDDEN',
          message: 'only an admin may set these fields',
          details: [{ field: 'creditLimitCents', message: 'admin only' }],
        },
      },
    ],
  },
);

export const CustomerExistsError = responseSchema(errorShape('CUSTOMER_EXISTS', noDetail), {
  id: 'CustomerExistsError',
  description: 'The `sub` has a customer record already (one per `sub`); nothing was registered.',
});

export const HoldLimitReachedError = responseSchema(
  errorShape(
    'HOLD_LIMIT_REACHED',
    z.strictObject({
      productId: z.string(),
      requested: z.number().check(z.int()),
      held: z
        .number()
        .check(
          z.int(),
          z.meta({ description: 'units the caller holds of the product in live reservations' }),
        ),
      limit: z.number().check(z.int()),
    }),
  ),
  {
    id: 'HoldLimitReachedError',
    description:
      'The caller’s live reservations of this product plus this one would pass the stage’s per-caller limit; nothing was reserved. Release or let expire what it holds, or ask for less.',
    examples: [
      {
        error: {
          code: 'HOLD_LIMIT_REACHED',
          message: `the caller holds 8 of product prd_${'0'.repeat(32)}; 3 more would pass the limit of 10`,
          details: [{ productId: `prd_${'0'.repeat(32)}`, requested: 3, held: 8, limit: 10 }],
        },
      },
    ],
  },
);

export const IdempotencyKeyReusedError = responseSchema(errorShape('IDEMPOTENCY_KEY_REUSED', noDetail), {
  id: 'IdempotencyKeyReusedError',
  description: 'This `Idempotency-Key` was used with a different body; nothing was done.',
});

export const PayloadTooLargeError = responseSchema(errorShape('PAYLOAD_TOO_LARGE', noDetail), {
  id: 'PayloadTooLargeError',
  description: 'The body is over 64 KiB.',
});

export const UnsupportedMediaTypeError = responseSchema(errorShape('UNSUPPORTED_MEDIA_TYPE', noDetail), {
  id: 'UnsupportedMediaTypeError',
  description: 'A body that is not JSON (`content-type` other than `application/json` or `*+json`).',
});

export const ThrottledError = responseSchema(errorShape('THROTTLED', noDetail), {
  id: 'ThrottledError',
  description:
    'Refused before it did anything: send the same request again (same `Idempotency-Key`) after `Retry-After` seconds.',
});

export const InternalError = responseSchema(errorShape('INTERNAL_ERROR', noDetail), {
  id: 'InternalError',
  description: 'A fault of the platform (never bad input); logged with its correlation id.',
});

/** API Gateway's own answers (its throttle, its body limit, a failed integration): only a message. */
export const GatewayMessage = responseSchema(z.strictObject({ message: z.string() }), {
  id: 'GatewayMessage',
  description: 'An answer of API Gateway itself rather than of the platform’s functions; act on the status.',
  examples: [{ message: 'Too Many Requests' }],
});

// ---- operations --------------------------------------------------------------------------------

export type ResponseHeader = 'location' | 'retry-after' | 'preference-applied' | 'x-correlation-id';

export interface ResponseSpec {
  readonly description: string;
  /** The JSON body; absent for another content type (`contentType`). */
  readonly schema?: z.ZodMiniType;
  readonly contentType?: string;
  /** Headers the response always carries (x-correlation-id is on every answer of a function anyway). */
  readonly headers?: readonly ResponseHeader[];
  /** Headers it may carry. */
  readonly optionalHeaders?: readonly ResponseHeader[];
}

export interface OperationSpec {
  /** `METHOD /path` as the HTTP API's route key. */
  readonly route: string;
  readonly operationId: string;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  readonly pathParameters?: Readonly<
    Record<string, { readonly description: string; readonly prefix: string }>
  >;
  readonly body?: z.ZodMiniType;
  /** Who may call it: the scopes the gateway requires (any one of them), or `public` (no token). */
  readonly access: RouteAccess;
  /** A POST that honours `Idempotency-Key`. */
  readonly idempotent?: boolean;
  /** ... and requires it (`400 VALIDATION_ERROR` naming the header without one). */
  readonly keyRequired?: boolean;
  /** Takes `Prefer: wait=N` (POST /orders). */
  readonly prefer?: boolean;
  readonly responses: Readonly<Record<number, ResponseSpec>>;
}

/**
 * An operation's route key and id, from its module's routes (seams.ts): the
 * id is the route's name there, which is also the name of its function in
 * the module's handler.
 */
export const operationOf = <R extends Readonly<Record<string, string>>>(
  routes: R,
  name: keyof R & string,
  /** The module's route scopes (its seams.ts): what the gateway's authorizer requires of the route. */
  scopes: { readonly [K in keyof R]: RouteAccess },
) => ({
  route: routes[name] as string,
  operationId: name,
  access: scopes[name],
});

/**
 * What API Gateway's JWT authorizer answers before any function runs, on
 * every route that has it: no valid token (missing, expired, bad signature,
 * wrong issuer or audience) is `401`; a valid one without the route's scopes `403`.
 */
export const authResponses: Readonly<Record<number, ResponseSpec>> = {
  401: {
    description:
      'No valid token: missing, expired, a bad signature, the wrong issuer or audience. API Gateway’s own answer, `{"message":"Unauthorized"}`.',
    schema: responseSchema(z.strictObject({ message: z.literal('Unauthorized') }), {
      id: 'Unauthorized',
      examples: [{ message: 'Unauthorized' }],
    }),
  },
  403: {
    description:
      'A valid token without a scope the route requires (e.g. a shop token on an admin route). API Gateway’s own answer, `{"message":"Forbidden"}`.',
    schema: responseSchema(z.strictObject({ message: z.literal('Forbidden') }), {
      id: 'Forbidden',
      examples: [{ message: 'Forbidden' }],
    }),
  },
};

/** The answers every route of a function may give beside its own: throttling and faults. */
export const commonResponses: Readonly<Record<number, ResponseSpec>> = {
  429: {
    description:
      'Throttled (the stage’s limits, locally admission control, or DynamoDB refusing for capacity once the SDK’s retries are spent): nothing changed. API Gateway’s own throttle answers `{"message":"Too Many Requests"}`.',
    schema: responseSchema(z.union([ThrottledError, GatewayMessage]), { id: 'Throttled' }),
    headers: ['retry-after'],
  },
  500: {
    description: 'A fault of the platform, never bad input.',
    schema: responseSchema(z.union([InternalError, GatewayMessage]), { id: 'InternalFault' }),
  },
};

/**
 * The answers about a request's body that every route reading one gives: the
 * HTTP edge (functions/shared/http.ts) parses a body on any route.
 */
export const bodyResponses: Readonly<Record<number, ResponseSpec>> = {
  400: { description: 'The request is not valid.', schema: ValidationError },
  413: {
    description:
      'The body is over 64 KiB (over API Gateway’s own 10 MiB it answers `{"message":"Request Entity Too Large"}`).',
    schema: responseSchema(z.union([PayloadTooLargeError, GatewayMessage]), { id: 'TooLarge' }),
  },
  415: { description: 'The body is not JSON.', schema: UnsupportedMediaTypeError },
};

export const notFoundResponse = (description: string): ResponseSpec => ({
  description,
  schema: NotFoundError,
});

export const keyReusedResponse: ResponseSpec = {
  description: 'The `Idempotency-Key` was used with a different body.',
  schema: IdempotencyKeyReusedError,
};
