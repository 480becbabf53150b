import type { LambdaRuntime } from './lambda/runtime';

/** The bounds of admission control at the edge (see AdmissionControl). */
export interface AdmissionOptions {
  /**
   * A request is refused while a new invocation of its function would wait
   * longer than this for a sandbox: the queue's head has waited that long, or
   * the queue ahead would take that long to drain at the function's recent
   * duration (a burst of quick requests is served, a queue that keeps growing
   * is cut before its tail waits past the client's patience).
   * An admitted request then waits about this long at most, so it is
   * answered inside a client's 10 s timeout (the load tools'), the
   * functions' 10 s and API Gateway's 30 s. Default 5,000 ms: a busy 2-core
   * machine serves the test suite's bursts (25 products × 4 large
   * reservations, 200 orders) within it; 3,000 refused some of them.
   */
  readonly maxQueueWaitMs?: number;
  /**
   * A request that starts a saga is refused when the sagas running (and the
   * requests on their way to start one) would take longer than this to run
   * their steps, estimated from the saga Task functions' recent durations
   * and pools, or when a Task function's queue wait passes
   * `maxQueueWaitMs`. Default 10,000 ms: a third of the saga deadline (30 s).
   */
  readonly maxSagaBacklogMs?: number;
}

export const DEFAULT_MAX_QUEUE_WAIT_MS = 5_000;
export const DEFAULT_MAX_SAGA_BACKLOG_MS = 10_000;
/** Fewer late sagas than this never refuse an order (see `sagasLate`). */
const LATE_SAGAS_MIN = 5;
/** A function's duration before it has run (an estimate has to start somewhere). */
const UNKNOWN_DURATION_MS = 50;

/** What admission needs to know of the sagas: Step Functions' running executions and Task functions. */
export interface SagaGauge {
  readonly runningCount: number;
  /** How many running executions started more than `ms` ago. */
  runningLongerThan(ms: number): number;
  /** Executions started since the start (for the Task invocations per execution). */
  readonly executionsStarted: number;
  readonly taskFunctionIds: readonly string[];
  /** Functions that start executions themselves (their environment names a state machine). */
  readonly startingFunctionIds: ReadonlySet<string>;
}

/** The route as admission sees it. */
export interface AdmittedRoute {
  readonly routeKey: string;
  readonly method: string;
  readonly functionId: string;
}

export type Refusal = 'queue' | 'saga';

/**
 * Admission control at the edge: under overload, the HTTP API refuses at once
 * (`429`, `retry-after: 1`, no invocation, nothing changed) what it could not
 * serve in time, instead of queueing it until it, or the saga it starts,
 * times out. Only HTTP API requests pass here: saga steps, stream consumers
 * and scheduled functions are never refused (they wait in their queues).
 */
export class AdmissionControl {
  private options: Required<AdmissionOptions>;
  /** Saga-starting requests admitted and not yet answered: sagas about to start. */
  private sagaRequests = 0;
  private readonly taskInvocationsAtStart: Map<string, number>;

  constructor(
    private readonly runtime: LambdaRuntime,
    private readonly sagas: SagaGauge | undefined,
    options: AdmissionOptions = {},
  ) {
    this.options = {
      maxQueueWaitMs: options.maxQueueWaitMs ?? DEFAULT_MAX_QUEUE_WAIT_MS,
      maxSagaBacklogMs: options.maxSagaBacklogMs ?? DEFAULT_MAX_SAGA_BACKLOG_MS,
    };
    this.taskInvocationsAtStart = new Map(
      (sagas?.taskFunctionIds ?? []).map((f) => [f, runtime.load(f).invocations]),
    );
  }

  get settings(): Required<AdmissionOptions> {
    return this.options;
  }

  /** Changes the bounds while the cloud runs (the admin API; tests set short ones). */
  configure(options: AdmissionOptions) {
    this.options = {
      maxQueueWaitMs: options.maxQueueWaitMs ?? this.options.maxQueueWaitMs,
      maxSagaBacklogMs: options.maxSagaBacklogMs ?? this.options.maxSagaBacklogMs,
    };
  }

  /**
   * Whether a request to `route` may start a saga: a write (not GET or HEAD)
   * to a function that starts executions itself. (Sagas started from the
   * bus come from stream records, which are never refused.)
   */
  startsSaga(route: AdmittedRoute): boolean {
    return (
      route.method !== 'GET' &&
      route.method !== 'HEAD' &&
      (this.sagas?.startingFunctionIds.has(route.functionId) ?? false)
    );
  }

  /** Why `route` cannot take a request now, or undefined when it can. */
  check(route: AdmittedRoute): Refusal | undefined {
    if (this.runtime.expectedWaitMs(route.functionId) > this.options.maxQueueWaitMs) return 'queue';
    if (this.startsSaga(route) && this.sagasInFlight() > 0) {
      if (this.sagasLate() || this.sagaBacklogMs() > this.options.maxSagaBacklogMs) return 'saga';
    }
    return undefined;
  }

  /**
   * Sagas running or about to start. With none, a saga-starting request is
   * never refused for the backlog: the step functions' recent durations are
   * only renewed by the invocations of admitted sagas, so one slow step (a
   * timeout under a fault) would otherwise keep an idle platform refusing
   * orders for good.
   */
  private sagasInFlight(): number {
    return this.sagas!.runningCount + this.sagaRequests;
  }

  /**
   * Whether the sagas running are already late: at least `LATE_SAGAS_MIN` of
   * them, and a tenth, have run longer than `maxSagaBacklogMs`. The backlog
   * estimate looks ahead from the step functions' recent durations; this
   * looks at what is happening, which the estimate misses when the CPU the
   * steps share is taken by other work too (measured: with the estimate alone,
   * 66–78 of some 4,700 orders timed out under a 200/s burst on products of
   * 64 shards). A few slow sagas (a step retried, a fault being tested) do
   * not close the door.
   */
  private sagasLate(): boolean {
    const sagas = this.sagas!;
    const late = sagas.runningLongerThan(this.options.maxSagaBacklogMs);
    return late >= LATE_SAGAS_MIN && late * 10 >= sagas.runningCount;
  }

  /**
   * How long the sagas in flight, this one included, would take to run their
   * steps. Each execution invokes the saga's Task functions (as many times per
   * execution as they were invoked so far; once each before there is a
   * history), and the executions in flight pass through them as through a
   * pipeline: each function serves as many at once as its pool holds now, at its
   * recent duration (which, measured on the wall clock, already carries the
   * CPU the functions share), so the slowest function sets the pace. A Task
   * function whose queue delay is past `maxQueueWaitMs` counts as backlogged
   * outright.
   */
  sagaBacklogMs(): number {
    const sagas = this.sagas!;
    const executions = sagas.executionsStarted;
    let perExecutionMs = 0;
    for (const functionId of sagas.taskFunctionIds) {
      if (this.runtime.expectedWaitMs(functionId) > this.options.maxQueueWaitMs)
        return Number.POSITIVE_INFINITY;
      const load = this.runtime.load(functionId);
      const invocations = load.invocations - (this.taskInvocationsAtStart.get(functionId) ?? 0);
      const perExecution = executions < 10 ? 1 : Math.min(3, invocations / executions);
      // The sandboxes it has now, not its cap: under the total cap a busy function rarely reaches its own
      // (counting the cap admitted two to four times the sagas the pools could run by their deadline).
      const sandboxes = Math.max(1, Math.min(load.cap, load.sandboxes));
      perExecutionMs = Math.max(
        perExecutionMs,
        (perExecution * (load.recentMs ?? UNKNOWN_DURATION_MS)) / sandboxes,
      );
    }
    return (this.sagasInFlight() + 1) * perExecutionMs;
  }

  /**
   * Tracks an admitted saga-starting request until it is answered (its saga
   * is then running), or until its invocation pauses, whichever comes first:
   * the only request that pauses, `POST /orders` with `Prefer: wait=N`, does
   * so once its saga has started, to wait for it; from then on its saga is
   * among the running ones, and counting the request too would count it twice.
   */
  async admitted<T>(route: AdmittedRoute, work: (sagaStarted: () => void) => Promise<T>): Promise<T> {
    if (!this.startsSaga(route)) return work(() => undefined);
    this.sagaRequests++;
    let counted = true;
    const sagaStarted = () => {
      if (!counted) return;
      counted = false;
      this.sagaRequests--;
    };
    try {
      return await work(sagaStarted);
    } finally {
      sagaStarted();
    }
  }
}
