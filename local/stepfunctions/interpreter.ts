/**
 * The ASL interpreter, aws-local-stepfunctions, as this project loads it:
 * its types, and the ASL `Error` and `Cause` of what it throws.
 */
// The package is an ES module with a CommonJS build; this project compiles to CommonJS.
type Interpreter = typeof import('aws-local-stepfunctions', { with: { 'resolution-mode': 'import' }});
export const sfn = require('aws-local-stepfunctions') as Interpreter;

export type StateMachine = InstanceType<Interpreter['StateMachine']>;
export type StateMachineDefinition = ConstructorParameters<Interpreter['StateMachine']>[0];
type RunOptions = NonNullable<Parameters<StateMachine['run']>[1]>;
type Run = ReturnType<StateMachine['run']>;
export type JsonValue = Parameters<StateMachine['run']>[0];
export type EventLog = Run['eventLogs'] extends AsyncGenerator<infer E> ? E : never;
export type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;

/** The cause the interpreter gives a Fail state without `Cause` (AWS gives none). */
const FAIL_STATE_DEFAULT_CAUSE = 'Execution failed because of a Fail state';

/** A value as JSON text (`null` for undefined), as the history and the API carry it. */
export const json = (value: unknown) => JSON.stringify(value ?? null);

/** What an interpreter error reports as ASL `Error` and `Cause` (as its own event log does). */
export function errorAndCause(error: unknown): { error?: string; cause?: string } {
  if (typeof error !== 'object' || error === null) return { error: 'States.Runtime', cause: String(error) };
  const outer = error as Error;
  const inner = (
    error instanceof sfn.ExecutionError && typeof outer.cause === 'object' && outer.cause !== null
      ? outer.cause
      : outer
  ) as Error;
  let cause: unknown = inner.cause ?? inner.message;
  if (cause === FAIL_STATE_DEFAULT_CAUSE) cause = undefined;
  return {
    // A Fail state without `Error` has none.
    ...(inner.name === 'FailStateError' ? {} : { error: inner.name }),
    ...(cause === undefined || cause === ''
      ? {}
      : { cause: typeof cause === 'string' ? cause : json(cause) }),
  };
}
