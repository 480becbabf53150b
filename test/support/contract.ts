/**
 * Checks answers of the HTTP API against the OpenAPI document
 * (openapi/openapi.json, which a unit test keeps equal to what the contracts
 * generate), with a real JSON Schema validator: Ajv for draft 2020-12,
 * OpenAPI 3.1's dialect, with ajv-formats. A route or a status the document
 * does not have is a failure, as is a body or a required header that does
 * not match. The integration helpers check every answer they receive
 * (test/support/api.ts), collect the failures, and fail the test that got them.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import document from '../../openapi/openapi.json';

type Json = Record<string, unknown>;

interface Operation {
  readonly route: string;
  readonly method: string;
  readonly matcher: RegExp;
  readonly literalSegments: number;
  readonly responses: Record<string, Json>;
}

const SCHEMAS = '#/components/schemas/';

/** The document's schemas as one JSON Schema whose `$defs` they are (the document itself is not one). */
function validatorFactory() {
  const asDefs = JSON.parse(JSON.stringify(document.components.schemas).replaceAll(SCHEMAS, '#/$defs/'));
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'contract', $defs: asDefs });
  const compiled = new Map<string, ValidateFunction>();
  return (schema: Json): ValidateFunction => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) {
      const ref = typeof schema.$ref === 'string' ? schema.$ref : undefined;
      validate = ajv.compile(
        ref?.startsWith(SCHEMAS) ? { $ref: `contract#/$defs/${ref.slice(SCHEMAS.length)}` } : schema,
      );
      compiled.set(key, validate);
    }
    return validate;
  };
}

const validatorOf = validatorFactory();

/** Whether `value` matches `schema` (a schema of the document, or a `$ref` to one); the errors if not. */
export function schemaErrors(schema: Json, value: unknown): string | undefined {
  const validate = validatorOf(schema);
  return validate(value) ? undefined : ajvErrors(validate);
}

const operations: Operation[] = Object.entries(document.paths as Record<string, Record<string, Json>>)
  .flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const segments = path.split('/').filter(Boolean);
      const pattern = segments.map((s) => (/^\{.+\}$/.test(s) ? '/[^/]+' : `/${s.replace(/\./g, '\\.')}`));
      return {
        route: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        matcher: new RegExp(`^${pattern.join('') || '/'}$`),
        literalSegments: segments.filter((s) => !s.startsWith('{')).length,
        responses: op.responses as Record<string, Json>,
      };
    }),
  )
  // As API Gateway matches: the route with the most literal segments first.
  .sort((a, b) => b.literalSegments - a.literalSegments);

/** The documented operation a request went to, as `METHOD /path/{param}`; undefined if none. */
export function routeOf(method: string, path: string): string | undefined {
  const pathname = new URL(path, 'http://api').pathname;
  return operations.find((o) => o.method === method.toUpperCase() && o.matcher.test(pathname))?.route;
}

export interface Answer {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** What is wrong with an answer by the document; an empty list if nothing. */
export function contractViolations(answer: Answer): string[] {
  const { method, path, status, headers, text } = answer;
  const what = `${method} ${path} → ${status}`;
  const route = routeOf(method, path);
  const operation = operations.find((o) => o.route === route);
  if (!operation) return [`${what}: no such operation in the OpenAPI document`];
  const response = operation.responses[String(status)];
  if (!response) return [`${what}: status ${status} is not documented for ${operation.route}`];
  const problems: string[] = [];
  for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    const value = headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`${what}: required header ${name} is missing`);
      continue;
    }
    const validate = validatorOf(header.schema as Json);
    if (!validate(value)) problems.push(`${what}: header ${name}: ${value}: ${ajvErrors(validate)}`);
  }
  const content = response.content as Record<string, { schema: Json }>;
  const contentType = (headers.get('content-type') ?? '').split(';')[0]!.trim();
  const media = Object.entries(content).find(([type]) => type.split(';')[0]!.trim() === contentType);
  if (!media) {
    problems.push(`${what}: content-type ${contentType} is not one of ${Object.keys(content).join(', ')}`);
    return problems;
  }
  if (contentType !== 'application/json') return problems;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [...problems, `${what}: the body is not JSON: ${text.slice(0, 200)}`];
  }
  const validate = validatorOf(media[1].schema);
  if (!validate(body)) {
    problems.push(`${what}: the body does not match ${JSON.stringify(media[1].schema)}: ${ajvErrors(validate)}
  body: ${text.slice(0, 1000)}`);
  }
  return problems;
}

const ajvErrors = (validate: ValidateFunction) =>
  (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`).join('; ');

const failures: string[] = [];

/** Checks an answer and keeps what is wrong with it, for `expectAnswersInContract` to fail the test with. */
export function checkAnswer(answer: Answer) {
  failures.push(...contractViolations(answer));
}

/** Fails when an answer checked since the last call broke the contract (and forgets them). */
export function expectAnswersInContract() {
  const found = failures.splice(0);
  if (found.length > 0) {
    throw new Error(`${found.length} answer(s) outside the OpenAPI document:\n${found.join('\n')}`);
  }
}

// Every test file that imports this checks the answers its tests received, after each test and after all
// (answers received in beforeAll and afterAll hooks count too).
afterEach(expectAnswersInContract);
afterAll(expectAnswersInContract);
