import {
  aws_cloudwatch_actions as actions,
  aws_apigatewayv2 as apigw,
  aws_cloudwatch as cloudwatch,
  Duration,
  aws_iam as iam,
  aws_kms as kms,
  aws_lambda as lambda,
  Stack,
  type aws_stepfunctions as sfn,
  aws_sns as sns,
  type aws_sqs as sqs,
  aws_sns_subscriptions as subscriptions,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { CANCELLATION_LABELS, SAGA_METRICS, SAGA_SERVICE } from '../functions/saga/metrics';
import { routesOf } from './constructs/http-routes';
import { metricsNamespace } from './constructs/service-function';
import type { StageConfig } from './stage-config';

export interface ObservabilityProps {
  readonly config: StageConfig;
  readonly httpApi: apigw.HttpApi;
  readonly apiStage: apigw.HttpStage;
  readonly stateMachine: sfn.StateMachine;
  /** Every function of the stage; those with a stream mapping are watched for iterator age. */
  readonly functions: readonly lambda.Function[];
  /** Every dead-letter queue and on-failure destination of the stage, by what fails into it. */
  readonly deadLetterQueues: readonly { readonly name: string; readonly queue: sqs.IQueue }[];
}

const FIVE_MINUTES = Duration.minutes(5);

/** A function by its service and role, e.g. `InventoryProjector`, `SagaSteps` (`<Service>/<Name>/Function`). */
const functionLabel = (fn: lambda.Function) => {
  const serviceFunction = fn.node.scope!;
  return `${serviceFunction.node.scope!.node.id}${serviceFunction.node.id}`;
};

/**
 * What an operator of a stage looks at and is paged by: one dashboard
 * (requests and p95 per route, 4xx/5xx, saga outcomes and duration, stream
 * iterator age, dead letters, throttles) and alarms on what needs acting on,
 * sent to an SNS topic encrypted with a key of the stage.
 */
export class Observability extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { config, httpApi, stateMachine } = props;
    const stack = Stack.of(this);

    // CloudWatch encrypts what it publishes with this key, so its key policy lets CloudWatch use it.
    const topicKey = new kms.Key(this, 'AlarmTopicKey', {
      description: `Encrypts the alarm topic of the commerce platform (${config.stage})`,
      enableKeyRotation: true,
      removalPolicy: config.removalPolicy,
    });
    topicKey.grant(
      new iam.ServicePrincipal('cloudwatch.amazonaws.com'),
      'kms:Decrypt',
      'kms:GenerateDataKey*',
    );
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', {
      displayName: `Commerce ${config.stage} alarms`,
      masterKey: topicKey,
      enforceSSL: true,
    });
    this.alarmTopic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsOfThisAccountPublish',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.alarmTopic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*`,
          },
          StringEquals: { 'aws:SourceAccount': stack.account },
        },
      }),
    );
    if (config.alarmEmail) {
      this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(config.alarmEmail));
    }

    const namespace = metricsNamespace(config);
    const emf = (metricName: string, dimensionsMap: Record<string, string>, statistic = 'Sum') =>
      new cloudwatch.Metric({ namespace, metricName, dimensionsMap, statistic, period: FIVE_MINUTES });
    /** One of the saga's metrics (functions/saga/metrics.ts), which its functions emit under the saga's service. */
    const sagaMetric = (
      name: keyof typeof SAGA_METRICS,
      dimensions: Record<string, string> = {},
      statistic = 'Sum',
    ) => emf(SAGA_METRICS[name], { service: SAGA_SERVICE, ...dimensions }, statistic);
    const routes = routesOf(httpApi).map((r) => (r.node.defaultChild as apigw.CfnRoute).routeKey);
    const routeMetric = (routeKey: string, metricName: string, statistic: string) => {
      const [method, resource] = routeKey.split(' ') as [string, string];
      return new cloudwatch.Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: {
          ApiId: httpApi.apiId,
          Stage: props.apiStage.stageName,
          Method: method,
          Resource: resource,
        },
        statistic,
        period: FIVE_MINUTES,
        label: routeKey,
      });
    };
    const streamConsumers = props.functions.filter((fn) =>
      fn.node.children.some((c) => c instanceof lambda.EventSourceMapping),
    );

    // Alarms: each one is something an operator must act on.
    const alarm = (
      name: string,
      description: string,
      options: Omit<cloudwatch.AlarmProps, 'alarmDescription'>,
    ) => {
      const created = new cloudwatch.Alarm(this, name, {
        alarmDescription: `${description} (${config.stage})`,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...options,
      });
      created.addAlarmAction(new actions.SnsAction(this.alarmTopic));
      created.addOkAction(new actions.SnsAction(this.alarmTopic));
      this.alarms.push(created);
      return created;
    };
    const { alarms: thresholds } = config;
    const atLeast = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD;
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
    for (const fn of streamConsumers) {
      alarm(`${functionLabel(fn)}IteratorAge`, `${functionLabel(fn)} falls behind its stream`, {
        metric: fn.metric('IteratorAge', { period: FIVE_MINUTES, statistic: 'Maximum' }),
        threshold: thresholds.streamIteratorAgeMs,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
      });
    }
    for (const { name, queue } of props.deadLetterQueues) {
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
      metric: sagaMetric('cancelledByReason', { reason: 'TIMEOUT' }),
      threshold: thresholds.sagaTimeoutsPerFiveMinutes,
      comparisonOperator: atLeast,
      evaluationPeriods: 1,
    });
    alarm(
      'SagaStepFailures',
      'A saga step failed unexpectedly after its retries (a bug or a broken contract); its order was cancelled STEP_FAILED',
      { metric: sagaMetric('stepFailures'), threshold: 1, comparisonOperator: atLeast, evaluationPeriods: 1 },
    );
    alarm(
      'SagaCompensationFailures',
      'A saga compensation failed (the state machine retries it until it succeeds)',
      {
        metric: sagaMetric('compensationFailures'),
        threshold: 1,
        comparisonOperator: atLeast,
        evaluationPeriods: 1,
      },
    );
    for (const fn of props.functions) {
      const name = functionLabel(fn);
      alarm(
        `${name}Throttles`,
        `${name} was throttled: raise its reserved concurrency or lower the API throttle`,
        {
          metric: fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
          threshold: thresholds.lambdaThrottlesPerFiveMinutes,
          comparisonOperator: atLeast,
          evaluationPeriods: 1,
        },
      );
    }

    // The dashboard, top to bottom as an operator reads it: the edge, the saga, the pipes, the alarms.
    // Named for the operator who opens it by name; one stack per stage and region keeps the name unique.
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `commerce-${config.stage}`,
      defaultInterval: Duration.hours(3),
    });
    const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = [], width = 8) =>
      new cloudwatch.GraphWidget({ title, left, right, width, height: 6 });
    this.dashboard.addWidgets(
      graph(
        'Requests per route',
        routes.map((r) => routeMetric(r, 'Count', 'Sum')),
      ),
      graph(
        'p95 latency per route (ms)',
        routes.map((r) => routeMetric(r, 'Latency', 'p95')),
      ),
      graph('4xx and 5xx', [
        httpApi.metricClientError({
          period: FIVE_MINUTES,
          statistic: 'Sum',
          label: '4xx (includes 429 THROTTLED)',
        }),
        httpApi.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum', label: '5xx' }),
      ]),
    );
    this.dashboard.addWidgets(
      graph(
        'Saga outcomes',
        [
          sagaMetric('started'),
          sagaMetric('confirmed'),
          sagaMetric('cancelled'),
          ...Object.entries(CANCELLATION_LABELS).map(([reason, label]) =>
            sagaMetric('cancelledByReason', { reason }).with({ label: `cancelled: ${label}` }),
          ),
          sagaMetric('swept'),
        ],
        [
          stateMachine.metricFailed({ period: FIVE_MINUTES, statistic: 'Sum', label: 'executions failed' }),
          stateMachine.metricTimedOut({
            period: FIVE_MINUTES,
            statistic: 'Sum',
            label: 'executions timed out',
          }),
        ],
      ),
      graph('Saga duration, placement to outcome (ms)', [
        sagaMetric('durationMs', {}, 'p50').with({ label: 'p50' }),
        sagaMetric('durationMs', {}, 'p95').with({ label: 'p95' }),
        stateMachine.metricTime({ period: FIVE_MINUTES, statistic: 'p95', label: 'execution p95' }),
      ]),
      graph(
        'Stream iterator age (ms, max)',
        streamConsumers.map((fn) =>
          fn.metric('IteratorAge', { period: FIVE_MINUTES, statistic: 'Maximum', label: functionLabel(fn) }),
        ),
      ),
    );
    this.dashboard.addWidgets(
      graph(
        'Dead letters waiting',
        props.deadLetterQueues.map(({ name, queue }) =>
          queue.metricApproximateNumberOfMessagesVisible({
            period: FIVE_MINUTES,
            statistic: 'Maximum',
            label: name,
          }),
        ),
      ),
      graph(
        'Throttles',
        props.functions.map((fn) =>
          fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum', label: functionLabel(fn) }),
        ),
        [
          stateMachine.metricThrottled({
            period: FIVE_MINUTES,
            statistic: 'Sum',
            label: 'saga state transitions',
          }),
        ],
      ),
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 8, height: 6 }),
    );
  }
}
