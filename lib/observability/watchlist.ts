import type { aws_lambda as lambda, aws_sqs as sqs } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/** What names a watched part: its service's id and its own, e.g. `InventoryProjector`, `SagaStartFailures`. */
export const watchLabel = (service: Construct, id: string) => `${service.node.id}${id}`;

/** A function of the stage as its operator sees it. */
export interface WatchedFunction {
  /** By its service and role, e.g. `InventoryProjector`, `SagaSteps`: names its alarms and graph lines. */
  readonly label: string;
  readonly fn: lambda.Function;
  /** Fed by a table's stream: watched for iterator age. */
  readonly consumesStream: boolean;
}

/** A dead-letter queue or on-failure destination, by what fails into it (e.g. `InventoryProjectionFailures`). */
export interface WatchedQueue {
  readonly name: string;
  readonly queue: sqs.IQueue;
}

/**
 * What the alarms and the dashboard watch, registered by the constructs that
 * make it (every ServiceFunction, DeadLetterQueue and route is made with the
 * stage's watchlist) rather than found by walking the construct tree: a part
 * the stack adds is watched because it was registered, and the order of the
 * dashboard's lines is the order of the stack's code.
 */
export class Watchlist {
  private readonly registeredFunctions: { label: string; fn: lambda.Function; consumesStream: boolean }[] =
    [];
  private readonly registeredQueues: WatchedQueue[] = [];
  private readonly registeredRoutes: string[] = [];

  get functions(): readonly WatchedFunction[] {
    return this.registeredFunctions;
  }

  /** The registered functions fed by a table's stream. */
  get streamConsumers(): readonly WatchedFunction[] {
    return this.registeredFunctions.filter((f) => f.consumesStream);
  }

  get deadLetterQueues(): readonly WatchedQueue[] {
    return this.registeredQueues;
  }

  /** The HTTP API's route keys, `METHOD /path`. */
  get routeKeys(): readonly string[] {
    return this.registeredRoutes;
  }

  addFunction(label: string, fn: lambda.Function) {
    this.registeredFunctions.push({ label, fn, consumesStream: false });
  }

  /** Marks a registered function as a stream consumer. */
  addStreamConsumer(fn: lambda.Function) {
    const watched = this.registeredFunctions.find((f) => f.fn === fn);
    if (!watched) throw new Error(`${fn.node.path} consumes a stream but is not on the watchlist`);
    watched.consumesStream = true;
  }

  addDeadLetterQueue(name: string, queue: sqs.IQueue) {
    this.registeredQueues.push({ name, queue });
  }

  addRoutes(routeKeys: readonly string[]) {
    this.registeredRoutes.push(...routeKeys);
  }
}
