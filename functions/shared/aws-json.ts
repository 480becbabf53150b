/**
 * The functions' client of AWS's JSON protocols (`awsJson1_0`, `awsJson1_1`:
 * a signed POST to `/` naming the operation in `X-Amz-Target`), which
 * DynamoDB, Step Functions and EventBridge speak: sent over keep-alive
 * connections, signed with Signature Version 4, retried by the SDK's retry
 * strategy with the SDK's classification of errors; its errors carry the
 * names, `$fault` and `$metadata` of the SDK's.
 *
 * Why not the SDK's clients (docs/decisions/0011-dynamodb-json-client.md):
 * a call through them costs the calling thread three times the CPU (their
 * middleware stack, schema serde, endpoint rules, logger filter), and a
 * Lambda invocation pays for that time; their code was most of every bundle.
 */

import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import {
  isServerError,
  isThrottlingError,
  isTransientError,
  type StandardRetryStrategy,
} from '@smithy/core/retry';
import { type Credentials, signJsonPost } from './sigv4';

export type Wire = Record<string, unknown>;

/** What sets one service's protocol apart from another's. */
export interface AwsJsonService {
  /** Its name in Signature Version 4's credential scope, and its public endpoint's first label. */
  readonly signingName: string;
  /** Its SDK client's name for `AWS_ENDPOINT_URL_<NAME>`, the variable that overrides its endpoint. */
  readonly endpointVariable: string;
  /** `X-Amz-Target`'s prefix: the operation's name follows it. */
  readonly targetPrefix: string;
  readonly jsonVersion: '1.0' | '1.1';
}

/** A call the service refused, as the SDK raises it: `name` is the service's error code. */
export class AwsServiceError extends Error {
  readonly $fault: 'client' | 'server';
  readonly $metadata: {
    httpStatusCode: number;
    requestId?: string;
    attempts?: number;
    totalRetryDelay?: number;
  };

  constructor(name: string, message: string, status: number, requestId: string | undefined) {
    super(message);
    this.name = name;
    this.$fault = status >= 500 ? 'server' : 'client';
    this.$metadata = { httpStatusCode: status, requestId };
  }
}

/** Makes the error of a refused call; a service whose errors carry fields of their own gives its own. */
export type ErrorFactory = (
  name: string,
  message: string,
  status: number,
  requestId: string | undefined,
  body: Wire,
) => AwsServiceError;

export interface AwsJsonClientOptions {
  readonly retryStrategy: StandardRetryStrategy;
  /** Default: `AWS_ENDPOINT_URL_<NAME>`, else `AWS_ENDPOINT_URL`, else the region's public endpoint. */
  readonly endpoint?: string;
  /** Default: `AWS_REGION` (Lambda sets it; without one the client refuses to start, as the SDK's). */
  readonly region?: string;
  /** Default: the environment's (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), as Lambda sets them. */
  readonly credentials?: Credentials;
  /** Told each call's operation before it is sent (tests count calls with it). */
  readonly onCall?: (operation: string) => void;
}

/** The environment's credentials, as the SDK's first provider reads them (its error's name included). */
function environmentCredentials(): Credentials {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = process.env;
  if (!accessKeyId || !secretAccessKey) {
    throw Object.assign(new Error('Unable to find environment variable credentials.'), {
      name: 'CredentialsProviderError',
    });
  }
  return { accessKeyId, secretAccessKey, sessionToken: process.env.AWS_SESSION_TOKEN || undefined };
}

/**
 * Where the calls go, how, and signed with what: resolved at the first call, as the SDK resolves its
 * configuration and keeps the environment's credentials (they do not change in a sandbox's life).
 */
interface Endpoint {
  readonly url: URL;
  readonly region: string;
  readonly credentials: Credentials;
  readonly agent: HttpAgent;
  readonly send: typeof httpRequest;
}

function endpointOf(service: AwsJsonService, options: AwsJsonClientOptions): Endpoint {
  const region = options.region ?? process.env.AWS_REGION;
  if (!region) throw new Error('Region is missing: set AWS_REGION');
  const url = new URL(
    options.endpoint ??
      process.env[`AWS_ENDPOINT_URL_${service.endpointVariable}`] ??
      process.env.AWS_ENDPOINT_URL ??
      `https://${service.signingName}.${region}.amazonaws.com`,
  );
  // Keep-alive sockets, so that calls reuse connections across invocations. (A sandbox runs one
  // invocation at a time, on Lambda as locally; the bound is only a ceiling for fan-out within one.)
  const https = url.protocol === 'https:';
  return {
    url,
    region,
    credentials: options.credentials ?? environmentCredentials(),
    agent: https
      ? new HttpsAgent({ keepAlive: true, maxSockets: 512 })
      : new HttpAgent({ keepAlive: true, maxSockets: 512 }),
    send: https ? httpsRequest : httpRequest,
  };
}

const defaultError: ErrorFactory = (name, message, status, requestId) =>
  new AwsServiceError(name, message, status, requestId);

export class AwsJsonClient {
  private endpoint: Endpoint | undefined;
  private readonly contentType: string;

  constructor(
    private readonly service: AwsJsonService,
    private readonly options: AwsJsonClientOptions,
    private readonly errorOf: ErrorFactory = defaultError,
  ) {
    this.contentType = `application/x-amz-json-${service.jsonVersion}`;
  }

  /**
   * One operation, retried as the SDK retries: the strategy decides from the
   * error's kind (throttling, transient, server, client) whether and after what
   * backoff; when it will not, the last error is thrown, with the attempts made.
   */
  async call(operation: string, input: Wire): Promise<Wire> {
    this.options.onCall?.(operation);
    const body = JSON.stringify(input);
    const strategy = this.options.retryStrategy;
    let token = await strategy.acquireInitialRetryToken(operation);
    let attempts = 0;
    let totalRetryDelay = 0;
    for (;;) {
      attempts++;
      try {
        const answer = await this.attempt(operation, body);
        strategy.recordSuccess(token);
        return answer;
      } catch (error) {
        const failed = error as Error & { $metadata?: Record<string, unknown> };
        const backoffFrom = Date.now();
        try {
          // It waits out the backoff before it answers (or refuses: no retry left, or none in time).
          token = await strategy.refreshRetryTokenForRetry(token, { errorType: errorTypeOf(failed) });
        } catch {
          failed.$metadata = { ...failed.$metadata, attempts, totalRetryDelay };
          throw failed;
        }
        totalRetryDelay += Date.now() - backoffFrom;
      }
    }
  }

  /** Closes the kept-alive connections (a test's clean-up; a function never needs it). */
  destroy() {
    this.endpoint?.agent.destroy();
  }

  private async attempt(operation: string, body: string): Promise<Wire> {
    this.endpoint ??= endpointOf(this.service, this.options);
    const { url, region, credentials, agent, send } = this.endpoint;
    const headers = signJsonPost(
      {
        host: url.host,
        region,
        service: this.service.signingName,
        target: this.service.targetPrefix + operation,
        contentType: this.contentType,
        body,
      },
      credentials,
    );
    headers['content-length'] = String(Buffer.byteLength(body));
    // Lambda's trace id, sent on each call as the SDK's recursion-detection middleware sends it (unsigned, as there).
    const traceId = process.env._X_AMZN_TRACE_ID;
    if (traceId && process.env.AWS_LAMBDA_FUNCTION_NAME) headers['x-amzn-trace-id'] = traceId;
    return new Promise<Wire>((resolve, reject) => {
      const request = send(
        {
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/',
          headers,
          agent,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            const parsed = parseJson(text);
            if (status >= 200 && status < 300 && parsed) return resolve(parsed);
            const requestId = response.headers['x-amzn-requestid'];
            reject(
              this.refusalOf(
                status,
                parsed,
                response.headers['x-amzn-errortype'],
                typeof requestId === 'string' ? requestId : undefined,
              ),
            );
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  /** The service's error answer as the SDK names it: the code from `x-amzn-errortype`, else `__type`, after its namespace. */
  private refusalOf(
    status: number,
    body: Wire | undefined,
    errorType: string | string[] | undefined,
    requestId: string | undefined,
  ): AwsServiceError {
    const raw = (typeof errorType === 'string' && errorType) || String(body?.__type ?? body?.code ?? '');
    const name =
      raw.split(':')[0]!.split('#').pop() || (status >= 500 ? 'InternalServerError' : 'UnknownError');
    const message = String(body?.message ?? body?.Message ?? `the service answered ${status}`);
    return this.errorOf(name, message, status, requestId, body ?? {});
  }
}

function parseJson(text: string): Wire | undefined {
  try {
    const value: unknown = JSON.parse(text || '{}');
    return value && typeof value === 'object' ? (value as Wire) : undefined;
  } catch {
    return undefined;
  }
}

/** The SDK's retry classification, in its order (its retry middleware's). */
function errorTypeOf(failed: Error) {
  // A service's refusal or a socket's error: the fields the classifiers read (`name`, `code`, `$metadata`) or none.
  const error = failed as Parameters<typeof isThrottlingError>[0];
  if (isThrottlingError(error)) return 'THROTTLING' as const;
  if (isTransientError(error)) return 'TRANSIENT' as const;
  if (isServerError(error)) return 'SERVER_ERROR' as const;
  return 'CLIENT_ERROR' as const;
}
