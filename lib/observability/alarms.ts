import {
  aws_cloudwatch_actions as actions,
  type aws_apigatewayv2 as apigw,
  aws_cloudwatch as cloudwatch,
  Duration,
  aws_iam as iam,
  aws_kms as kms,
  Stack,
  type aws_stepfunctions as sfn,
  aws_sns as sns,
  aws_sns_subscriptions as subscriptions,
} from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { StageConfig } from '../stage-config';
import { FIVE_MINUTES, inventoryMetrics, sagaMetrics } from './metrics';
import type { Watchlist } from './watchlist';

export interface AlarmsProps {
  readonly config: StageConfig;
  readonly httpApi: apigw.HttpApi;
  readonly apiStage: apigw.HttpStage;
  readonly stateMachine: sfn.StateMachine;
  /** The functions and dead-letter queues to alarm on. */
  readonly watchlist: Watchlist;
}

/**
 * The alarms of a stage, each on something an operator must act on, sent to
 * an SNS topic encrypted with a key of the stage (made in `scope`).
 */
export function addAlarms(scope: Construct, props: AlarmsProps) {
  const { config } = props;
  const topic = addAlarmTopic(scope, config);
  const alarms: cloudwatch.Alarm[] = [];
  const alarm: AddAlarm = (name, description, options) => {
    const created = new cloudwatch.Alarm(scope, name, {
      alarmDescription: `${description} (${config.stage})`,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      ...options,
    });
    created.addAlarmAction(new actions.SnsAction(topic));
    created.addOkAction(new actions.SnsAction(topic));
    alarms.push(created);
  };
  addApiAlarms(alarm, props);
  addPipeAlarms(alarm, props);
  addSagaAlarms(alarm, props);
  addSweeperAlarms(alarm, props);
  addThrottleAlarms(alarm, props);
  addCapacityAlarms(alarm, props, props.apiStage);
  return { topic, alarms };
}

/**
 * The topic the alarms are sent to, encrypted with a key of the stage that
 * CloudWatch may use, and that only this account's CloudWatch alarms may
 * publish to.
 */
function addAlarmTopic(scope: Construct, config: StageConfig) {
  const stack = Stack.of(scope);
  // CloudWatch encrypts what it publishes with this key, so its key policy lets CloudWatch use it.
  const topicKey = new kms.Key(scope, 'AlarmTopicKey', {
    description: `Encrypts the alarm topic of the commerce platform (${config.stage})`,
    enableKeyRotation: true,
    removalPolicy: config.removalPolicy,
  });
  topicKey.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
  const topic = new sns.Topic(scope, 'AlarmTopic', {
    displayName: `Commerce ${config.stage} alarms`,
    masterKey: topicKey,
    enforceSSL: true,
  });
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsOfThisAccountPublish',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        ArnLike: {
          'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*`,
        },
        StringEquals: { 'aws:SourceAccount': stack.account },
      },
    }),
  );
  if (config.alarmEmail) {
    topic.addSubscription(new subscriptions.EmailSubscription(config.alarmEmail));
  }
  return topic;
}

const atLeast = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD;

/** The HTTP API's faults (5xx) and its p95 latency. */
function addApiAlarms(alarm: AddAlarm, { config, httpApi }: AlarmsProps) {
  const { alarms: thresholds } = config;
  alarm('Api5xx', 'The HTTP API answered with 5xx: a fault of ours, never bad input', {
    metric: httpApi.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
    threshold: thresholds.api5xxPerFiveMinutes,
    comparisonOperator: atLeast,
    evaluationPeriods: 1,
  });
  alarm('ApiLatencyP95', 'The HTTP API’s p95 latency stayed above its threshold for 15 minutes', {
    metric: httpApi.metricLatency({ period: FIVE_MINUTES, statistic: 'p95' }),
    threshold: thresholds.apiP95LatencyMs,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 3,
  });
}

/** The pipes: a stream consumer falling behind, messages waiting in a dead-letter queue. */
function addPipeAlarms(alarm: AddAlarm, { config, watchlist }: AlarmsProps) {
  for (const { label, fn } of watchlist.streamConsumers) {
    alarm(`${label}IteratorAge`, `${label} falls behind its stream`, {
      metric: fn.metric('IteratorAge', { period: FIVE_MINUTES, statistic: 'Maximum' }),
      threshold: config.alarms.streamIteratorAgeMs,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
  }
  for (const { name, queue } of watchlist.deadLetterQueues) {
    alarm(
      `${name}DeadLetters`,
      `Messages wait in the dead-letter queue ${name}: fix the cause, then redrive`,
      {
        metric: queue.metricApproximateNumberOfMessagesVisible({
          period: FIVE_MINUTES,
          statistic: 'Maximum',
        }),
        threshold: 1,
        comparisonOperator: atLeast,
        evaluationPeriods: 1,
      },
    );
  }
}

/** The saga: executions that failed, orders it timed out, steps and compensations that failed. */
function addSagaAlarms(alarm: AddAlarm, { config, stateMachine }: AlarmsProps) {
  const { alarms: thresholds } = config;
  const saga = sagaMetrics(config);
  alarm(
    'SagaExecutionFailures',
    'Saga executions failed, timed out or were aborted (compensation did not finish)',
    {
      metric: new cloudwatch.MathExpression({
        expression: 'failed + timedOut + aborted',
        usingMetrics: {
          failed: stateMachine.metricFailed({ statistic: 'Sum' }),
          timedOut: stateMachine.metricTimedOut({ statistic: 'Sum' }),
          aborted: stateMachine.metricAborted({ statistic: 'Sum' }),
        },
        period: FIVE_MINUTES,
        label: 'failed executions',
      }),
      threshold: thresholds.sagaExecutionFailuresPerFiveMinutes,
      comparisonOperator: atLeast,
      evaluationPeriods: 1,
    },
  );
  alarm('SagaTimeouts', 'Orders were cancelled because their saga ran past its deadline', {
    metric: saga('cancelledByReason', { reason: 'TIMEOUT' }),
    threshold: thresholds.sagaTimeoutsPerFiveMinutes,
    comparisonOperator: atLeast,
    evaluationPeriods: 1,
  });
  alarm(
    'SagaStepFailures',
    'A saga step failed unexpectedly after its retries (a bug or a broken contract); its order was cancelled STEP_FAILED',
    {
      metric: saga('stepFailures'),
      threshold: 1,
      comparisonOperator: atLeast,
      evaluationPeriods: 1,
    },
  );
  alarm(
    'SagaCompensationFailures',
    'A saga compensation failed (the state machine retries it until it succeeds)',
    {
      metric: saga('compensationFailures'),
      threshold: 1,
      comparisonOperator: atLeast,
      evaluationPeriods: 1,
    },
  );
}

/** The sweepers: orders the saga's sweeper had to cancel, and sweeps (of orders, of reservations) that failed. */
function addSweeperAlarms(alarm: AddAlarm, { config }: AlarmsProps) {
  const { alarms: thresholds } = config;
  const saga = sagaMetrics(config);
  const inventory = inventoryMetrics(config);
  alarm(
    'SweeperCancellations',
    'The sweeper cancelled orders whose saga did not finish by its deadline (lost or failed executions): find why',
    {
      metric: saga('sweeperCancellations'),
      threshold: thresholds.sweeperCancellationsPerFiveMinutes,
      comparisonOperator: atLeast,
      evaluationPeriods: 1,
    },
  );
  alarm(
    'SweeperFailures',
    'The sweeper failed to cancel orders past their deadline: they hold stock and credit until a sweep of their window succeeds',
    {
      metric: saga('sweeperFailures'),
      threshold: thresholds.sweeperFailuresPerFiveMinutes,
      comparisonOperator: atLeast,
      evaluationPeriods: 1,
    },
  );
  alarm(
    'ReservationExpiryFailures',
    'The expiry sweeper failed to expire reservations past their expiry: they hold stock until a run succeeds',
    {
      metric: inventory('expiryFailures'),
      threshold: thresholds.sweeperFailuresPerFiveMinutes,
      comparisonOperator: atLeast,
      evaluationPeriods: 1,
    },
  );
}

/** A function that was throttled. */
function addThrottleAlarms(alarm: AddAlarm, { config, watchlist }: AlarmsProps) {
  for (const { label, fn } of watchlist.functions) {
    alarm(
      `${label}Throttles`,
      `${label} was throttled: raise its reserved concurrency or lower the API throttle`,
      {
        metric: fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: config.alarms.lambdaThrottlesPerFiveMinutes,
        comparisonOperator: atLeast,
        evaluationPeriods: 1,
      },
    );
  }
}

type AddAlarm = (
  name: string,
  description: string,
  options: Omit<cloudwatch.AlarmProps, 'alarmDescription'>,
) => void;

const ONE_MINUTE = Duration.minutes(1);

/** `POST /products/{productId}/reservations` → `PostProductsProductIdReservations`. */
const routeId = (routeKey: string) =>
  routeKey
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1).toLowerCase())
    .join('');

/**
 * Alarms that fire before the stage meets a limit of its own or of the
 * account (docs/capacity.md works out which it meets first, and at what
 * rate): a throttled route nearing its rate, and the account's Step
 * Functions buckets (StartExecution; state transitions on STANDARD, the
 * only type whose transitions are throttled) nearing their refill rate;
 * and one when executions are throttled already.
 */
function addCapacityAlarms(alarm: AddAlarm, props: AlarmsProps, apiStage: apigw.HttpStage) {
  const { config, httpApi, stateMachine } = props;
  const percent = config.alarms.capacityWarningPercent;
  for (const [routeKey, throttle] of Object.entries(config.apiThrottle.routes)) {
    const [method, resource] = routeKey.split(' ') as [string, string];
    alarm(
      `${routeId(routeKey)}NearThrottle`,
      `${routeKey} ran at ${percent}% of its throttle (${throttle.rateLimit}/s) for two minutes: beyond it the API answers 429`,
      {
        metric: new cloudwatch.Metric({
          namespace: 'AWS/ApiGateway',
          metricName: 'Count',
          dimensionsMap: {
            ApiId: httpApi.apiId,
            Stage: apiStage.stageName,
            Method: method,
            Resource: resource,
          },
          statistic: 'Sum',
          period: ONE_MINUTE,
        }),
        // Requests a minute at `percent` of the route's rate per second.
        threshold: Math.ceil((throttle.rateLimit * 60 * percent) / 100),
        comparisonOperator: atLeast,
        evaluationPeriods: 2,
      },
    );
  }
  const nearQuota = (name: string, description: string, dimensions: Record<string, string>) =>
    alarm(name, description, {
      metric: new cloudwatch.MathExpression({
        expression: '100 * consumed / refill',
        usingMetrics: {
          consumed: new cloudwatch.Metric({
            namespace: 'AWS/States',
            metricName: 'ConsumedCapacity',
            dimensionsMap: dimensions,
            statistic: 'Maximum',
            period: ONE_MINUTE,
          }),
          refill: new cloudwatch.Metric({
            namespace: 'AWS/States',
            metricName: 'ProvisionedRefillRate',
            dimensionsMap: dimensions,
            statistic: 'Minimum',
            period: ONE_MINUTE,
          }),
        },
        period: ONE_MINUTE,
        label: '% of the refill rate',
      }),
      threshold: percent,
      comparisonOperator: atLeast,
      evaluationPeriods: 2,
    });
  // Two executions start per order (the request's and the bus's), from the account's one bucket.
  nearQuota(
    'SagaStartExecutionNearQuota',
    `StartExecution ran at ${percent}% of the account's refill rate: beyond it starts are throttled and sagas wait`,
    { APIName: 'StartExecution' },
  );
  if (config.workflowType === 'STANDARD') {
    nearQuota(
      'SagaStateTransitionsNearQuota',
      `State transitions ran at ${percent}% of the account's refill rate: beyond it executions are throttled`,
      { ServiceMetric: 'StateTransition' },
    );
    alarm(
      'SagaExecutionsThrottled',
      'Saga executions were throttled (the account’s state-transition bucket)',
      {
        metric: stateMachine.metricThrottled({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: atLeast,
        evaluationPeriods: 1,
      },
    );
  }
}
