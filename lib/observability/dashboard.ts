import {
  type aws_apigatewayv2 as apigw,
  aws_cloudwatch as cloudwatch,
  Duration,
  type aws_stepfunctions as sfn,
} from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { CANCELLATION_LABELS } from '../../functions/saga/seams';
import type { StageConfig } from '../stage-config';
import { FIVE_MINUTES, sagaMetrics } from './metrics';
import type { Watchlist } from './watchlist';

export interface DashboardProps {
  readonly config: StageConfig;
  readonly httpApi: apigw.HttpApi;
  readonly apiStage: apigw.HttpStage;
  readonly stateMachine: sfn.StateMachine;
  /** The routes, functions and dead-letter queues to graph. */
  readonly watchlist: Watchlist;
  /** The alarms whose states it shows. */
  readonly alarms: readonly cloudwatch.Alarm[];
}

/**
 * The stage's dashboard (made in `scope`), top to bottom as an operator reads
 * it: the edge (requests and p95 per route, 4xx/5xx), the saga (outcomes and
 * duration), the pipes (stream iterator age, dead letters, throttles), the alarms.
 */
export function addDashboard(scope: Construct, props: DashboardProps): cloudwatch.Dashboard {
  // Named for the operator who opens it by name; one stack per stage and region keeps the name unique.
  const dashboard = new cloudwatch.Dashboard(scope, 'Dashboard', {
    dashboardName: `commerce-${props.config.stage}`,
    defaultInterval: Duration.hours(3),
  });
  dashboard.addWidgets(...edgeWidgets(props));
  dashboard.addWidgets(...sagaWidgets(props));
  dashboard.addWidgets(
    ...pipeWidgets(props),
    new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...props.alarms], width: 8, height: 6 }),
  );
  return dashboard;
}

const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = [], width = 8) =>
  new cloudwatch.GraphWidget({ title, left, right, width, height: 6 });

/** The edge: requests and p95 latency per route, 4xx and 5xx. */
function edgeWidgets({ httpApi, apiStage, watchlist }: DashboardProps) {
  const routeMetric = (routeKey: string, metricName: string, statistic: string) => {
    const [method, resource] = routeKey.split(' ') as [string, string];
    return new cloudwatch.Metric({
      namespace: 'AWS/ApiGateway',
      metricName,
      dimensionsMap: {
        ApiId: httpApi.apiId,
        Stage: apiStage.stageName,
        Method: method,
        Resource: resource,
      },
      statistic,
      period: FIVE_MINUTES,
      label: routeKey,
    });
  };
  return [
    graph(
      'Requests per route',
      watchlist.routeKeys.map((r) => routeMetric(r, 'Count', 'Sum')),
    ),
    graph(
      'p95 latency per route (ms)',
      watchlist.routeKeys.map((r) => routeMetric(r, 'Latency', 'p95')),
    ),
    graph('4xx and 5xx', [
      httpApi.metricClientError({
        period: FIVE_MINUTES,
        statistic: 'Sum',
        label: '4xx (includes 429 THROTTLED)',
      }),
      httpApi.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum', label: '5xx' }),
    ]),
  ];
}

/**
 * The saga: its outcomes (and why orders were cancelled), its duration; and,
 * as a row holds three graphs, the first of the pipes: stream iterator age.
 */
function sagaWidgets({ config, stateMachine, watchlist }: DashboardProps) {
  const saga = sagaMetrics(config);
  return [
    graph(
      'Saga outcomes',
      [
        saga('started'),
        saga('confirmed'),
        saga('cancelled'),
        ...Object.entries(CANCELLATION_LABELS).map(([reason, label]) =>
          saga('cancelledByReason', { reason }).with({ label: `cancelled: ${label}` }),
        ),
        saga('sweeperCancellations'),
        saga('sweeperFailures'),
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
      saga('durationMs', {}, 'p50').with({ label: 'p50' }),
      saga('durationMs', {}, 'p95').with({ label: 'p95' }),
      stateMachine.metricTime({ period: FIVE_MINUTES, statistic: 'p95', label: 'execution p95' }),
    ]),
    graph(
      'Stream iterator age (ms, max)',
      watchlist.streamConsumers.map(({ label, fn }) =>
        fn.metric('IteratorAge', { period: FIVE_MINUTES, statistic: 'Maximum', label }),
      ),
    ),
  ];
}

/** The rest of the pipes: dead letters waiting, throttled functions and state transitions. */
function pipeWidgets({ stateMachine, watchlist }: DashboardProps) {
  return [
    graph(
      'Dead letters waiting',
      watchlist.deadLetterQueues.map(({ name, queue }) =>
        queue.metricApproximateNumberOfMessagesVisible({
          period: FIVE_MINUTES,
          statistic: 'Maximum',
          label: name,
        }),
      ),
    ),
    graph(
      'Throttles',
      watchlist.functions.map(({ label, fn }) =>
        fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum', label }),
      ),
      [
        stateMachine.metricThrottled({
          period: FIVE_MINUTES,
          statistic: 'Sum',
          label: 'saga state transitions',
        }),
      ],
    ),
  ];
}
