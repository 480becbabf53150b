import {
  Duration,
  aws_dynamodb as dynamodb,
  aws_lambda as lambda,
  RemovalPolicy,
  aws_sqs as sqs,
} from 'aws-cdk-lib';
import type * as targets from 'aws-cdk-lib/aws-events-targets';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { acknowledgeCheckov } from '../checkov';
import { acknowledgeNag } from '../nag';
import { type Watchlist, watchLabel } from '../observability/watchlist';
import type { StageConfig } from '../stage-config';
import type { ViewsTable } from './event-store-table';
import { ServiceFunction } from './service-function';

/** A dead-letter queue: encrypted, TLS only, kept 14 days for inspection and redrive. */
export class DeadLetterQueue extends Construct {
  readonly queue: sqs.Queue;
  /**
   * `removalPolicy`: the stage's, so that prod keeps the failures waiting for a redrive if the queue leaves
   * the template. Registered on `watchlist` by its service and what fails into it, e.g. `InventoryProjectionFailures`.
   */
  constructor(scope: Construct, id: string, removalPolicy: RemovalPolicy, watchlist: Watchlist) {
    super(scope, id);
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    acknowledgeCheckov(
      this.queue,
      'CKV_AWS_27',
      'encrypted at rest with SQS-managed SSE (SqsManagedSseEnabled), which this check does not read (it looks for a KMS key); the AWS managed KMS key would stop EventBridge delivering here, and a customer-managed key costs a key and its requests for queues that hold nothing unless something failed',
    );
    acknowledgeNag(
      this,
      'SQS3',
      'this queue is itself a dead-letter queue (of a stream mapping, rule target or async invocation)',
    );
    watchlist.addDeadLetterQueue(watchLabel(scope, id), this.queue);
  }
}

/**
 * Feeds a table's stream to a function the way every consumer here is fed:
 * from the start of the stream, in batches gathered over the stage's
 * `streamBatchingWindow`, partial batch failures reported, a failing
 * batch bisected to isolate the bad record, bounded retries, and the
 * records that still fail sent to a dead-letter queue. With filter patterns,
 * Lambda drops the records that match none of them before invoking `fn`.
 */
export function consumeStream(
  consumer: ServiceFunction,
  table: dynamodb.Table,
  deadLetters: sqs.IQueue,
  /** Lambda filter patterns: only records matching one of them invoke `fn` (default: every record). */
  filterPatterns: readonly Record<string, unknown>[] = [],
) {
  consumer.watchlist.addStreamConsumer(consumer.fn);
  consumer.fn.addEventSource(
    new DynamoEventSource(table, {
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      maxBatchingWindow: consumer.config.streamBatchingWindow,
      bisectBatchOnError: true,
      retryAttempts: 5,
      maxRecordAge: Duration.hours(1),
      reportBatchItemFailures: true,
      onFailure: new SqsDlq(deadLetters),
      ...(filterPatterns.length > 0
        ? { filters: filterPatterns.map((pattern) => lambda.FilterCriteria.filter({ ...pattern })) }
        : {}),
    }),
  );
}

export interface ProjectorProps {
  readonly service: string;
  readonly config: StageConfig;
  readonly watchlist: Watchlist;
  readonly events: dynamodb.Table;
  readonly views: ViewsTable;
  readonly deadLetters: sqs.IQueue;
  readonly description: string;
  /** What the projector reads its views table's name from (its module's seams). */
  readonly environment: Record<string, string>;
}

/** A service's projector: `<service>/handlers/projector.ts`, fed by its event stream, writing its views. */
export function addProjector(scope: Construct, props: ProjectorProps): lambda.IFunction {
  const projector = new ServiceFunction(scope, 'Projector', {
    entry: `${props.service}/handlers/projector.ts`,
    service: props.service,
    kind: 'projector',
    config: props.config,
    watchlist: props.watchlist,
    description: props.description,
    environment: props.environment,
  });
  props.views.grantProjection(projector.fn);
  consumeStream(projector, props.events, props.deadLetters);
  return projector.fn;
}

/**
 * A scheduled rule's Lambda target: EventBridge retries a failed delivery
 * twice within the sweep interval, then gives the event to `deadLetters`
 * (a function that fails every attempt sends it there too, as its
 * on-failure destination).
 */
export const scheduledTarget = (deadLetters: sqs.IQueue): targets.LambdaFunctionProps => ({
  retryAttempts: 2,
  maxEventAge: Duration.minutes(5),
  deadLetterQueue: deadLetters,
});
