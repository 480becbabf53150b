import { randomUUID } from 'node:crypto';
import { ACCOUNT, type Assembly, REGION, type Resolve } from '../assembly';
import type { LambdaRuntime } from '../lambda/runtime';
import { awsError, describe, historyPage, listPage, validName } from './api';
import { type AslDefinition, runnableDefinition, stateMachineSpecs, taskSpecs } from './definitions';
import { type ConsoleExecution, type Execution, ExecutionStore, historyOf, type Machine } from './executions';
import type { FaultRule } from './faults';
import { recordEvent, seconds } from './history';
import {
  errorAndCause,
  type JsonValue,
  json,
  type StateMachine,
  type StateMachineDefinition,
  sfn,
  type TaskHandlers,
} from './interpreter';
import { TaskRunner } from './tasks';

export type { ConsoleExecution, ExecutionStatus, HistoryEvent, TaskInvocation } from './executions';
export { type FaultRule, parseFaults } from './faults';

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
  private readonly executions = new ExecutionStore();
  private readonly running = new Set<Execution>();
  private readonly tasks: TaskRunner;
  private readonly created = Date.now();
  private stopped = false;
  private started = 0;

  constructor(
    assembly: Assembly,
    resolve: Resolve,
    runtime: LambdaRuntime,
    log: (m: string) => void,
    /** Read at every Task attempt: the caller may change the rules in place while executions run. */
    faults: FaultRule[] = [],
    /**
     * Checks that the state machine's role may invoke a Task's function
     * (`lambda:InvokeFunction` on its ARN), at each attempt; throws the
     * AccessDeniedError to fail the Task with, as Step Functions does.
     */
    authorizeInvoke?: (machine: { logicalId: string; roleArn?: string }, functionArn: string) => void,
    /**
     * Serves a `dynamodb:getItem` Task: checks the state machine's role and
     * reads the item from the DynamoDB engine, in this process (the engine
     * counts the read); rejects with the error's `code` (an AccessDeniedError
     * when the role may not read it).
     */
    getItem?: (
      machine: { logicalId: string; roleArn?: string },
      parameters: Record<string, unknown>,
    ) => Promise<Record<string, unknown>>,
  ) {
    this.tasks = new TaskRunner(runtime, faults, this.stats, authorizeInvoke, getItem);
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
          ...describe(execution),
          billingDetails: { billedMemoryUsedInMB: 64, billedDurationInMilliseconds: 100 },
        };
      }
      case 'DescribeExecution':
        return describe(this.execution(input.executionArn));
      case 'GetExecutionHistory':
        return historyPage(this.execution(input.executionArn), input);
      case 'ListExecutions':
        return listPage(this.executions.all(), this.machine(input.stateMachineArn), input);
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
   * computed per execution). Without their histories: a finished one's is
   * packed (`consoleExecution` unpacks it).
   */
  *executionsNewestFirst(): Generator<Omit<ConsoleExecution, 'events' | 'invocations'>> {
    const all = [...this.executions.all()];
    for (let i = all.length - 1; i >= 0; i--) yield all[i]!;
  }

  /** One execution, with its history (unless no longer kept), for the saga console. */
  consoleExecution(arn: string): ConsoleExecution | undefined {
    const execution = this.executions.get(arn);
    return execution && { ...execution, ...historyOf(execution) };
  }

  /** A state machine's definition as deployed (read from the cloud assembly), by ARN. */
  definitionOf(stateMachineArn: string): AslDefinition | undefined {
    return this.machines.get(stateMachineArn)?.definition;
  }

  /** Executions running now. */
  get runningCount(): number {
    return this.running.size;
  }

  /**
   * Task attempts not settled yet, counting those an execution no longer
   * waits for (timed out, or its execution ended): a late attempt may still
   * invoke its function and write.
   */
  get tasksInFlightCount(): number {
    return this.tasks.inFlight.size;
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
    while (this.running.size > 0 || this.tasks.inFlight.size > 0) {
      await Promise.allSettled([...[...this.running].map((e) => e.done), ...this.tasks.inFlight]);
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
    this.executions.add(execution);
    this.running.add(execution);
    this.stats.executions++;
    this.started++;
    const handlers: TaskHandlers = {};
    for (const task of machine.tasks.values()) {
      handlers[task.state] = (taskInput) => this.tasks.run(execution, task, taskInput);
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
      for await (const event of run.eventLogs) recordEvent(execution, event, this.stats);
    })();
    execution.done = Promise.allSettled([run.result, history]).then(([outcome]) =>
      this.finish(execution, outcome),
    );
    return execution;
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
    this.executions.keepFinished(execution);
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
}
