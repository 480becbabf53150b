import { type KeyObject, randomUUID } from 'node:crypto';
import type { JwtAuthorizerSpec } from './authorizer';
import { signRs256 } from './jwt';
import { jwks, type SigningKey } from './keys';

/** What POST /_local/token takes. */
export interface TokenRequest {
  readonly sub: string;
  readonly scope: string;
  /** Seconds until it expires; default an hour. A negative one mints a token that has already expired (for tests). */
  readonly expiresIn?: number;
}

export const DEFAULT_EXPIRES_IN = 3600;
const MAX_EXPIRES_IN = 24 * 3600;
/** RFC 6749's scope-token characters. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** The token endpoint's answers, as OAuth 2.0 shapes them (RFC 6749 §5.1, §5.2). */
export type TokenAnswer =
  | { status: 200; body: { access_token: string; token_type: 'Bearer'; expires_in: number } }
  | { status: 400; body: { error: 'invalid_request' | 'invalid_scope'; error_description: string } };

/**
 * The local cloud as the template's issuer (the local cloud runs no Cognito:
 * it signs the access tokens the stage's issuer would). Its tokens carry
 * `iss` the authorizer's issuer, `aud` and `client_id` its first audience,
 * `sub`, `scope`, `iat`, `exp` and `jti`, signed RS256 with a key made at
 * start (kept in `--data-dir`).
 */
export class LocalIssuer {
  constructor(
    readonly key: SigningKey,
    readonly issuer: string,
    readonly audience: string,
    /** The scopes the template's routes ask for: a token may carry only these (a typo would be a 403 everywhere). */
    readonly knownScopes: ReadonlySet<string>,
  ) {
    this.keys = new Map([[key.kid, key.publicKey]]);
  }

  /**
   * The issuer of the template's first JWT authorizer; with none (a template
   * whose routes are all open), an issuer of its own whose tokens no route checks.
   */
  static forTemplate(
    key: SigningKey,
    authorizers: readonly JwtAuthorizerSpec[],
    knownScopes: ReadonlySet<string>,
    fallbackIssuer: string,
  ) {
    const first = authorizers[0];
    return new LocalIssuer(key, first?.issuer ?? fallbackIssuer, first?.audiences[0] ?? 'local', knownScopes);
  }

  get jwks() {
    return jwks([this.key]);
  }

  private readonly keys: ReadonlyMap<string, KeyObject>;
  private readonly noKeys: ReadonlyMap<string, KeyObject> = new Map();

  /** The issuer's keys by `kid`, for an authorizer (which trusts them for this issuer alone). */
  keysFor(authorizer: JwtAuthorizerSpec): ReadonlyMap<string, KeyObject> {
    return authorizer.issuer === this.issuer ? this.keys : this.noKeys;
  }

  /** What a client needs to know (GET /_local/issuer). */
  description(endpointUrl: string) {
    return {
      issuer: this.issuer,
      audience: this.audience,
      scopes: [...this.knownScopes],
      tokenEndpoint: `${endpointUrl}/_local/token`,
      jwksUri: `${endpointUrl}/_local/jwks.json`,
    };
  }

  mint(request: TokenRequest, nowSeconds = Math.floor(Date.now() / 1000)): string {
    const expiresIn = request.expiresIn ?? DEFAULT_EXPIRES_IN;
    return signRs256(
      {
        iss: this.issuer,
        sub: request.sub,
        aud: this.audience,
        client_id: this.audience,
        scope: request.scope,
        iat: nowSeconds,
        exp: nowSeconds + expiresIn,
        jti: randomUUID(),
      },
      this.key.privateKey,
      this.key.kid,
    );
  }

  /** POST /_local/token: validates the body, then mints. */
  token(body: Buffer): TokenAnswer {
    const bad = (error_description: string, error: 'invalid_request' | 'invalid_scope' = 'invalid_request') =>
      ({ status: 400, body: { error, error_description } }) as const;
    let input: unknown;
    try {
      input = JSON.parse(body.toString('utf8'));
    } catch {
      return bad('the body is not JSON: send {"sub": "...", "scope": "commerce/shop"}');
    }
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      return bad('the body is not a JSON object');
    }
    const { sub, scope, expiresIn, ...unknown } = input as Record<string, unknown>;
    const extra = Object.keys(unknown);
    if (extra.length > 0) return bad(`unknown field(s): ${extra.join(', ')} (sub, scope, expiresIn)`);
    if (typeof sub !== 'string' || !/^[\x21-\x7E]{1,128}$/.test(sub)) {
      return bad('sub: 1–128 printable ASCII characters without spaces');
    }
    if (typeof scope !== 'string' || scope.trim() === '') {
      return bad('scope: a space-separated list of scopes', 'invalid_scope');
    }
    const scopes = scope.split(' ').filter(Boolean);
    const unknownScopes = scopes.filter(
      (s) => !SCOPE_TOKEN.test(s) || (this.knownScopes.size > 0 && !this.knownScopes.has(s)),
    );
    if (unknownScopes.length > 0) {
      return bad(
        `scope: ${unknownScopes.join(', ')} not among the template's scopes (${[...this.knownScopes].join(', ')})`,
        'invalid_scope',
      );
    }
    if (
      expiresIn !== undefined &&
      (typeof expiresIn !== 'number' ||
        !Number.isInteger(expiresIn) ||
        expiresIn === 0 ||
        Math.abs(expiresIn) > MAX_EXPIRES_IN)
    ) {
      return bad(`expiresIn: a whole number of seconds, not 0, at most ${MAX_EXPIRES_IN} either way`);
    }
    const lifetime = (expiresIn as number | undefined) ?? DEFAULT_EXPIRES_IN;
    return {
      status: 200,
      body: {
        access_token: this.mint({ sub, scope: scopes.join(' '), expiresIn: lifetime }),
        token_type: 'Bearer',
        expires_in: lifetime,
      },
    };
  }
}
