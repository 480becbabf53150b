// Loaded inside each sandbox (bundled to plain CommonJS by the runtime, see `meterBundle`): observes
// the function's own DynamoDB calls, which go straight to DynamoDB Local (AWS_ENDPOINT_URL_DYNAMODB),
// and turns them into what the local cloud counts, so that its main thread neither proxies nor
// parses them. `import = require` keeps the real `node:http` module object, whose `request` the
// AWS SDK's NodeHttpHandler reads at its first call.
import http = require('node:http');

import { PassThrough } from 'node:stream';

import {
  askForConsumedCapacity,
  consumedReadUnits,
  itemWrites,
  READ_OPERATIONS,
  tablesWritten,
  WRITE_OPERATIONS,
} from '../capacity';
import { AccessDeniedError, compilePolicies, type Principal, type PrincipalPolicies } from '../iam';
import { dynamoAuthorizations } from '../iam-actions';
import { awsRefusal, type DynamoFaultRule, refusalFor } from './dynamo-faults';

/** One item written: operation, second (epoch), table, partition key value (or null), units, transactional (1/0). */
export type MeteredWrite = [string, number, string, string | null, number, 0 | 1];
/** One read: operation, table, the read units DynamoDB Local reported for it. */
export type MeteredRead = [string, string, number];

/** What a sandbox reports of its DynamoDB calls, batched (once per invocation). */
export interface MeterBatch {
  readonly writes: MeteredWrite[];
  readonly reads: MeteredRead[];
}

export interface MeterOptions {
  /** DynamoDB Local's port on 127.0.0.1: requests to it are the function's DynamoDB calls. */
  readonly port: number;
  /** Each table's partition key attribute, for the hot-key counters. */
  readonly partitionKeys: Readonly<Record<string, string>>;
  /** Called (once per tick, with every table written in it) as soon as a write has succeeded. */
  readonly onWrite: (tables: string[]) => void;
  /** Called whenever something was recorded (the sandbox flushes records made outside an invocation). */
  readonly onRecord?: () => void;
  /**
   * The function's role: each call is checked against it before it leaves
   * (IAM enforced locally); a call it does not allow is answered here as
   * DynamoDB answers it, and never reaches DynamoDB Local. Absent: no check.
   */
  readonly principal?: PrincipalPolicies;
  /** DynamoDB refusing a share of calls (see dynamo-faults.ts); changed later with `setDynamoFaults`. */
  readonly dynamoFaults?: readonly DynamoFaultRule[];
}

export interface Meter {
  /** The records since the last call, or undefined when there are none. */
  take(): MeterBatch | undefined;
  /** Replaces the DynamoDB refusal rules (none: every call goes through untouched). */
  setDynamoFaults(rules: readonly DynamoFaultRule[]): void;
}

const DYNAMODB = 'DynamoDB_20120810.';
const STREAMS = 'DynamoDBStreams_20120810.';

type Chunk = string | Buffer | Uint8Array;
const toBuffer = (chunk: Chunk, encoding?: unknown) =>
  typeof chunk === 'string'
    ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
    : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);

function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    if (k.toLowerCase() === name) return String(v);
  }
  return undefined;
}

/** DynamoDB's JSON protocol names an error by its shape's full name. */
const errorType = (code: string) => `com.amazonaws.dynamodb.v20120810#${code}`;

/**
 * Answers a request here, as DynamoDB would have answered it, without sending
 * it: the caller gets `status` and `body` (DynamoDB's JSON protocol), and the
 * connection the request had taken is dropped.
 */
function answerLocally(req: http.ClientRequest, status: number, body: unknown, requestIdPrefix: string) {
  const payload = Buffer.from(JSON.stringify(body));
  const response = Object.assign(new PassThrough(), {
    statusCode: status,
    statusMessage: status === 400 ? 'Bad Request' : 'Error',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': String(payload.length),
      'x-amzn-requestid': `${requestIdPrefix}-${Date.now().toString(36)}`,
    },
  });
  response.end(payload);
  // The request never goes out: its socket is dropped, and the error that makes comes after the answer.
  req.on('error', () => undefined);
  req.emit('response', response);
  req.destroy();
}

/**
 * Refuses a share of the function's DynamoDB calls (the rules in force when
 * the body is sent) with AWS's own answer; a refused call never reaches
 * DynamoDB Local, as a throttled call never reaches a partition on AWS.
 */
function refuseSome(req: http.ClientRequest, operation: string, rules: () => readonly DynamoFaultRule[]) {
  const end = req.end;
  req.end = function (this: http.ClientRequest, ...args: unknown[]) {
    const rule = refusalFor(rules(), operation);
    if (!rule) return (end as (...a: unknown[]) => http.ClientRequest).apply(this, args);
    const [chunk] = args;
    let input: Record<string, unknown> = {};
    try {
      if (chunk && typeof chunk !== 'function')
        input = JSON.parse(toBuffer(chunk as Chunk, args[1]).toString('utf8')) as Record<string, unknown>;
    } catch {
      // Not the JSON the SDK sends: refused all the same, as one item.
    }
    const refusal = awsRefusal(rule.error, operation, input);
    answerLocally(this, refusal.status, refusal.body, 'local-fault');
    return this;
  } as typeof req.end;
}

/**
 * Checks a DynamoDB request against the function's role when its body is
 * sent (the SDK sends it whole, with `end`). A denied request is not sent:
 * the caller gets DynamoDB's answer to it, `400 AccessDeniedException` with
 * IAM's message, and the connection it had taken is dropped. A request the
 * check cannot read is refused the same way with a message that says so
 * (never let through unchecked).
 */
function enforce(req: http.ClientRequest, principal: Principal, operation: string) {
  const end = req.end;
  req.end = function (this: http.ClientRequest, ...args: unknown[]) {
    const [chunk] = args;
    let refusal: { code: string; message: string } | undefined;
    try {
      const body =
        chunk && typeof chunk !== 'function' ? toBuffer(chunk as Chunk, args[1]).toString('utf8') : '{}';
      for (const { action, resource } of dynamoAuthorizations(operation, JSON.parse(body || '{}'))) {
        const decision = principal.decide(action, resource);
        if (decision !== 'allowed') {
          const denied = new AccessDeniedError(principal.arn, action, resource, decision);
          refusal = { code: denied.code, message: denied.message };
          break;
        }
      }
    } catch (error) {
      refusal = { code: 'AccessDeniedException', message: `local IAM check: ${(error as Error).message}` };
    }
    if (!refusal) return (end as (...a: unknown[]) => http.ClientRequest).apply(this, args);
    answerLocally(this, 400, { __type: errorType(refusal.code), message: refusal.message }, 'local-iam');
    return this;
  } as typeof req.end;
}

/**
 * Wraps `http.request` so that requests to DynamoDB Local's port are observed:
 * a successful write is recorded by item (the billing rules of `capacity.ts`,
 * transactions doubled) and reported at once to wake the table's stream
 * pollers; a read is sent with `ReturnConsumedCapacity: TOTAL` (unless the
 * caller asked already) and recorded with the units DynamoDB Local reports
 * — as the local AWS endpoint does for the calls it proxies, so both give
 * the same numbers. Nothing else about the request or response changes.
 */
export function installDynamoMeter(options: MeterOptions): Meter {
  let writes: MeteredWrite[] = [];
  let reads: MeteredRead[] = [];
  let written: Set<string> | undefined;
  const partitionKeyOf = (table: string) => options.partitionKeys[table];

  const wrote = (tables: readonly string[]) => {
    if (!written) {
      written = new Set();
      setImmediate(() => {
        const all = [...written!];
        written = undefined;
        options.onWrite(all);
      });
    }
    for (const t of tables) written.add(t);
  };

  const observe = (req: http.ClientRequest, operation: string) => {
    const isRead = READ_OPERATIONS.has(operation);
    const isWrite = WRITE_OPERATIONS.has(operation);
    if (!isRead && !isWrite) return;
    const chunks: Buffer[] = [];
    const write = req.write;
    const end = req.end;
    req.write = function (this: http.ClientRequest, chunk: Chunk, ...rest: unknown[]) {
      if (chunk) chunks.push(toBuffer(chunk, rest[0]));
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof req.write;
    req.end = function (this: http.ClientRequest, ...args: unknown[]) {
      const [chunk] = args;
      if (chunk && typeof chunk !== 'function') {
        const body = toBuffer(chunk as Chunk, args[1]);
        // A read sent in one piece (as the SDK does) asks for its consumed capacity.
        if (isRead && chunks.length === 0 && !this.headersSent) {
          const asked = askForConsumedCapacity(body);
          if (asked !== body) {
            this.setHeader('content-length', asked.length);
            chunks.push(asked);
            const callback = args.find((a) => typeof a === 'function');
            return (end as (...a: unknown[]) => http.ClientRequest).call(this, asked, callback);
          }
        }
        chunks.push(body);
      }
      return (end as (...a: unknown[]) => http.ClientRequest).apply(this, args);
    } as typeof req.end;
    req.once('response', (res: http.IncomingMessage) => {
      if (res.statusCode !== 200) return;
      if (isWrite) {
        let input: Record<string, unknown>;
        try {
          input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          // Not the JSON the SDK sends: nothing to count, but some table changed.
          wrote(['*']);
          return;
        }
        const second = Math.floor(Date.now() / 1000);
        for (const w of itemWrites(operation, input, partitionKeyOf)) {
          writes.push([operation, second, w.table, w.key ?? null, w.units, w.transactional ? 1 : 0]);
        }
        wrote(tablesWritten(operation, input));
        options.onRecord?.();
        return;
      }
      // The body is watched as the parser pushes it, without reading it: the SDK still reads it as it came.
      const body: Buffer[] = [];
      const push = res.push;
      res.push = function (this: http.IncomingMessage, chunk: unknown, encoding?: BufferEncoding) {
        if (chunk === null) {
          for (const [table, units] of consumedReadUnits(Buffer.concat(body).toString('utf8'))) {
            reads.push([operation, table, units]);
          }
          options.onRecord?.();
        } else if (chunk) body.push(toBuffer(chunk as Chunk, encoding));
        return push.call(this, chunk, encoding);
      };
    });
  };

  const principal = options.principal ? compilePolicies(options.principal) : undefined;
  let dynamoFaults: readonly DynamoFaultRule[] = options.dynamoFaults ?? [];
  const currentFaults = () => dynamoFaults;

  const request = http.request;
  const metered = function (this: unknown, ...args: unknown[]) {
    const req = (request as (...a: unknown[]) => http.ClientRequest).apply(this, args);
    const target = args[0];
    if (target && typeof target === 'object' && !(target instanceof URL)) {
      const o = target as http.RequestOptions;
      const amzTarget = Number(o.port) === options.port ? header(o.headers, 'x-amz-target') : undefined;
      if (amzTarget?.startsWith(DYNAMODB)) observe(req, amzTarget.slice(DYNAMODB.length));
      // Free when off: a call is only looked at while some refusal rule is in force.
      if (dynamoFaults.length > 0 && amzTarget?.startsWith(DYNAMODB))
        refuseSome(req, amzTarget.slice(DYNAMODB.length), currentFaults);
      // Installed last, so that it sees the body first (as the caller sent it) and can stop it.
      if (principal && (amzTarget?.startsWith(DYNAMODB) || amzTarget?.startsWith(STREAMS))) {
        enforce(req, principal, amzTarget.slice(amzTarget.indexOf('.') + 1));
      }
    }
    return req;
  };
  http.request = metered as typeof http.request;

  return {
    take() {
      if (writes.length === 0 && reads.length === 0) return undefined;
      const batch = { writes, reads };
      writes = [];
      reads = [];
      return batch;
    },
    setDynamoFaults(rules) {
      dynamoFaults = rules;
    },
  };
}
