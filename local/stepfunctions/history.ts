/**
 * An execution's history as AWS records it: events numbered in order, from
 * the interpreter's event log and from each Task attempt's start and end.
 */
import { REGION } from '../assembly';
import type { TaskSpec } from './definitions';
import type { Execution } from './executions';
import { type EventLog, errorAndCause, type JsonValue, json } from './interpreter';

/** The `…Details` of a value in the history: kept whole here. */
export const NOT_TRUNCATED = { truncated: false };
/** Epoch seconds, as the JSON protocol sends timestamps. */
export const seconds = (ms: number) => ms / 1000;

/** A service integration's `resourceType` and `resource` in the history: `arn:aws:states:::dynamodb:getItem` is dynamodb, getItem. */
function integrationOf(task: TaskSpec) {
  const [resourceType = '', resource = ''] = task.resource.slice('arn:aws:states:::'.length).split(':');
  return { resourceType, resource };
}

/** Appends an event to the history, unless the execution has closed. */
function record(execution: Execution, type: string, details: Record<string, unknown> = {}, at = Date.now()) {
  if (execution.closed) return;
  const id = execution.events.length + 1;
  // As AWS numbers them: the first state entered follows from no event.
  execution.events.push({
    id,
    previousEventId: id === 2 ? 0 : id - 1,
    timestamp: seconds(at),
    type,
    ...details,
  });
}

/** Records the execution's terminal event: nothing is recorded after it. */
function close(execution: Execution, type: string, details: Record<string, unknown>, at: number) {
  record(execution, type, details, at);
  execution.closed = true;
  execution.stopDate ??= at;
}

/** Turns the interpreter's event log into AWS history events (Task attempts are recorded by TaskRunner.run). */
export function recordEvent(execution: Execution, event: EventLog, stats: { stateTransitions: number }) {
  // Long: one case per event type of the interpreter's log, each mapped to its history event in place.
  const at = event.timestamp;
  switch (event.type) {
    case 'ExecutionStarted':
      record(
        execution,
        'ExecutionStarted',
        {
          executionStartedEventDetails: {
            input: execution.input,
            inputDetails: NOT_TRUNCATED,
            ...(execution.machine.roleArn ? { roleArn: execution.machine.roleArn } : {}),
          },
        },
        at,
      );
      return;
    case 'StateEntered': {
      const { name, type, input } = event.state;
      if (!execution.closed) stats.stateTransitions++;
      execution.lastState = name;
      record(
        execution,
        `${type}StateEntered`,
        { stateEnteredEventDetails: { name, input: json(input), inputDetails: NOT_TRUNCATED } },
        at,
      );
      if (type === 'Parallel' || type === 'Map') record(execution, `${type}StateStarted`, {}, at);
      return;
    }
    case 'StateExited': {
      const { name, type, output } = event.state;
      if (type === 'Parallel' || type === 'Map') record(execution, `${type}StateSucceeded`, {}, at);
      record(
        execution,
        `${type}StateExited`,
        { stateExitedEventDetails: { name, output: json(output), outputDetails: NOT_TRUNCATED } },
        at,
      );
      return;
    }
    case 'StateFailed':
      if (event.state.type === 'Parallel' || event.state.type === 'Map') {
        record(execution, `${event.state.type}StateFailed`, {}, at);
      }
      return;
    case 'MapIterationStarted':
    case 'MapIterationSucceeded':
    case 'MapIterationFailed': {
      const key = `${event.type.charAt(0).toLowerCase()}${event.type.slice(1)}EventDetails`;
      record(execution, event.type, { [key]: { name: event.parentState.name, index: event.index } }, at);
      return;
    }
    case 'ExecutionSucceeded':
      close(
        execution,
        'ExecutionSucceeded',
        { executionSucceededEventDetails: { output: json(event.output), outputDetails: NOT_TRUNCATED } },
        at,
      );
      return;
    case 'ExecutionFailed': {
      const failure = errorAndCause(Object.assign(new Error(), { name: event.Error, cause: event.Cause }));
      close(execution, 'ExecutionFailed', { executionFailedEventDetails: failure }, at);
      return;
    }
    case 'ExecutionTimeout':
      close(
        execution,
        'ExecutionTimedOut',
        { executionTimedOutEventDetails: { error: 'States.Timeout', cause: 'The execution timed out' } },
        at,
      );
      return;
    case 'ExecutionAborted':
      close(
        execution,
        'ExecutionAborted',
        { executionAbortedEventDetails: { ...execution.stopRequest } },
        at,
      );
      return;
    default:
      // StateRetried, StateCaught and Parallel branch events have no history event of their own.
      return;
  }
}

/** Records the attempt's start; returns the id of its scheduled event (none once the execution has closed). */
export function recordTaskStart(
  execution: Execution,
  task: TaskSpec,
  input: JsonValue,
  timeoutSeconds?: number,
): number | undefined {
  if (execution.closed) return undefined;
  const scheduled = execution.events.length + 1;
  const timeout = timeoutSeconds === undefined ? {} : { timeoutInSeconds: timeoutSeconds };
  if (task.kind !== 'function') {
    const integration = integrationOf(task);
    record(execution, 'TaskScheduled', {
      taskScheduledEventDetails: { ...integration, region: REGION, parameters: json(input), ...timeout },
    });
    record(execution, 'TaskStarted', { taskStartedEventDetails: integration });
  } else {
    record(execution, 'LambdaFunctionScheduled', {
      lambdaFunctionScheduledEventDetails: {
        resource: task.resource,
        input: json(input),
        inputDetails: NOT_TRUNCATED,
        ...timeout,
      },
    });
    record(execution, 'LambdaFunctionStarted');
  }
  return scheduled;
}

export function recordTaskEnd(
  execution: Execution,
  task: TaskSpec,
  outcome: 'Succeeded' | 'Failed' | 'TimedOut',
  details: Record<string, unknown>,
) {
  if (task.kind !== 'function') {
    record(execution, `Task${outcome}`, {
      [`task${outcome}EventDetails`]: { ...integrationOf(task), ...details },
    });
  } else {
    record(execution, `LambdaFunction${outcome}`, {
      [`lambdaFunction${outcome}EventDetails`]: details,
    });
  }
}
