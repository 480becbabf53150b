/**
 * The HTTP contract's building blocks, as zod schemas: the handlers validate
 * requests with them (each module's requests.ts) and the OpenAPI document
 * (functions/docs/openapi.ts) is generated from them, requests and responses
 * alike (each module's contract.ts). No AWS import here.
 */

import * as z from './zod';

/** Integer cents or units within bounds, rejecting floats, strings and unsafe integers. */
export const integer = (min: number, max?: number) =>
  // z.int() bounds the value to the safe integers itself: without a `max` of its own, a second bound
  // there would answer a `400` with the field's one fault twice.
  z.number().check(z.int(), z.gte(min), ...(max === undefined ? [] : [z.lte(max)]));

/**
 * A name-like text: at most `max` characters as sent, trimmed, not empty. The
 * document says exactly what is accepted: the length is checked before the
 * trim, and the pattern (not `minLength: 1`) says that white space alone is
 * refused; `trim().min(1).max(max)` documented " " valid and " " + `max`
 * characters invalid, and accepted the one and refused the other (found by
 * `npm run fuzz`).
 */
export const text = (max: number) =>
  z.string().check(z.maxLength(max), z.trim(), z.regex(/\S/, 'must not be empty or white space only'));

/**
 * The values of the string union `T`, all of them: `everyValueOf<T>()([...])`
 * does not compile while a value of `T` is missing, so an enum of the
 * contract cannot fall behind the domain's type it describes.
 */
export const everyValueOf =
  <T extends string>() =>
  <const Values extends readonly [T, ...T[]]>(
    values: Values & ([T] extends [Values[number]] ? unknown : never),
  ) =>
    values;

/** What the document says of a named schema (a `components.schemas` entry). */
export interface SchemaMeta {
  readonly id: string;
  readonly description?: string;
  readonly examples?: readonly unknown[];
}

/**
 * The document's named schemas: request bodies, converted as zod parses them
 * (their input: optional fields, untrimmed strings), and responses, converted
 * as the handlers make them (their output). Their metadata lives in zod's
 * global registry (`.meta`), where the conversion reads every schema's.
 */
export const requestSchemas = new Set<z.ZodMiniType>();
export const responseSchemas = new Set<z.ZodMiniType>();

/** Names a request body schema; the handlers validate with what this returns. */
export const requestSchema = <S extends z.ZodMiniType>(schema: S, meta: SchemaMeta): S => {
  const named = schema.check(z.meta({ ...meta })) as S;
  requestSchemas.add(named);
  return named;
};
/** Names a response body schema. */
export const responseSchema = <S extends z.ZodMiniType>(schema: S, meta: SchemaMeta): S => {
  const named = schema.check(z.meta({ ...meta })) as S;
  responseSchemas.add(named);
  return named;
};

/** The component name of a schema named by `requestSchema` or `responseSchema`. */
export const schemaId = (schema: z.ZodMiniType): string => {
  const meta = z.globalRegistry.get(schema);
  if (typeof meta?.id !== 'string' || !(requestSchemas.has(schema) || responseSchemas.has(schema))) {
    throw new Error('a body in the contract must be named with requestSchema or responseSchema');
  }
  return meta.id;
};

/** The id the document's examples use for `prefix` (`ord` → `ord_0123…cdef`). */
export const exampleId = (prefix: string) => `${prefix}_${'0123456789abcdef'.repeat(2)}`;

/** An id the server made, `<prefix>_` and 32 hex digits (opaque to clients; anything else is unknown: 404). */
export const id = (prefix: string) =>
  z
    .string()
    .check(z.regex(new RegExp(`^${prefix}_[0-9a-f]{32}$`)), z.meta({ examples: [exampleId(prefix)] }));
/** An ISO-8601 UTC instant as `Date.toISOString` writes it. */
export const instant = () => z.iso.datetime().check(z.meta({ examples: ['2026-11-23T14:05:09.123Z'] }));
