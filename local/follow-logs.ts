import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runDirOf } from './cache-dir';
import { type CommandSpec, parseCommandLine } from './command-line';
import { type LogLine, parseLogLine } from './logs';

/**
 * `npm run logs`: the functions' log lines from the local cloud, merged in
 * time order, one request followed through every function and saga step by
 * its correlation id (the `x-correlation-id` the API answered with), and
 * with `-f` as they are written. A sandbox writes its function's lines (JSON,
 * Powertools' Logger) to one file per function in its run's `logs`
 * directory; every line carries the invocation's Lambda request id, and the
 * lines of a request its correlation id.
 */
/** `npm run logs`'s command line: its options, their meaning, its help (see command-line.ts). */
export const LOGS_COMMAND = {
  usage: 'npm run logs -- [options]',
  description:
    "The functions' log lines from the local cloud (npm start), merged in time order: all of them, one\n" +
    "function's, or one request's through every function and saga step.",
  options: {
    function: {
      type: 'string',
      short: 'F',
      value: 'NAME',
      defaultText: 'every function',
      description: "only this function's lines (part of its name, any case: orders, saga)",
    },
    'correlation-id': {
      type: 'string',
      short: 'c',
      value: 'ID',
      defaultText: 'every request',
      description: 'only the invocations that served this request (its x-correlation-id), in every function',
    },
    'request-id': {
      type: 'string',
      short: 'r',
      value: 'ID',
      defaultText: 'every invocation',
      description: "only this invocation's lines (its Lambda request id)",
    },
    follow: {
      type: 'boolean',
      short: 'f',
      default: false,
      description: 'keep printing lines as they are written, until Ctrl-C',
    },
    json: {
      type: 'boolean',
      default: false,
      description: 'print the lines as written (JSON), not formatted',
    },
    'log-dir': {
      type: 'string',
      value: 'DIR',
      defaultText: "the latest written of npm start's, debug build or not",
      description: "the run's logs directory",
    },
  },
  examples: [
    'npm run logs -- -c 1f0c6c1e-0b7e-4a63-9d43-2c0c5f3f6f4e    one request, through the API and the saga',
    "npm run logs -- -F saga -f                                  the saga's steps as they run",
  ],
} as const satisfies CommandSpec;

/** Which lines to show: by function, by request (correlation id or Lambda request id). */
export interface LogFilter {
  readonly functionName?: string;
  readonly correlationId?: string;
  readonly requestId?: string;
}

/**
 * A filter over lines in the order they were written. A request's
 * invocations are known by their lines that carry its correlation id; every
 * line of those invocations is shown, including the ones before the handler
 * knew the correlation id.
 */
export function lineFilter(filter: LogFilter): (line: LogLine) => boolean {
  const invocations = new Set<string>();
  const functionPart = filter.functionName?.toLowerCase();
  return (line) => {
    if (functionPart && !line.functionName.toLowerCase().includes(functionPart)) return false;
    const { requestId } = line;
    if (filter.requestId !== undefined && requestId !== filter.requestId) return false;
    if (filter.correlationId === undefined) return true;
    if (line.correlationId === filter.correlationId) {
      if (requestId !== undefined) invocations.add(requestId);
      return true;
    }
    return requestId !== undefined && invocations.has(requestId);
  };
}

const SHOWN_APART = new Set([
  'timestamp',
  'level',
  'message',
  'service',
  'sampling_rate',
  'function_arn',
  'function_memory_size',
  'function_name',
  'xray_trace_id',
  // The local runtime's stamp of the invocation (local/lambda/worker.js): function_request_id says it.
  'requestId',
]);

/** `12:00:00.123 SagaStepsFunction INFO saga step done {correlationId=…, …}` */
export function formatLine(line: LogLine): string {
  const { fields } = line;
  if (!fields) return `${line.functionName} ${line.text}`;
  const time = typeof fields.timestamp === 'string' ? fields.timestamp.slice(11, 23) : '';
  const rest = Object.entries(fields)
    .filter(([key]) => !SHOWN_APART.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${time} ${line.functionName} ${fields.level ?? ''} ${fields.message ?? ''}${rest ? `  ${rest}` : ''}`;
}

/** The function log files of a logs directory, by function name (the file's name). */
const logFiles = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith('.log'))
        .map((name) => ({ functionName: name.slice(0, -'.log'.length), path: join(dir, name) }))
    : [];

/** npm start's logs directory written last: `cdk.out`'s run, or `cdk.out.debug`'s (local/cloud.ts). */
export function defaultLogDir(): string {
  const candidates = ['cdk.out', 'cdk.out.debug']
    .map((assembly) => join(runDirOf(assembly), 'logs'))
    .filter(existsSync)
    .map((dir) => ({
      dir,
      written: Math.max(0, ...logFiles(dir).map((f) => statSync(f.path).mtimeMs)),
    }));
  candidates.sort((a, b) => b.written - a.written);
  return candidates[0]?.dir ?? join(runDirOf('cdk.out'), 'logs');
}

/** Reads what each file gained since the last call: whole lines only, the rest kept for the next. */
class LogReader {
  private readonly offsets = new Map<string, number>();
  private readonly partial = new Map<string, string>();

  constructor(private readonly dir: string) {}

  read(): LogLine[] {
    // Each file is in its own order; merged by time (a stable sort keeps a file's order, and a line
    // that tells no time its place after the line before it in its file).
    const lines: { line: LogLine; at: number }[] = [];
    for (const { functionName, path } of logFiles(this.dir)) {
      const from = this.offsets.get(path) ?? 0;
      const size = statSync(path).size;
      if (size <= from) continue;
      const buffer = Buffer.alloc(size - from);
      const fd = openSync(path, 'r');
      try {
        readSync(fd, buffer, 0, buffer.length, from);
      } finally {
        closeSync(fd);
      }
      this.offsets.set(path, size);
      const text = (this.partial.get(path) ?? '') + buffer.toString('utf8');
      const parts = text.split('\n');
      this.partial.set(path, parts.pop() ?? '');
      let at = 0;
      for (const part of parts) {
        if (!part.trim()) continue;
        const line = parseLogLine(part, functionName);
        at = line.time ?? at;
        lines.push({ line, at });
      }
    }
    return lines.sort((a, b) => a.at - b.at).map(({ line }) => line);
  }
}

function main() {
  const { values } = parseCommandLine(LOGS_COMMAND);
  const dir = values['log-dir'] ?? defaultLogDir();
  if (!existsSync(dir)) {
    process.stderr.write(
      `no function logs in ${dir}: start the local cloud (npm start) and send it a request\n`,
    );
    process.exitCode = 1;
    return;
  }
  const show = lineFilter({
    ...(values.function ? { functionName: values.function } : {}),
    ...(values['correlation-id'] ? { correlationId: values['correlation-id'] } : {}),
    ...(values['request-id'] ? { requestId: values['request-id'] } : {}),
  });
  const reader = new LogReader(dir);
  const print = () => {
    for (const line of reader.read()) {
      if (show(line)) process.stdout.write(`${values.json ? line.text : formatLine(line)}\n`);
    }
  };
  print();
  if (values.follow) setInterval(print, 250);
}

if (require.main === module) main();
