import type {
  aws_apigatewayv2 as apigw,
  aws_cloudwatch as cloudwatch,
  aws_stepfunctions as sfn,
  aws_sns as sns,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { StageConfig } from '../stage-config';
import { addAlarms } from './alarms';
import { addDashboard } from './dashboard';
import type { Watchlist } from './watchlist';

export interface ObservabilityProps {
  readonly config: StageConfig;
  readonly httpApi: apigw.HttpApi;
  readonly apiStage: apigw.HttpStage;
  readonly stateMachine: sfn.StateMachine;
  /** Every function, dead-letter queue and route of the stage, as their constructs registered them. */
  readonly watchlist: Watchlist;
}

/**
 * What an operator of a stage looks at and is paged by: the alarms on what
 * needs acting on, sent to an encrypted SNS topic (alarms.ts), and one
 * dashboard (dashboard.ts), both over what the stage registered on its watchlist.
 */
export class Observability extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: readonly cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { topic, alarms } = addAlarms(this, props);
    this.alarmTopic = topic;
    this.alarms = alarms;
    this.dashboard = addDashboard(this, { ...props, alarms });
  }
}
