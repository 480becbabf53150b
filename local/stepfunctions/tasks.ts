/**
 * Task states' attempts: each invokes a local function (or reads a DynamoDB
 * item), with the state machine's role checked, faults injected as asked,
 * and its start and end recorded in the execution's history.
 */
import { randomUUID } from 'node:crypto';
import { setImmediate as nextMacrotask, setTimeout as sleep } from 'node:timers/promises';
import { ACCOUNT, REGION } from '../assembly';
import { AccessDeniedError } from '../iam';
import { FunctionError, type LambdaRuntime } from '../lambda/runtime';
import { MAX_TIMEOUT_SECONDS, type TaskSpec } from './definitions';
import type { Execution, Machine } from './executions';
import { DEFAULT_FAULT_ERROR, type FaultRule } from './faults';
import { NOT_TRUNCATED, recordTaskEnd, recordTaskStart } from './history';
import { type JsonValue, json } from './interpreter';

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

/** The attempt of a Task after its execution ended (the interpreter may retry once more after an abort). */
function ended() {
  return Object.assign(new Error('the execution has ended'), {
    name: 'States.Runtime',
    isRetryable: false,
    isCatchable: false,
  });
}

/** What Task attempts count (LocalStepFunctions.stats). */
interface TaskStats {
  taskInvocations: number;
  taskFailures: number;
  taskRetries: number;
}

/** Runs the attempts of every execution's Task states (see LocalStepFunctions' constructor for its arguments). */
export class TaskRunner {
  /** Task invocations not yet returned (LocalStepFunctions.drain waits for them). */
  readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly runtime: LambdaRuntime,
    private readonly faults: FaultRule[],
    private readonly stats: TaskStats,
    private readonly authorizeInvoke?: (
      machine: { logicalId: string; roleArn?: string },
      functionArn: string,
    ) => void,
    private readonly getItem?: (
      machine: { logicalId: string; roleArn?: string },
      parameters: Record<string, unknown>,
    ) => Promise<Record<string, unknown>>,
  ) {}

  /**
   * One attempt of a Task state, called by the interpreter (again for each
   * retry). Records TaskScheduled/TaskStarted and the outcome; injects faults;
   * enforces `TimeoutSeconds` in the history (the interpreter's own timer,
   * started just after this one, fails the state with States.Timeout).
   */
  async run(execution: Execution, task: TaskSpec, input: JsonValue): Promise<JsonValue> {
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
      recordTaskEnd(execution, task, outcome, details);
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
      const scheduled = recordTaskStart(execution, task, input, timeoutSeconds);
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
}
