/**
 * The shapes of a module's seams (functions/<module>/seams.ts): what the CDK
 * construct of a function (lib/) and the function's own code must agree on —
 * its routes, its environment, the indexes it queries, the metrics it emits.
 * Both sides import the one declaration, so renaming either side renames both,
 * and the compiler finds a variable the construct forgot to set.
 *
 * No import here, and none in a seams file but this one: lib/ may import the
 * seams (biome.json holds it to them) without pulling a handler's AWS clients
 * into the CDK app.
 */

/** Route keys of the HTTP API (`METHOD /path`) by the name of what they do. */
export type Routes = Readonly<Record<string, string>>;

/** One environment variable: its name, and how its value is written as text and read back. */
export interface Variable<T> {
  readonly name: string;
  write(value: T): string;
  read(text: string): T;
}

/** A variable holding text as it is (a table's name, an ARN). */
export const text = (name: string): Variable<string> => ({
  name,
  write: (v) => v,
  read: (v) => v,
});

/** A variable holding a number (a setting in seconds or units); a value that is no number fails the read. */
export const numeric = (name: string): Variable<number> => ({
  name,
  write: (v) => String(v),
  read: (v) => {
    const value = Number(v);
    if (v.trim() === '' || !Number.isFinite(value)) {
      throw new Error(`environment variable ${name} is not a number: ${JSON.stringify(v)}`);
    }
    return value;
  },
});

type ValueOf<V> = V extends Variable<infer T> ? T : never;
/** The values of an environment's variables, by their names in code. */
export type Values<S extends Record<string, Variable<unknown>>> = { readonly [K in keyof S]: ValueOf<S[K]> };

/**
 * A group of environment variables a function needs, declared once: the
 * construct writes it (`write`, which takes every value, typed) and the
 * function reads it once per sandbox, at module scope (`read`, which fails at
 * start on a variable missing or malformed rather than on a request).
 */
export interface Environment<S extends Record<string, Variable<unknown>>> {
  write(values: Values<S>): Record<string, string>;
  read(source: Readonly<Record<string, string | undefined>>): Values<S>;
}

export function environment<S extends Record<string, Variable<unknown>>>(variables: S): Environment<S> {
  const entries = Object.entries(variables) as [keyof S & string, Variable<unknown>][];
  return {
    write: (values) =>
      Object.fromEntries(entries.map(([key, v]) => [v.name, v.write(values[key as keyof S])])),
    read: (source) =>
      Object.fromEntries(
        entries.map(([key, v]) => {
          const raw = source[v.name];
          if (!raw) throw new Error(`environment variable ${v.name} is not set`);
          return [key, v.read(raw)];
        }),
      ) as Values<S>,
  };
}

/** A sparse global secondary index: its name and key attributes, as the table declares and a query names them. */
export interface IndexSeam {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
}

/** The table of idempotency records (Powertools' and the refusals'), for a function whose routes honour `Idempotency-Key`. */
export const idempotencyEnvironment = environment({ idempotencyTable: text('IDEMPOTENCY_TABLE') });

/**
 * The OAuth 2.0 scopes of the API (api.md, "Identity and access"): a resource
 * server `commerce` with `shop` (a customer acting for itself) and `admin`
 * (an operator, for anyone). The Cognito pool of a stage declares them, the
 * JWT authorizer requires them per route, and the handlers read them from the
 * token's claims.
 */
export const RESOURCE_SERVER = 'commerce';
export const SCOPES = {
  shop: `${RESOURCE_SERVER}/shop`,
  admin: `${RESOURCE_SERVER}/admin`,
} as const;

/**
 * Who may call a route: the scopes of which the token needs any one (API
 * Gateway's `AuthorizationScopes`), or `public` for a route with no
 * authorizer at all (the documentation).
 */
export type RouteAccess = readonly string[] | 'public';

/** A shop caller (for itself) or an operator. */
export const SHOP_OR_ADMIN: RouteAccess = [SCOPES.shop, SCOPES.admin];
/** Operators only: a shop token is refused by the gateway (`403 {"message":"Forbidden"}`). */
export const ADMIN_ONLY: RouteAccess = [SCOPES.admin];
/** No token needed. */
export const PUBLIC: RouteAccess = 'public';

/** Each route's access, by the same names as the module's routes: every route has one. */
export type RouteScopes<R extends Routes> = { readonly [K in keyof R]: RouteAccess };
