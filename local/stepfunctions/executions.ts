/**
 * Executions as this Step Functions keeps them: their record (status,
 * history, the Task attempts' invocations), and the store that keeps the
 * finished ones, and their histories, up to a bound.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { StateMachineSpec, TaskSpec } from './definitions';
import type { StateMachine } from './interpreter';

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

export interface Machine extends StateMachineSpec {
  readonly tasks: ReadonlyMap<string, TaskSpec>;
  readonly interpreter: StateMachine;
}

export interface Execution {
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
  /** A finished execution's events and invocations, deflated (see `historyOf`); `events` is then empty. */
  packedHistory?: string;
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

/** An execution's history and Task invocations: its own while it runs, unpacked once it has finished. */
export function historyOf(execution: Execution): Pick<Execution, 'events' | 'invocations'> {
  if (execution.packedHistory === undefined) return execution;
  const packed = Buffer.from(execution.packedHistory, 'latin1');
  const { events, invocations } = JSON.parse(inflateRawSync(packed).toString('utf8')) as {
    events: HistoryEvent[];
    invocations: [number, TaskInvocation][];
  };
  return { events, invocations: new Map(invocations) };
}

/**
 * A finished execution's history, packed. A saga's history is 12–38 KB of JSON (each event carries the
 * state's input or output), and 2,000 of them as objects held about 67 MB of the main heap at 25/s;
 * deflated (level 1: the events repeat the same payloads) they take 1.2–2.5 KB each.
 */
function packHistory(execution: Execution) {
  const history = { events: execution.events, invocations: [...execution.invocations] };
  // Kept as a one-byte string, not a buffer: zlib answers with a view of its 16 KB output chunk, and even a
  // copy costs an allocation of its own outside the heap (100,000 copies of 160 bytes took 87 MB; as strings 19).
  execution.packedHistory = deflateRawSync(JSON.stringify(history), { level: 1 }).toString('latin1');
  execution.events.length = 0;
  execution.invocations.clear();
}

/** How many finished executions are kept for Describe and List, and how many keep their history too. */
const KEEP_FINISHED = 50_000;
export const KEEP_HISTORIES = 2_000;

/**
 * The executions kept for Describe, List and the saga console, in the order they started: the finished
 * ones up to KEEP_FINISHED, their histories for the last KEEP_HISTORIES.
 */
export class ExecutionStore {
  private readonly byArn = new Map<string, Execution>();
  /** Finished executions, oldest first, from `finishedHead`; their histories are kept from `historyHead`. */
  private finished: Execution[] = [];
  private finishedHead = 0;
  private historyHead = 0;

  get(arn: string): Execution | undefined {
    return this.byArn.get(arn);
  }

  add(execution: Execution) {
    this.byArn.set(execution.executionArn, execution);
  }

  /** Every execution kept, in the order they started. */
  all(): IterableIterator<Execution> {
    return this.byArn.values();
  }

  /** Keeps a finished execution, letting go of the oldest beyond the bounds. */
  keepFinished(execution: Execution) {
    packHistory(execution);
    this.finished.push(execution);
    while (this.finished.length - this.historyHead > KEEP_HISTORIES) {
      const old = this.finished[this.historyHead++]!;
      delete old.packedHistory;
      old.historyDropped = true;
    }
    while (this.finished.length - this.finishedHead > KEEP_FINISHED) {
      this.byArn.delete(this.finished[this.finishedHead++]!.executionArn);
    }
    if (this.finishedHead > 10_000) {
      this.finished = this.finished.slice(this.finishedHead);
      this.historyHead -= this.finishedHead;
      this.finishedHead = 0;
    }
  }
}
