/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the zod schemas of
 * every module's contract (functions/<module>/contract.ts): the handlers
 * validate requests with the same schemas, and the responses are described
 * by the schemas the integration tests check every answer against. Written
 * to openapi/openapi.json by `npm run openapi` and served at GET /openapi.json.
 */

import { accountsOperations } from '../accounts';
import { inventoryOperations } from '../inventory';
import { ordersOperations } from '../orders';
import { paymentsOperations } from '../payments';
import { authResponses, type OperationSpec, type ResponseHeader } from '../shared/contract';
import { exampleId, requestSchemas, responseSchemas, schemaId } from '../shared/schemas';
import * as z from '../shared/zod';
import { docsOperations } from './contract';

/** Every operation of the API, in the order the document lists them. */
export const OPERATIONS: readonly OperationSpec[] = [
  ...accountsOperations,
  ...inventoryOperations,
  ...ordersOperations,
  ...paymentsOperations,
  ...docsOperations,
];

type Json = Record<string, unknown>;

const TAGS = [
  { name: 'Accounts', description: 'Customers and their credit.' },
  { name: 'Inventory', description: 'Products, their stock, and reservations of it.' },
  { name: 'Orders', description: 'Orders and the saga that confirms or cancels each.' },
  { name: 'Payments', description: 'Payments the sagas captured, declined or refunded.' },
  { name: 'Documentation', description: 'This document, as JSON and as a web page.' },
];

const DESCRIPTION = `The public interface of the serverless commerce platform: the same contract locally and on a deployed stage.

- JSON in and out (\`content-type: application/json\`). Money is integer cents, quantities positive integers, times ISO-8601 UTC; ids are opaque strings the server makes (an id it did not make answers 404).
- Every \`POST\` accepts an \`Idempotency-Key\` (1–128 characters): a repeat with the same key and body answers the first response (same status and body) and has no second effect; the same key with another body is \`409 IDEMPOTENCY_KEY_REUSED\`.
- Errors always have the shape \`{"error": {"code", "message", "details": [...]}}\`, never a stack trace. Bad input never yields a 5xx and never changes anything.
- \`429 THROTTLED\` carries \`Retry-After\` (seconds) and had no effect: send the same request again, with the same \`Idempotency-Key\`.
- \`x-correlation-id\` (sent, else the request's id) is echoed in every answer of the platform and ties together the logs of the request and of the saga it starts.
- Every route but \`GET /openapi.json\` and \`GET /docs\` takes \`Authorization: Bearer <JWT>\` (an OAuth 2.0 access token of the stage's issuer), on every stage and locally. Without a valid one API Gateway answers \`401 {"message":"Unauthorized"}\`; with one lacking the route's scopes, \`403 {"message":"Forbidden"}\`. Each operation's \`security\` lists the scopes it accepts (any one of them).
- \`commerce/shop\`: a customer acting for itself (its \`sub\`). It sees only its own customer, orders, payments, saga traces and reservations (another's answers \`404\` as an unknown id), and holds at most the stage's limit of one product in live reservations (\`409 HOLD_LIMIT_REACHED\`). \`commerce/admin\`: an operator, for anyone.
- Tokens: locally \`POST /_local/token\` on the local AWS endpoint (the API's port + 1) with \`{"sub", "scope"}\`; on a stage with its own user pool, the stack's \`TokenUrl\` output (shoppers: authorization code with PKCE; operators: client credentials); otherwise the stage's identity provider.
- Idempotency keys belong to the caller (the same key from two \`sub\`s is two keys); \`POST /orders\` and reservations require one.`;

const HEADERS: Record<ResponseHeader, Json> = {
  location: {
    description: 'Where the created resource is read.',
    schema: { type: 'string', examples: ['/orders/ord_0123456789abcdef0123456789abcdef'] },
  },
  'retry-after': {
    description: 'Seconds to wait before sending the same request again.',
    schema: { type: 'string', pattern: '^[0-9]+$', examples: ['1'] },
  },
  'preference-applied': {
    description: 'The `Prefer` this answer honoured (RFC 7240).',
    schema: { type: 'string', examples: ['wait=5'] },
  },
  'x-correlation-id': {
    description: 'The request’s correlation id: the one it sent, else its request id.',
    schema: { type: 'string' },
  },
};
const HEADER_NAMES: Record<ResponseHeader, string> = {
  location: 'Location',
  'retry-after': 'Retry-After',
  'preference-applied': 'Preference-Applied',
  'x-correlation-id': 'x-correlation-id',
};

const PARAMETERS: Record<string, Json> = {
  CorrelationId: {
    name: 'x-correlation-id',
    in: 'header',
    required: false,
    description:
      'Ties the request’s log lines, the events it appends and its saga together; echoed back. An empty one counts as none (the request id is used).',
    schema: { type: 'string' },
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'A repeat by the same caller with the same key and body answers the first response and has no second effect; the same key with another body is `409 IDEMPOTENCY_KEY_REUSED`.',
    schema: { type: 'string', minLength: 1, maxLength: 128, examples: ['order-2026-11-23-0001'] },
  },
  IdempotencyKeyRequired: {
    name: 'Idempotency-Key',
    in: 'header',
    required: true,
    description:
      'Required: this request moves money or stock, and a retry after a lost answer must not do it twice (without it, `400 VALIDATION_ERROR` naming the header). A repeat by the same caller with the same key and body answers the first response and has no second effect; the same key with another body is `409 IDEMPOTENCY_KEY_REUSED`.',
    schema: { type: 'string', minLength: 1, maxLength: 128, examples: ['order-2026-11-23-0001'] },
  },
  Prefer: {
    name: 'Prefer',
    in: 'header',
    required: false,
    description:
      '`wait=N` (RFC 7240, 1 ≤ N ≤ 10 seconds): if the saga ends within N seconds the answer is `201` with the final order and `Preference-Applied: wait=N`; otherwise `202`.',
    schema: { type: 'string', examples: ['wait=5'] },
  },
};

/** The bearer scheme of the JWT authorizer; OpenAPI 3.1 lets a non-OAuth scheme list the scopes (roles) an operation needs. */
const BEARER = 'bearerAuth';
const SECURITY_SCHEMES: Record<string, Json> = {
  [BEARER]: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An OAuth 2.0 access token (JWT) of the stage’s issuer: `iss`, `aud` or `client_id`, `exp`, `sub`, and `scope` (space-separated: `commerce/shop` or `commerce/admin`). API Gateway checks it before any function runs.',
  },
};

/** Who may call an operation: any one of its scopes (one requirement each), or nobody's token (`[]`). */
const securityOf = (spec: OperationSpec) =>
  spec.access === 'public' ? [] : spec.access.map((scope) => ({ [BEARER]: [scope] }));

/** The named schemas as JSON Schema 2020-12 (OpenAPI 3.1's dialect), referring to each other by component. */
function componentSchemas(): Record<string, Json> {
  const convert = (io: 'input' | 'output', names: ReadonlySet<z.ZodMiniType>) => {
    const ids = new Set([...names].map(schemaId));
    const { schemas } = z.toJSONSchema(z.globalRegistry, {
      target: 'draft-2020-12',
      io,
      uri: (id) => `#/components/schemas/${id}`,
    });
    return Object.fromEntries(
      Object.entries(schemas)
        .filter(([id]) => ids.has(id))
        .map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema as Json]),
    );
  };
  const requests = convert('input', requestSchemas);
  const responses = convert('output', responseSchemas);
  const clash = Object.keys(requests).filter((id) => id in responses);
  if (clash.length > 0) throw new Error(`schema names used twice: ${clash.join(', ')}`);
  return Object.fromEntries(
    Object.entries({ ...requests, ...responses }).sort(([a], [b]) => a.localeCompare(b)),
  );
}

const ref = (kind: 'schemas' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const exampleOf = (schema: z.ZodMiniType) => {
  const examples = z.globalRegistry.get(schema)?.examples;
  return Array.isArray(examples) && examples.length > 0 ? { example: examples[0] } : {};
};

function operation(spec: OperationSpec): Json {
  const [, path = ''] = spec.route.split(' ');
  const pathParameters = Object.entries(spec.pathParameters ?? {}).map(([name, p]) => ({
    name,
    in: 'path',
    required: true,
    description: `${p.description}; an id the server did not make answers 404`,
    schema: { type: 'string', examples: [exampleId(p.prefix)] },
  }));
  const missing = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).filter((n) => !spec.pathParameters?.[n]);
  if (missing.length > 0)
    throw new Error(`${spec.route}: path parameters not described: ${missing.join(', ')}`);
  // The authorizer's own answers first come from the gateway; an operation's own 403 (FORBIDDEN) includes its.
  const specResponses = spec.access === 'public' ? spec.responses : { ...authResponses, ...spec.responses };
  const responses = Object.fromEntries(
    Object.entries(specResponses).map(([status, r]) => {
      const headers = Object.fromEntries([
        ...(r.headers ?? []).map((h) => [HEADER_NAMES[h], { ...HEADERS[h], required: true }]),
        ...(r.optionalHeaders ?? []).map((h) => [HEADER_NAMES[h], HEADERS[h]]),
        [HEADER_NAMES['x-correlation-id'], HEADERS['x-correlation-id']],
      ]);
      const content = r.schema
        ? { 'application/json': { schema: ref('schemas', schemaId(r.schema)), ...exampleOf(r.schema) } }
        : { [r.contentType ?? 'text/plain']: { schema: { type: 'string' } } };
      return [status, { description: r.description, headers, content }];
    }),
  );
  return {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    security: securityOf(spec),
    parameters: [
      ...pathParameters,
      ...(spec.idempotent
        ? [ref('parameters', spec.keyRequired ? 'IdempotencyKeyRequired' : 'IdempotencyKey')]
        : []),
      ...(spec.prefer ? [ref('parameters', 'Prefer')] : []),
      ref('parameters', 'CorrelationId'),
    ],
    ...(spec.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: ref('schemas', schemaId(spec.body)), ...exampleOf(spec.body) },
            },
          },
        }
      : {}),
    responses,
  };
}

/** The document, the same on every stage (its paths are relative to where it is served). */
export function openApiDocument() {
  const paths: Record<string, Record<string, Json>> = {};
  for (const spec of OPERATIONS) {
    const [method = '', path = ''] = spec.route.split(' ');
    paths[path] ??= {};
    if (paths[path][method.toLowerCase()]) throw new Error(`${spec.route} is described twice`);
    paths[path][method.toLowerCase()] = operation(spec);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Serverless commerce platform', version: '1.0.0', description: DESCRIPTION },
    tags: TAGS,
    paths,
    components: { schemas: componentSchemas(), parameters: PARAMETERS, securitySchemes: SECURITY_SCHEMES },
  };
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
