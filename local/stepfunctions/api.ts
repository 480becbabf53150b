/**
 * The shapes of the `AWSStepFunctions.*` API: its errors, execution names,
 * an execution described, and the pages of a history or a list with their
 * tokens.
 */
import {
  type Execution,
  type ExecutionStatus,
  type HistoryEvent,
  historyOf,
  KEEP_HISTORIES,
  type Machine,
} from './executions';
import { seconds } from './history';

/** An error the API answers with: `code` is AWS's name for it. */
export const awsError = (code: string, message: string) => Object.assign(new Error(message), { code });

/** Whether `name` may name an execution, by AWS's rules (1–80 characters; no whitespace, control or reserved characters). */
export function validName(name: string) {
  if (name.length < 1 || name.length > 80) return false;
  for (const char of name) {
    const code = char.codePointAt(0)!;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f) || /\s/.test(char)) return false;
    if ('<>{}[]?*"#%\\^|~`$&,;:/'.includes(char)) return false;
  }
  return true;
}

/** An execution as DescribeExecution answers it. */
export function describe(e: Execution) {
  return {
    executionArn: e.executionArn,
    stateMachineArn: e.machine.arn,
    name: e.name,
    status: e.status,
    startDate: seconds(e.startDate),
    ...(e.status !== 'RUNNING' && e.stopDate !== undefined ? { stopDate: seconds(e.stopDate) } : {}),
    input: e.input,
    inputDetails: { included: true },
    ...(e.output !== undefined ? { output: e.output, outputDetails: { included: true } } : {}),
    ...(e.error !== undefined ? { error: e.error } : {}),
    ...(e.cause !== undefined ? { cause: e.cause } : {}),
  };
}

/** A page of an execution's history, as GetExecutionHistory answers it. */
export function historyPage(execution: Execution, input: Record<string, unknown>) {
  if (execution.historyDropped) {
    throw awsError(
      'ExecutionHistoryNotKept',
      `the local cloud keeps the history of the last ${KEEP_HISTORIES} finished executions only`,
    );
  }
  const maxResults = Number(input.maxResults ?? 0);
  if (!Number.isInteger(maxResults) || maxResults < 0 || maxResults > 1000) {
    throw awsError('ValidationException', 'maxResults must be from 0 to 1000');
  }
  const pageSize = maxResults || 100;
  const reverse = input.reverseOrder === true;
  const { events } = historyOf(execution);
  let next = reverse ? events.length : 1;
  if (input.nextToken !== undefined)
    next = readToken(input.nextToken, `${execution.executionArn}|${reverse}`);
  const page: HistoryEvent[] = [];
  while (page.length < pageSize && next >= 1 && next <= events.length) {
    page.push(events[next - 1]!);
    next += reverse ? -1 : 1;
  }
  const withData = input.includeExecutionData !== false;
  return {
    events: withData ? page : page.map(withoutData),
    ...(next >= 1 && next <= events.length
      ? { nextToken: token(`${execution.executionArn}|${reverse}`, next) }
      : {}),
  };
}

/** A page of a state machine's executions of `kept` (in the order they started), as ListExecutions answers it. */
export function listPage(kept: Iterable<Execution>, machine: Machine, input: Record<string, unknown>) {
  const filter = input.statusFilter as ExecutionStatus | undefined;
  const maxResults = Number(input.maxResults ?? 0);
  if (!Number.isInteger(maxResults) || maxResults < 0 || maxResults > 1000) {
    throw awsError('ValidationException', 'maxResults must be from 0 to 1000');
  }
  const matching = [...kept]
    .filter((e) => e.machine === machine && (filter === undefined || e.status === filter))
    .reverse();
  const from = input.nextToken === undefined ? 0 : readToken(input.nextToken, `${machine.arn}|${filter}`);
  const page = matching.slice(from, from + (maxResults || 100));
  const next = from + page.length;
  return {
    executions: page.map((e) => ({
      executionArn: e.executionArn,
      stateMachineArn: machine.arn,
      name: e.name,
      status: e.status,
      startDate: seconds(e.startDate),
      ...(e.status !== 'RUNNING' && e.stopDate !== undefined ? { stopDate: seconds(e.stopDate) } : {}),
    })),
    ...(next < matching.length ? { nextToken: token(`${machine.arn}|${filter}`, next) } : {}),
  };
}

function token(scope: string, position: number) {
  return Buffer.from(JSON.stringify({ scope, position })).toString('base64url');
}

function readToken(token: unknown, scope: string): number {
  try {
    const parsed = JSON.parse(Buffer.from(String(token), 'base64url').toString('utf8')) as {
      scope?: unknown;
      position?: unknown;
    };
    if (parsed.scope === scope && Number.isInteger(parsed.position)) return parsed.position as number;
  } catch {
    // fall through
  }
  throw awsError('InvalidToken', 'Invalid Token');
}

const DATA_FIELDS = new Set(['input', 'inputDetails', 'output', 'outputDetails', 'parameters']);

function withoutData(event: HistoryEvent): HistoryEvent {
  return Object.fromEntries(
    Object.entries(event).map(([key, value]) =>
      key.endsWith('EventDetails') && value && typeof value === 'object'
        ? [key, Object.fromEntries(Object.entries(value).filter(([field]) => !DATA_FIELDS.has(field)))]
        : [key, value],
    ),
  ) as HistoryEvent;
}
