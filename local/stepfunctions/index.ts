import { randomUUID } from 'node:crypto';
import { setImmediate as nextMacrotask, setTimeout as sleep } from 'node:timers/promises';
import { ACCOUNT, type Assembly, REGION, type Resolve } from '../assembly';
import { AccessDeniedError } from '../iam';
import { FunctionError, type LambdaRuntime } from '../lambda/runtime';
import {
  type AslDefinition,
  MAX_TIMEOUT_SECONDS,
  runnableDefinition,
  type StateMachineSpec,
  stateMachineSpecs,
  type TaskSpec,
  taskSpecs,
} from './definitions';
import { DEFAULT_FAULT_ERROR, type FaultRule } from './faults';

export { type FaultRule, parseFaults } from './faults';

// The package is an ES module with a CommonJS build; this project compiles to CommonJS.
type Interpreter = typeof import('aws-local-stepfunctions', { with: { 'resolution-mode': 'import' }});
const sfn = require('aws-local-stepfunctions') as Interpreter;

type StateMachine = InstanceType<Interpreter['StateMachine']>;
type StateMachineDefinition = ConstructorParameters<Interpreter['StateMachine']>[0];
type RunOptions = NonNullable<Parameters<StateMachine['run']>[1]>;
type Run = ReturnType<StateMachine['run']>;
type JsonValue = Parameters<StateMachine['run']>[0];
type EventLog = Run['eventLogs'] extends AsyncGenerator<infer E> ? E : never;
type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

export interface HistoryEvent {
  readonly id: number;
  readonly previousEventId: number;
  /** Epoch seconds, as the JSON protocol sends timestamps. */
  readonly timestamp: number;
  readonly type: string;
  readonly [details: string]: unknown;
}

/**
 * A Task attempt that invoked a function: the function's logical id and the
 * invocation's request id (its `awsRequestId`, stamped on the lines it logged).
 */
export interface TaskInvocation {
  readonly functionName: string;
  readonly requestId: string;
}

/** An execution as the saga console reads it. */
export interface ConsoleExecution {
  readonly executionArn: string;
  readonly machine: { readonly arn: string; readonly name: string };
  readonly name: string;
  readonly status: ExecutionStatus;
  readonly startDate: number;
  readonly stopDate?: number;
  readonly input: string;
  readonly output?: string;
  readonly error?: string;
  readonly cause?: string;
  readonly lastState?: string;
  readonly events: readonly HistoryEvent[];
  /** The Task attempts that invoked a function, by the id of their `TaskScheduled` (or `LambdaFunctionScheduled`) event. */
  readonly invocations: ReadonlyMap<number, TaskInvocation>;
  readonly historyDropped?: true;
}

interface Machine extends StateMachineSpec {
  readonly tasks: ReadonlyMap<string, TaskSpec>;
  readonly interpreter: StateMachine;
}

interface Execution {
  readonly executionArn: string;
  readonly machine: Machine;
  readonly name: string;
  readonly input: string;
  readonly inputKey: string;
  readonly startDate: number;
  status: ExecutionStatus;
  output?: string;
  stopDate?: number;
  error?: string;
  cause?: string;
  readonly events: HistoryEvent[];
  readonly invocations: Map<number, TaskInvocation>;
  historyDropped?: true;
  /** The last state entered (one assignment per transition): the saga console tells a compensated saga by it. */
  lastState?: string;
  /** Set at the terminal event: nothing more is recorded, no Task starts. */
  closed: boolean;
  /** The Task state whose last attempt failed (its next attempt is a retry), until one succeeds. */
  failedTask?: string;
  stopRequest?: { error?: string; cause?: string };
  abort: () => void;
  done: Promise<void>;
}

/** How many finished executions are kept for Describe and List, and how many keep their history too. */
const KEEP_FINISHED = 50_000;
const KEEP_HISTORIES = 2_000;
const NOT_TRUNCATED = { truncated: false };
/** The cause the interpreter gives a Fail state without `Cause` (AWS gives none). */
const FAIL_STATE_DEFAULT_CAUSE = 'Execution failed because of a Fail state';

const awsError = (code: string, message: string) => Object.assign(new Error(message), { code });
const json = (value: unknown) => JSON.stringify(value ?? null);
const seconds = (ms: number) => ms / 1000;

/** A service integration's `resourceType` and `resource` in the history: `arn:aws:states:::dynamodb:getItem` is dynamodb, getItem. */
function integrationOf(task: TaskSpec) {
  const [resourceType = '', resource = ''] = task.resource.slice('arn:aws:states:::'.length).split(':');
  return { resourceType, resource };
}

/** A Task failure as the interpreter sees it: `name` is the ASL error, `message` the cause. */
class TaskFailure extends Error {
  constructor(error: string, cause: string) {
    super(cause);
    this.name = error;
  }
}

function taskFailure(error: unknown): TaskFailure {
  if (error instanceof TaskFailure) return error;
  if (error instanceof FunctionError) {
    // As Lambda reports a Node.js function error, and Step Functions passes on as the cause.
    const cause = JSON.stringify({
      errorMessage: error.message,
      errorType: error.errorType,
      trace: error.trace,
    });
    return new TaskFailure(error.errorType, cause);
  }
  return new TaskFailure('Lambda.ServiceException', error instanceof Error ? error.message : String(error));
}

/** What an interpreter error reports as ASL `Error` and `Cause` (as its own event log does). */
function errorAndCause(error: unknown): { error?: string; cause?: string } {
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

function validName(name: string) {
  if (name.length < 1 || name.length > 80) return false;
  for (const char of name) {
    const code = char.codePointAt(0)!;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f) || /\s/.test(char)) return false;
    if ('<>{}[]?*"#%\\^|~`$&,;:/'.includes(char)) return false;
  }
  return true;
}

/**
 * Step Functions for the local cloud. Each state machine of the template is
 * built once with aws-local-stepfunctions; every Task state runs a local
 * function through the interpreter's task override (a Task that is not a
 * local function is a startup error, never a call to AWS). Serves the
 * `AWSStepFunctions.*` operations with AWS's shapes and keeps an execution
 * history built from the interpreter's event log and the Task attempts.
 */
export class LocalStepFunctions {
  readonly stateMachines: { logicalId: string; arn: string; name: string; type: 'STANDARD' | 'EXPRESS' }[];
  /** `billedExpressMs`: each execution's duration rounded up to 100 ms, as Express workflows are billed. */
  readonly stats = {
    executions: 0,
    succeeded: 0,
    failed: 0,
    stateTransitions: 0,
    taskInvocations: 0,
    /** Task attempts that failed or timed out, and attempts that retried a state's failed attempt. */
    taskFailures: 0,
    taskRetries: 0,
    billedExpressMs: 0,
  };
  private readonly machines = new Map<string, Machine>();
  private readonly executions = new Map<string, Execution>();
  private readonly running = new Set<Execution>();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Finished executions, oldest first, from `finishedHead`; their histories are kept from `historyHead`. */
  private finished: Execution[] = [];
  private finishedHead = 0;
  private historyHead = 0;
  private readonly created = Date.now();
  private stopped = false;
  private started = 0;

  constructor(
    assembly: Assembly,
    resolve: Resolve,
    private readonly runtime: LambdaRuntime,
    log: (m: string) => void,
    /** Read at every Task attempt: the caller may change the rules in place while executions run. */
    private readonly faults: FaultRule[] = [],
    /**
     * Checks that the state machine's role may invoke a Task's function
     * (`lambda:InvokeFunction` on its ARN), at each attempt; throws the
     * AccessDeniedError to fail the Task with, as Step Functions does.
     */
    private readonly authorizeInvoke?: (
      machine: { logicalId: string; roleArn?: string },
      functionArn: string,
    ) => void,
    /**
     * Serves a `dynamodb:getItem` Task: checks the state machine's role and
     * reads the item from the DynamoDB engine, in this process (the engine
     * counts the read); rejects with the error's `code` (an AccessDeniedError
     * when the role may not read it).
     */
    private readonly getItem?: (
      machine: { logicalId: string; roleArn?: string },
      parameters: Record<string, unknown>,
    ) => Promise<Record<string, unknown>>,
  ) {
    for (const spec of stateMachineSpecs(assembly, resolve)) {
      const tasks = taskSpecs(spec, (name) => runtime.functionIdOf(name));
      let interpreter: StateMachine;
      try {
        interpreter = new sfn.StateMachine(
          runnableDefinition(spec.definition) as unknown as StateMachineDefinition,
          {
            validationOptions: { checkPaths: true, checkArn: true },
          },
        );
      } catch (error) {
        throw new Error(`state machine ${spec.logicalId}: ${(error as Error).message}`);
      }
      this.machines.set(spec.arn, { ...spec, tasks, interpreter });
    }
    for (const fault of faults) {
      if (![...this.machines.values()].some((m) => m.tasks.has(fault.state))) {
        throw new Error(`fault for ${fault.state}: no Task state of that name`);
      }
    }
    this.stateMachines = [...this.machines.values()].map(({ logicalId, arn, name, type }) => ({
      logicalId,
      arn,
      name,
      type,
    }));
    if (faults.length > 0) {
      log(`step functions: injecting faults ${faults.map((f) => `${f.state}@${f.rate}`).join(', ')}`);
    }
  }

  /** The `AWSStepFunctions.*` operations. */
  async handle(operation: string, input: Record<string, unknown>): Promise<unknown> {
    switch (operation) {
      case 'StartExecution': {
        const execution = this.start(this.machine(input.stateMachineArn), input.input, input.name);
        return { executionArn: execution.executionArn, startDate: seconds(execution.startDate) };
      }
      case 'StartSyncExecution': {
        const machine = this.machine(input.stateMachineArn);
        if (machine.type !== 'EXPRESS') {
          throw awsError(
            'StateMachineTypeNotSupported',
            'StartSyncExecution runs EXPRESS state machines only',
          );
        }
        const execution = this.start(machine, input.input, input.name);
        await execution.done;
        return {
          ...this.describe(execution),
          billingDetails: { billedMemoryUsedInMB: 64, billedDurationInMilliseconds: 100 },
        };
      }
      case 'DescribeExecution':
        return this.describe(this.execution(input.executionArn));
      case 'GetExecutionHistory':
        return this.history(this.execution(input.executionArn), input);
      case 'ListExecutions':
        return this.list(input);
      case 'StopExecution': {
        const execution = this.execution(input.executionArn);
        await this.stopExecution(
          execution,
          input.error as string | undefined,
          input.cause as string | undefined,
        );
        return { stopDate: seconds(execution.stopDate ?? Date.now()) };
      }
      case 'DescribeStateMachine': {
        const m = this.machine(input.stateMachineArn);
        return {
          stateMachineArn: m.arn,
          name: m.name,
          status: 'ACTIVE',
          definition: m.definitionText,
          ...(m.roleArn ? { roleArn: m.roleArn } : {}),
          type: m.type,
          creationDate: seconds(this.created),
        };
      }
      case 'ListStateMachines':
        return {
          stateMachines: [...this.machines.values()].map((m) => ({
            stateMachineArn: m.arn,
            name: m.name,
            type: m.type,
            creationDate: seconds(this.created),
          })),
        };
      default:
        throw awsError('UnknownOperationException', `Step Functions ${operation} is not served locally`);
    }
  }

  /** Starts an execution with `input` (a JSON value), as an EventBridge target does; takes the ARN or the logical id. */
  async startExecution(stateMachineArn: string, input: unknown, name?: string) {
    const byId = [...this.machines.values()].find((m) => m.logicalId === stateMachineArn);
    const execution = this.start(byId ?? this.machine(stateMachineArn), json(input), name);
    return { executionArn: execution.executionArn, startDate: seconds(execution.startDate) };
  }

  /** Executions started since this started (`stats` can be reset; this is not). */
  get executionsStarted(): number {
    return this.started;
  }

  /** The functions the state machines' Task states invoke (those named in the definitions). */
  get taskFunctionIds(): string[] {
    const ids = new Set<string>();
    for (const machine of this.machines.values()) {
      for (const task of machine.tasks.values()) if (task.functionId) ids.add(task.functionId);
    }
    return [...ids];
  }

  /**
   * The executions kept, newest first, for the saga console: read only when
   * the page asks, as they are (one array of references per request, nothing
   * computed per execution).
   */
  *executionsNewestFirst(): Generator<ConsoleExecution> {
    const all = [...this.executions.values()];
    for (let i = all.length - 1; i >= 0; i--) yield all[i]!;
  }

  /** One execution, with its history (unless no longer kept), for the saga console. */
  consoleExecution(arn: string): ConsoleExecution | undefined {
    return this.executions.get(arn);
  }

  /** A state machine's definition as deployed (read from the cloud assembly), by ARN. */
  definitionOf(stateMachineArn: string): AslDefinition | undefined {
    return this.machines.get(stateMachineArn)?.definition;
  }

  /** Executions running now. */
  get runningCount(): number {
    return this.running.size;
  }

  /** How many of the executions running now started more than `ms` ago. */
  runningLongerThan(ms: number): number {
    const startedBefore = Date.now() - ms;
    let late = 0;
    for (const execution of this.running) if (execution.startDate < startedBefore) late++;
    return late;
  }

  /** Resolves when every running execution has ended and every Task invocation has returned. */
  async drain(): Promise<void> {
    while (this.running.size > 0 || this.inFlight.size > 0) {
      await Promise.allSettled([...[...this.running].map((e) => e.done), ...this.inFlight]);
    }
  }

  /** Aborts every running execution (and refuses new ones). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(
      [...this.running].map((e) => this.stopExecution(e, 'States.Aborted', 'the local cloud stopped')),
    );
  }

  private machine(arn: unknown): Machine {
    if (typeof arn !== 'string' || !arn.startsWith('arn:'))
      throw awsError('InvalidArn', `invalid ARN: ${arn}`);
    const machine = this.machines.get(arn);
    if (!machine) throw awsError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
    return machine;
  }

  private execution(arn: unknown): Execution {
    if (typeof arn !== 'string' || !arn.startsWith('arn:'))
      throw awsError('InvalidArn', `invalid ARN: ${arn}`);
    const execution = this.executions.get(arn);
    if (!execution) throw awsError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return execution;
  }

  private start(machine: Machine, inputText: unknown, requestedName: unknown): Execution {
    if (this.stopped) throw awsError('ServiceUnavailable', 'the local cloud is stopping');
    if (requestedName !== undefined && (typeof requestedName !== 'string' || !validName(requestedName))) {
      throw awsError('InvalidName', `Invalid Name: '${requestedName}'`);
    }
    const input = inputText === undefined ? '{}' : String(inputText);
    let value: JsonValue;
    try {
      value = JSON.parse(input) as JsonValue;
    } catch {
      throw awsError('InvalidExecutionInput', `Invalid State Machine Execution Input: '${input}'`);
    }
    const name = (requestedName as string | undefined) ?? randomUUID();
    const inputKey = JSON.stringify(value);
    const base = `arn:aws:states:${REGION}:${ACCOUNT}`;
    const executionArn =
      machine.type === 'STANDARD'
        ? `${base}:execution:${machine.name}:${name}`
        : `${base}:express:${machine.name}:${name}:${randomUUID()}`;
    const existing = this.executions.get(executionArn);
    if (existing) {
      // AWS: the same name and input as an open execution is the same execution; otherwise an error.
      if (existing.status === 'RUNNING' && existing.inputKey === inputKey) return existing;
      throw awsError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
    }
    return this.launch(machine, executionArn, name, input, inputKey, value);
  }

  private launch(
    machine: Machine,
    executionArn: string,
    name: string,
    input: string,
    inputKey: string,
    value: JsonValue,
  ): Execution {
    const execution: Execution = {
      executionArn,
      machine,
      name,
      input,
      inputKey,
      startDate: Date.now(),
      status: 'RUNNING',
      events: [],
      invocations: new Map(),
      closed: false,
      abort: () => {},
      done: Promise.resolve(),
    };
    this.executions.set(executionArn, execution);
    this.running.add(execution);
    this.stats.executions++;
    this.started++;
    const handlers: TaskHandlers = {};
    for (const task of machine.tasks.values()) {
      handlers[task.state] = (taskInput) => this.runTask(execution, task, taskInput);
    }
    const run = machine.interpreter.run(value, {
      overrides: { taskResourceLocalHandlers: handlers },
      context: {
        Execution: {
          Id: executionArn,
          Name: name,
          ...(machine.roleArn ? { RoleArn: machine.roleArn } : {}),
          RedriveCount: 0,
        },
        StateMachine: { Id: machine.arn, Name: machine.name },
      },
    });
    execution.abort = run.abort;
    const history = (async () => {
      for await (const event of run.eventLogs) this.onEvent(execution, event);
    })();
    execution.done = Promise.allSettled([run.result, history]).then(([outcome]) =>
      this.finish(execution, outcome),
    );
    return execution;
  }

  private record(execution: Execution, type: string, details: Record<string, unknown> = {}, at = Date.now()) {
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

  private close(execution: Execution, type: string, details: Record<string, unknown>, at: number) {
    this.record(execution, type, details, at);
    execution.closed = true;
    execution.stopDate ??= at;
  }

  /** Turns the interpreter's event log into AWS history events (Task attempts are recorded by runTask). */
  private onEvent(execution: Execution, event: EventLog) {
    const at = event.timestamp;
    switch (event.type) {
      case 'ExecutionStarted':
        this.record(
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
        if (!execution.closed) this.stats.stateTransitions++;
        execution.lastState = name;
        this.record(
          execution,
          `${type}StateEntered`,
          { stateEnteredEventDetails: { name, input: json(input), inputDetails: NOT_TRUNCATED } },
          at,
        );
        if (type === 'Parallel' || type === 'Map') this.record(execution, `${type}StateStarted`, {}, at);
        return;
      }
      case 'StateExited': {
        const { name, type, output } = event.state;
        if (type === 'Parallel' || type === 'Map') this.record(execution, `${type}StateSucceeded`, {}, at);
        this.record(
          execution,
          `${type}StateExited`,
          { stateExitedEventDetails: { name, output: json(output), outputDetails: NOT_TRUNCATED } },
          at,
        );
        return;
      }
      case 'StateFailed':
        if (event.state.type === 'Parallel' || event.state.type === 'Map') {
          this.record(execution, `${event.state.type}StateFailed`, {}, at);
        }
        return;
      case 'MapIterationStarted':
      case 'MapIterationSucceeded':
      case 'MapIterationFailed': {
        const key = `${event.type.charAt(0).toLowerCase()}${event.type.slice(1)}EventDetails`;
        this.record(
          execution,
          event.type,
          { [key]: { name: event.parentState.name, index: event.index } },
          at,
        );
        return;
      }
      case 'ExecutionSucceeded':
        this.close(
          execution,
          'ExecutionSucceeded',
          { executionSucceededEventDetails: { output: json(event.output), outputDetails: NOT_TRUNCATED } },
          at,
        );
        return;
      case 'ExecutionFailed': {
        const failure = errorAndCause(Object.assign(new Error(), { name: event.Error, cause: event.Cause }));
        this.close(execution, 'ExecutionFailed', { executionFailedEventDetails: failure }, at);
        return;
      }
      case 'ExecutionTimeout':
        this.close(
          execution,
          'ExecutionTimedOut',
          { executionTimedOutEventDetails: { error: 'States.Timeout', cause: 'The execution timed out' } },
          at,
        );
        return;
      case 'ExecutionAborted':
        this.close(
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

  private finish(execution: Execution, outcome: PromiseSettledResult<JsonValue>) {
    execution.closed = true;
    execution.abort = () => {}; // lets the run's state go
    execution.stopDate ??= Date.now();
    if (outcome.status === 'fulfilled') {
      execution.status = 'SUCCEEDED';
      execution.output = json(outcome.value);
    } else if (outcome.reason instanceof sfn.ExecutionAbortedError) {
      execution.status = 'ABORTED';
      Object.assign(execution, execution.stopRequest);
    } else if (outcome.reason instanceof sfn.ExecutionTimeoutError) {
      execution.status = 'TIMED_OUT';
      execution.error = 'States.Timeout';
      execution.cause = 'The execution timed out';
    } else {
      execution.status = 'FAILED';
      Object.assign(execution, errorAndCause(outcome.reason));
    }
    if (execution.status === 'SUCCEEDED') this.stats.succeeded++;
    else this.stats.failed++;
    this.stats.billedExpressMs += Math.max(
      100,
      Math.ceil((execution.stopDate - execution.startDate) / 100) * 100,
    );
    this.running.delete(execution);
    this.finished.push(execution);
    while (this.finished.length - this.historyHead > KEEP_HISTORIES) {
      const old = this.finished[this.historyHead++]!;
      old.events.length = 0;
      old.invocations.clear();
      old.historyDropped = true;
    }
    while (this.finished.length - this.finishedHead > KEEP_FINISHED) {
      this.executions.delete(this.finished[this.finishedHead++]!.executionArn);
    }
    if (this.finishedHead > 10_000) {
      this.finished = this.finished.slice(this.finishedHead);
      this.historyHead -= this.finishedHead;
      this.finishedHead = 0;
    }
  }

  private async stopExecution(execution: Execution, error?: string, cause?: string) {
    if (execution.status === 'RUNNING' && !execution.closed && !execution.stopRequest) {
      execution.stopRequest = {
        ...(error === undefined ? {} : { error }),
        ...(cause === undefined ? {} : { cause }),
      };
      execution.abort();
    }
    await execution.done;
  }

  /**
   * One attempt of a Task state, called by the interpreter (again for each
   * retry). Records TaskScheduled/TaskStarted and the outcome; injects faults;
   * enforces `TimeoutSeconds` in the history (the interpreter's own timer,
   * started just after this one, fails the state with States.Timeout).
   */
  private async runTask(execution: Execution, task: TaskSpec, input: JsonValue): Promise<JsonValue> {
    if (execution.closed || execution.stopRequest) throw ended();
    const timeoutSeconds =
      task.timeoutSeconds === undefined ? undefined : Math.min(task.timeoutSeconds, MAX_TIMEOUT_SECONDS);
    let open = true;
    if (execution.failedTask === task.state) this.stats.taskRetries++;
    const end = (outcome: 'Succeeded' | 'Failed' | 'TimedOut', details: Record<string, unknown>) => {
      if (!open) return;
      open = false;
      if (outcome === 'Succeeded') execution.failedTask = undefined;
      else {
        this.stats.taskFailures++;
        execution.failedTask = task.state;
      }
      this.recordTaskEnd(execution, task, outcome, details);
    };
    const timer =
      timeoutSeconds === undefined
        ? undefined
        : setTimeout(
            () =>
              end('TimedOut', {
                error: 'States.Timeout',
                cause: `Task timed out after ${timeoutSeconds} seconds`,
              }),
            timeoutSeconds * 1000,
          );
    try {
      // Let the event log catch up, so that this attempt follows its StateEntered in the history.
      await nextMacrotask();
      if (execution.closed || execution.stopRequest) {
        open = false;
        throw ended();
      }
      const scheduled = this.recordTaskStart(execution, task, input, timeoutSeconds);
      this.stats.taskInvocations++;
      const attempt = this.attempt(execution.machine, task, input, (requestId, functionName) => {
        if (scheduled !== undefined) execution.invocations.set(scheduled, { functionName, requestId });
      });
      const tracked = attempt.then(
        () => undefined,
        () => undefined,
      );
      this.inFlight.add(tracked);
      void tracked.then(() => this.inFlight.delete(tracked));
      let result: JsonValue;
      try {
        result = await attempt;
      } catch (error) {
        const failure = taskFailure(error);
        end('Failed', { error: failure.name, cause: failure.message });
        throw failure;
      }
      end('Succeeded', { output: json(result), outputDetails: NOT_TRUNCATED });
      return result;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Lambda's answer to an invocation the state machine's role may not make, as the Task sees it. */
  private checkInvoke(machine: Machine, functionId: string) {
    if (!this.authorizeInvoke) return;
    try {
      this.authorizeInvoke(machine, `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionId}`);
    } catch (error) {
      if (!(error instanceof AccessDeniedError)) throw error;
      throw new TaskFailure(
        'Lambda.AWSLambdaException',
        `${error.message} (Service: AWSLambda; Status Code: 403; Error Code: AccessDeniedException; Request ID: ${randomUUID()}; Proxy: null)`,
      );
    }
  }

  /** `onStart` is told the request id of the function invocation, once it starts. */
  private async attempt(
    machine: Machine,
    task: TaskSpec,
    input: JsonValue,
    onStart: (requestId: string, functionName: string) => void,
  ): Promise<JsonValue> {
    for (const rule of this.faults) {
      if (rule.state !== task.state || Math.random() >= rule.rate) continue;
      if (rule.times !== undefined) {
        if (rule.times <= 0) continue;
        rule.times--;
      }
      if (rule.delayMs) await sleep(rule.delayMs);
      if (rule.error !== undefined || !rule.delayMs) {
        throw new TaskFailure(
          rule.error ?? DEFAULT_FAULT_ERROR,
          rule.cause ?? `fault injected into ${task.state}`,
        );
      }
    }
    if (task.kind === 'dynamodb') return this.readItem(machine, input);
    if (task.kind === 'function') {
      const functionId = task.functionId!;
      this.checkInvoke(machine, functionId);
      return (await this.runtime.invoke(functionId, input, {
        onStart: (requestId) => onStart(requestId, functionId),
      })) as JsonValue;
    }
    const parameters = (input ?? {}) as { FunctionName?: unknown; Payload?: unknown };
    let functionId = task.functionId;
    if (functionId === undefined) {
      try {
        functionId = this.runtime.functionIdOf(String(parameters.FunctionName));
      } catch {
        throw new TaskFailure(
          'Lambda.ResourceNotFoundException',
          `Function not found: ${String(parameters.FunctionName)} (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException)`,
        );
      }
    }
    this.checkInvoke(machine, functionId);
    const invoked = functionId;
    // Invoke's answer carries the invocation's request id, as Lambda's does.
    let requestId = '';
    const payload = (await this.runtime.invoke(functionId, parameters.Payload ?? {}, {
      onStart: (id) => {
        requestId = id;
        onStart(id, invoked);
      },
    })) as JsonValue;
    const headers = {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(json(payload))),
      Date: new Date().toUTCString(),
      'X-Amz-Executed-Version': '$LATEST',
      'x-amzn-RequestId': requestId,
    };
    return {
      ExecutedVersion: '$LATEST',
      Payload: payload,
      StatusCode: 200,
      SdkHttpMetadata: {
        AllHttpHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
        HttpHeaders: headers,
        HttpStatusCode: 200,
      },
      SdkResponseMetadata: { RequestId: requestId },
    };
  }

  /** A `dynamodb:getItem` Task: its answer is GetItem's response; an error is `DynamoDB.<exception>`, as on AWS. */
  private async readItem(machine: Machine, input: JsonValue): Promise<JsonValue> {
    if (!this.getItem) throw new TaskFailure('DynamoDB.AmazonDynamoDBException', 'no DynamoDB wired locally');
    try {
      return (await this.getItem(machine, (input ?? {}) as Record<string, unknown>)) as JsonValue;
    } catch (error) {
      const code =
        error instanceof AccessDeniedError
          ? 'AccessDeniedException'
          : ((error as { code?: string }).code ?? 'AmazonDynamoDBException');
      throw new TaskFailure(`DynamoDB.${code}`, (error as Error).message);
    }
  }

  /** Records the attempt's start; returns the id of its scheduled event (none once the execution has closed). */
  private recordTaskStart(
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
      this.record(execution, 'TaskScheduled', {
        taskScheduledEventDetails: { ...integration, region: REGION, parameters: json(input), ...timeout },
      });
      this.record(execution, 'TaskStarted', { taskStartedEventDetails: integration });
    } else {
      this.record(execution, 'LambdaFunctionScheduled', {
        lambdaFunctionScheduledEventDetails: {
          resource: task.resource,
          input: json(input),
          inputDetails: NOT_TRUNCATED,
          ...timeout,
        },
      });
      this.record(execution, 'LambdaFunctionStarted');
    }
    return scheduled;
  }

  private recordTaskEnd(
    execution: Execution,
    task: TaskSpec,
    outcome: 'Succeeded' | 'Failed' | 'TimedOut',
    details: Record<string, unknown>,
  ) {
    if (task.kind !== 'function') {
      this.record(execution, `Task${outcome}`, {
        [`task${outcome}EventDetails`]: { ...integrationOf(task), ...details },
      });
    } else {
      this.record(execution, `LambdaFunction${outcome}`, {
        [`lambdaFunction${outcome}EventDetails`]: details,
      });
    }
  }

  private describe(e: Execution) {
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

  private history(execution: Execution, input: Record<string, unknown>) {
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
    const events = execution.events;
    let next = reverse ? events.length : 1;
    if (input.nextToken !== undefined)
      next = this.readToken(input.nextToken, `${execution.executionArn}|${reverse}`);
    const page: HistoryEvent[] = [];
    while (page.length < pageSize && next >= 1 && next <= events.length) {
      page.push(events[next - 1]!);
      next += reverse ? -1 : 1;
    }
    const withData = input.includeExecutionData !== false;
    return {
      events: withData ? page : page.map(withoutData),
      ...(next >= 1 && next <= events.length
        ? { nextToken: this.token(`${execution.executionArn}|${reverse}`, next) }
        : {}),
    };
  }

  private list(input: Record<string, unknown>) {
    const machine = this.machine(input.stateMachineArn);
    const filter = input.statusFilter as ExecutionStatus | undefined;
    const maxResults = Number(input.maxResults ?? 0);
    if (!Number.isInteger(maxResults) || maxResults < 0 || maxResults > 1000) {
      throw awsError('ValidationException', 'maxResults must be from 0 to 1000');
    }
    const matching = [...this.executions.values()]
      .filter((e) => e.machine === machine && (filter === undefined || e.status === filter))
      .reverse();
    const from =
      input.nextToken === undefined ? 0 : this.readToken(input.nextToken, `${machine.arn}|${filter}`);
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
      ...(next < matching.length ? { nextToken: this.token(`${machine.arn}|${filter}`, next) } : {}),
    };
  }

  private token(scope: string, position: number) {
    return Buffer.from(JSON.stringify({ scope, position })).toString('base64url');
  }

  private readToken(token: unknown, scope: string): number {
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
}

/** The attempt of a Task after its execution ended (the interpreter may retry once more after an abort). */
function ended() {
  return Object.assign(new Error('the execution has ended'), {
    name: 'States.Runtime',
    isRetryable: false,
    isCatchable: false,
  });
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
