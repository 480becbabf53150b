// Loaded inside each sandbox (bundled to plain CommonJS by the runtime, see `meterBundle`): observes
// the function's own DynamoDB calls, which go straight to DynamoDB Local (AWS_ENDPOINT_URL_DYNAMODB),
// and turns them into what the local cloud counts, so that its main thread neither proxies nor
// parses them. The calls come two ways: through the functions' shared client, which takes the
// sandbox's own transport (`clientConfig`, see dynamo-transport.ts), and through `node:http` from
// any other client. `import = require` keeps the real `node:http` module object, whose `request`
// the AWS SDK's NodeHttpHandler reads at its first call.
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
import { AccessDeniedError, compilePolicies, type PrincipalPolicies } from '../iam';
import { dynamoAuthorizations } from '../iam-actions';
import { awsRefusal, type DynamoFaultRule, refusalFor } from './dynamo-faults';
import {
  type DynamoTransportConfig,
  dynamoTransport,
  header,
  type LocalAnswer,
  localAnswerHeaders,
  type MeteredCall,
} from './dynamo-transport';

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
  /**
   * What the functions' shared DynamoDB client takes in the sandbox (see
   * functions/shared/aws.ts): the transport that carries its calls to
   * DynamoDB Local through this meter.
   */
  readonly clientConfig: DynamoTransportConfig;
}

const DYNAMODB = 'DynamoDB_20120810.';
const STREAMS = 'DynamoDBStreams_20120810.';

type Chunk = string | Buffer | Uint8Array;
const toBuffer = (chunk: Chunk, encoding?: unknown) =>
  typeof chunk === 'string'
    ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
    : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);

/** DynamoDB's JSON protocol names an error by its shape's full name. */
const errorType = (code: string) => `com.amazonaws.dynamodb.v20120810#${code}`;

/**
 * Answers a request here, as DynamoDB would have answered it, without sending
 * it: the caller gets the answer's status and body, and the connection the
 * request had taken is dropped.
 */
function answerLocally(req: http.ClientRequest, answer: LocalAnswer) {
  const payload = Buffer.from(JSON.stringify(answer.body));
  const response = Object.assign(new PassThrough(), {
    statusCode: answer.status,
    statusMessage: answer.status === 400 ? 'Bad Request' : 'Error',
    headers: localAnswerHeaders(answer, payload.length),
  });
  response.end(payload);
  // The request never goes out: its socket is dropped, and the error that makes comes after the answer.
  req.on('error', () => undefined);
  req.emit('response', response);
  req.destroy();
}

/**
 * Observes the DynamoDB calls made through `node:http` (a client other than
 * the functions' shared one): the body is taken when the SDK sends it whole,
 * with `end`; a call stopped here is answered locally and never sent; a read's
 * answer is watched as the parser pushes it, without reading it, so the SDK
 * still reads it as it came.
 */
function observe(req: http.ClientRequest, call: (body: Buffer) => MeteredCall) {
  const chunks: Buffer[] = [];
  const write = req.write;
  const end = req.end;
  let metered: MeteredCall | undefined;
  req.write = function (this: http.ClientRequest, chunk: Chunk, ...rest: unknown[]) {
    if (chunk) chunks.push(toBuffer(chunk, rest[0]));
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof req.write;
  req.end = function (this: http.ClientRequest, ...args: unknown[]) {
    const [chunk] = args;
    if (chunk && typeof chunk !== 'function') chunks.push(toBuffer(chunk as Chunk, args[1]));
    metered = call(Buffer.concat(chunks));
    const refusal = metered.refusal();
    if (refusal) {
      answerLocally(this, refusal);
      return this;
    }
    // A body sent in one piece (as the SDK does) may change: a read asks for its consumed capacity.
    if (chunk && typeof chunk !== 'function' && chunks.length === 1 && !this.headersSent) {
      const outgoing = metered.outgoing();
      this.setHeader('content-length', outgoing.length);
      const callback = args.find((a) => typeof a === 'function');
      return (end as (...a: unknown[]) => http.ClientRequest).call(this, outgoing, callback);
    }
    return (end as (...a: unknown[]) => http.ClientRequest).apply(this, args);
  } as typeof req.end;
  req.once('response', (res: http.IncomingMessage) => {
    if (res.statusCode !== 200 || !metered) return;
    const body: Buffer[] = [];
    const push = res.push;
    res.push = function (this: http.IncomingMessage, chunk: unknown, encoding?: BufferEncoding) {
      if (chunk === null) metered!.succeeded(() => Buffer.concat(body).toString('utf8'));
      else if (chunk) body.push(toBuffer(chunk as Chunk, encoding));
      return push.call(this, chunk, encoding);
    };
  });
}

/**
 * Installs the meter in this sandbox: the functions' shared client carries
 * its calls through `clientConfig`'s transport, and `http.request` is wrapped
 * so that the calls of any other client to DynamoDB Local's port are metered
 * as well. Either way a successful write is recorded by item (the billing
 * rules of `capacity.ts`, transactions doubled) and reported at once to wake
 * the table's stream pollers; a read is sent with `ReturnConsumedCapacity:
 * TOTAL` (unless the caller asked already) and recorded with the units
 * DynamoDB Local reports — as the local AWS endpoint does for the calls it
 * proxies, so both give the same numbers; a call the role does not allow, or
 * a fault rule refuses, is answered here. Nothing else about a call changes.
 */
export function installDynamoMeter(options: MeterOptions): Meter {
  let writes: MeteredWrite[] = [];
  let reads: MeteredRead[] = [];
  let written: Set<string> | undefined;
  const partitionKeyOf = (table: string) => options.partitionKeys[table];
  const principal = options.principal ? compilePolicies(options.principal) : undefined;
  let dynamoFaults: readonly DynamoFaultRule[] = options.dynamoFaults ?? [];

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

  /** A call of `target` (its `x-amz-target`) with `body` as the caller sent it; undefined: not DynamoDB's. */
  const call = (target: string | undefined, body: Buffer): MeteredCall | undefined => {
    const ofDynamo = target?.startsWith(DYNAMODB) === true;
    if (!target || (!ofDynamo && !target.startsWith(STREAMS))) return undefined;
    const operation = target.slice(target.indexOf('.') + 1);
    const isRead = ofDynamo && READ_OPERATIONS.has(operation);
    const isWrite = ofDynamo && WRITE_OPERATIONS.has(operation);
    // Parsed once, when first needed: the IAM check, a refusal's answer and a write's count share it.
    let input: Record<string, unknown> | undefined;
    const parsed = () => {
      input ??= JSON.parse(body.length > 0 ? body.toString('utf8') : '{}') as Record<string, unknown>;
      return input;
    };
    return {
      refusal() {
        if (principal) {
          let denial: { code: string; message: string } | undefined;
          try {
            for (const { action, resource } of dynamoAuthorizations(operation, parsed())) {
              const decision = principal.decide(action, resource);
              if (decision !== 'allowed') {
                denial = new AccessDeniedError(principal.arn, action, resource, decision);
                break;
              }
            }
          } catch (error) {
            // Never let through unchecked: a request the check cannot read is refused, saying so.
            denial = {
              code: 'AccessDeniedException',
              message: `local IAM check: ${(error as Error).message}`,
            };
          }
          if (denial)
            return {
              status: 400,
              body: { __type: errorType(denial.code), message: denial.message },
              requestIdPrefix: 'local-iam',
            };
        }
        // Free when off: a call is only looked at while some refusal rule is in force.
        const rule = ofDynamo && dynamoFaults.length > 0 ? refusalFor(dynamoFaults, operation) : undefined;
        if (!rule) return undefined;
        let refusedInput: Record<string, unknown> = {};
        try {
          refusedInput = parsed();
        } catch {
          // Not the JSON the SDK sends: refused all the same, as one item.
        }
        return { ...awsRefusal(rule.error, operation, refusedInput), requestIdPrefix: 'local-fault' };
      },
      outgoing: () => (isRead ? askForConsumedCapacity(body) : body),
      succeeded(response) {
        if (isWrite) {
          let writeInput: Record<string, unknown>;
          try {
            writeInput = parsed();
          } catch {
            // Not the JSON the SDK sends: nothing to count, but some table changed.
            wrote(['*']);
            return;
          }
          const second = Math.floor(Date.now() / 1000);
          for (const w of itemWrites(operation, writeInput, partitionKeyOf)) {
            writes.push([operation, second, w.table, w.key ?? null, w.units, w.transactional ? 1 : 0]);
          }
          wrote(tablesWritten(operation, writeInput));
          options.onRecord?.();
        } else if (isRead) {
          for (const [table, units] of consumedReadUnits(response())) reads.push([operation, table, units]);
          options.onRecord?.();
        }
      },
    };
  };

  const request = http.request;
  const metered = function (this: unknown, ...args: unknown[]) {
    const req = (request as (...a: unknown[]) => http.ClientRequest).apply(this, args);
    const target = args[0];
    if (target && typeof target === 'object' && !(target instanceof URL)) {
      const o = target as http.RequestOptions;
      const amzTarget = Number(o.port) === options.port ? header(o.headers, 'x-amz-target') : undefined;
      if (amzTarget && (amzTarget.startsWith(DYNAMODB) || amzTarget.startsWith(STREAMS)))
        observe(req, (body) => call(amzTarget, body)!);
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
    clientConfig: dynamoTransport({ port: options.port, call }),
  };
}
