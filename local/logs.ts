import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AwsEndpoint } from './aws-endpoint';

/**
 * The functions' logs as the local cloud writes them: one file per function
 * in the log directory, `<logical id>.log`, one line per line the function
 * wrote (Powertools' JSON, EMF documents), each JSON line written during an
 * invocation stamped with its `requestId` (see local/lambda/worker.js).
 * `readLogLines` finds one request's lines there: by the invocation's request
 * id, or by the correlation id the platform's log lines carry.
 */

/** Where the lines are served on the AWS endpoint. */
export const LOGS_PATH = '/_local/logs';

export interface LogLine {
  /** The function that wrote it: its logical id, the log file's name. */
  readonly functionName: string;
  /** Epoch ms, when the line says: Powertools' `timestamp`, an EMF document's `_aws.Timestamp`, or `time`. */
  readonly time?: number;
  /** The invocation that wrote it: the local runtime's stamp, or Powertools' `function_request_id`. */
  readonly requestId?: string;
  readonly correlationId?: string;
  readonly level?: string;
  readonly message?: string;
  /** The line parsed, when it is a JSON object. */
  readonly fields?: Record<string, unknown>;
  /** The line as written. */
  readonly text: string;
}

export interface LogQuery {
  readonly logDir: string;
  /** A function's logical id, or a prefix naming one function (`SagaSteps`); every function's when absent. */
  readonly functionName?: string;
  /** Lines of this correlation id. */
  readonly correlationId?: string;
  /** Lines of this invocation (or these). With a correlation id as well, a line with either matches. */
  readonly requestId?: string | readonly string[];
  /** Epoch ms bounds, inclusive, on the lines that say when they were written. */
  readonly since?: number;
  readonly until?: number;
}

const REQUEST_ID_KEYS = ['requestId', 'function_request_id', 'awsRequestId'] as const;
const CORRELATION_ID_KEYS = ['correlationId', 'correlation_id'] as const;
const FUNCTION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

const firstString = (fields: Record<string, unknown>, keys: readonly string[]) => {
  for (const key of keys) {
    const value = fields[key];
    if (typeof value === 'string') return value;
  }
  return undefined;
};

function timeOf(fields: Record<string, unknown>): number | undefined {
  const emf = (fields._aws as { Timestamp?: unknown } | undefined)?.Timestamp;
  if (typeof emf === 'number') return emf;
  for (const key of ['timestamp', 'time']) {
    const value = fields[key];
    if (typeof value === 'number') return value;
    if (typeof value === 'string') {
      const ms = Date.parse(value);
      if (!Number.isNaN(ms)) return ms;
    }
  }
  return undefined;
}

/** One line of a function's log file, read into what the log's readers filter and show. */
export function parseLogLine(text: string, functionName: string): LogLine {
  let parsed: unknown;
  if (text.startsWith('{')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { functionName, text };
  const fields = parsed as Record<string, unknown>;
  const time = timeOf(fields);
  const requestId = firstString(fields, REQUEST_ID_KEYS);
  const correlationId = firstString(fields, CORRELATION_ID_KEYS);
  const level = typeof fields.level === 'string' ? fields.level : undefined;
  const message = typeof fields.message === 'string' ? fields.message : undefined;
  return {
    functionName,
    ...(time === undefined ? {} : { time }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(correlationId === undefined ? {} : { correlationId }),
    ...(level === undefined ? {} : { level }),
    ...(message === undefined ? {} : { message }),
    fields,
    text,
  };
}

/** Whether a line answers the query (its request id, correlation id and time; the function is the file's). */
export function lineMatches(line: LogLine, query: Omit<LogQuery, 'logDir' | 'functionName'>): boolean {
  const requestIds = query.requestId === undefined ? [] : [query.requestId].flat();
  if (requestIds.length > 0 || query.correlationId !== undefined) {
    const byRequest = line.requestId !== undefined && requestIds.includes(line.requestId);
    const byCorrelation = query.correlationId !== undefined && line.correlationId === query.correlationId;
    if (!byRequest && !byCorrelation) return false;
  }
  if (query.since !== undefined && line.time !== undefined && line.time < query.since) return false;
  if (query.until !== undefined && line.time !== undefined && line.time > query.until) return false;
  return true;
}

/** The functions that have a log file in `logDir`, by logical id. */
export async function loggedFunctions(logDir: string): Promise<string[]> {
  const names = await readdir(logDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  return names
    .filter((n) => n.endsWith('.log'))
    .map((n) => n.slice(0, -'.log'.length))
    .sort();
}

/** An error naming what the caller got wrong (an unknown function): the endpoint answers it with 404. */
export class LogQueryError extends Error {}

/** The logical id a `functionName` query names: itself, or the one function whose id starts with it. */
export async function resolveFunction(logDir: string, functionName: string): Promise<string> {
  const functions = await loggedFunctions(logDir);
  if (!FUNCTION_NAME.test(functionName)) throw new LogQueryError(`not a function name: ${functionName}`);
  if (functions.includes(functionName)) return functionName;
  const candidates = functions.filter((f) => f.startsWith(functionName));
  if (candidates.length === 1) return candidates[0]!;
  throw new LogQueryError(
    candidates.length === 0
      ? `no log of a function ${functionName} (functions: ${functions.join(', ') || 'none yet'})`
      : `${functionName} names several functions: ${candidates.join(', ')}`,
  );
}

/**
 * The lines of the functions' logs that answer the query, in the order they
 * were written (by their time across functions; a line that tells no time
 * keeps its place after the line before it in its file).
 */
export async function readLogLines(query: LogQuery): Promise<LogLine[]> {
  const functions =
    query.functionName === undefined
      ? await loggedFunctions(query.logDir)
      : [await resolveFunction(query.logDir, query.functionName)];
  // A line that contains none of the ids cannot match: most lines are skipped without parsing.
  const needles = [...(query.requestId === undefined ? [] : [query.requestId].flat())];
  if (query.correlationId !== undefined) needles.push(query.correlationId);
  const found: { line: LogLine; at: number; order: number }[] = [];
  for (const functionName of functions) {
    let at = 0;
    const lines = createInterface({
      input: createReadStream(join(query.logDir, `${functionName}.log`), { encoding: 'utf8' }),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    for await (const text of lines) {
      if (text === '') continue;
      if (needles.length > 0 && !needles.some((n) => text.includes(n))) continue;
      const line = parseLogLine(text, functionName);
      at = line.time ?? at;
      if (lineMatches(line, query)) found.push({ line, at, order: found.length });
    }
  }
  found.sort((a, b) => a.at - b.at || a.order - b.order);
  return found.map((f) => f.line);
}

const DEFAULT_LINES = 1000;
const MAX_LINES = 5000;

/**
 * `GET /_local/logs?requestId=…&correlationId=…&function=…&since=…&until=…&limit=…`:
 * the lines of one request (at least a request id, repeatable, or a
 * correlation id), oldest first, the first `limit` of them.
 */
export async function logsAnswer(
  logDir: string | undefined,
  query: URLSearchParams,
): Promise<{ status: number; body: unknown }> {
  if (logDir === undefined) {
    return {
      status: 404,
      body: {
        message: "the functions' output goes to the terminal (--echo-function-logs): no log files to read",
      },
    };
  }
  const requestIds = query.getAll('requestId').filter(Boolean);
  const correlationId = query.get('correlationId') || undefined;
  if (requestIds.length === 0 && correlationId === undefined) {
    return { status: 400, body: { message: 'give a requestId or a correlationId' } };
  }
  const bound = (name: string) => {
    const value = query.get(name);
    if (value === null || value === '') return undefined;
    return /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  };
  const since = bound('since');
  const until = bound('until');
  for (const [name, ms] of [['since', since] as const, ['until', until] as const]) {
    if (Number.isNaN(ms)) {
      return {
        status: 400,
        body: { message: `${name}: not a time (epoch ms or ISO 8601): ${query.get(name)}` },
      };
    }
  }
  const limit = Math.min(MAX_LINES, Math.max(1, Number(query.get('limit')) || DEFAULT_LINES));
  try {
    const functionName = query.get('function') || undefined;
    const lines = await readLogLines({
      logDir,
      ...(functionName === undefined ? {} : { functionName }),
      ...(correlationId === undefined ? {} : { correlationId }),
      ...(requestIds.length === 0 ? {} : { requestId: requestIds }),
      ...(since === undefined ? {} : { since }),
      ...(until === undefined ? {} : { until }),
    });
    return { status: 200, body: { lines: lines.slice(0, limit), truncated: lines.length > limit } };
  } catch (error) {
    if (error instanceof LogQueryError) return { status: 404, body: { message: error.message } };
    throw error;
  }
}

/** Serves `GET /_local/logs` on the AWS endpoint (the saga console reads a state's lines there). */
export function serveLogs(endpoint: AwsEndpoint, logDir: string | undefined) {
  endpoint.servePath('GET', new RegExp(`^${LOGS_PATH}$`), (_match, _body, query) =>
    logsAnswer(logDir, query),
  );
}
