import {
  aws_apigatewayv2 as apigw,
  CfnOutput,
  aws_dynamodb as dynamodb,
  Stack,
  type StackProps,
  Tags,
} from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { acknowledgeTableFindings } from './constructs/event-store-table';
import { addApiStage } from './constructs/http-routes';
import { Identity } from './constructs/identity';
import { acknowledgeNag } from './nag';
import { Observability } from './observability';
import { Watchlist } from './observability/watchlist';
import { AccountsService } from './services/accounts';
import { ApiDocs } from './services/docs';
import { InventoryService } from './services/inventory';
import { OrdersService } from './services/orders';
import { Outbox } from './services/outbox';
import { PaymentsService } from './services/payments';
import { OrderSaga } from './services/saga';
import type { StageConfig } from './stage-config';

export interface CommerceStackProps extends StackProps {
  readonly config: StageConfig;
}

/**
 * One stage of the platform: the HTTP API, the four services, the outbox to
 * the bus, the saga, and what an operator watches it with.
 */
export class CommerceStack extends Stack {
  readonly httpApi: apigw.HttpApi;
  /** What the stage's alarms and dashboard watch, as each construct registered it. */
  readonly watchlist = new Watchlist();
  /** The issuer and audience the API's JWT authorizer trusts, and the stage's user pool if it has its own. */
  readonly identity: Identity;

  constructor(scope: Construct, id: string, props: CommerceStackProps) {
    super(scope, id, {
      terminationProtection: props.config.terminationProtection,
      // Pinned where config/stages.ts says (staging, prod): a deploy with another account's credentials fails.
      ...(props.config.env ? { env: props.config.env } : {}),
      ...props,
    });
    const { config } = props;
    // On the stack (CloudFormation tags what it makes) and on every taggable resource in the template.
    for (const [key, value] of Object.entries(config.tags)) Tags.of(this).add(key, value);

    // Every route but the documentation is behind the JWT authorizer, with its scopes (functions/*/seams.ts).
    this.identity = new Identity(this, 'Identity', config);
    const authorization = { authorizer: this.identity.authorizer };
    this.httpApi = new apigw.HttpApi(this, 'HttpApi', {
      description: `Commerce platform API (${config.stage})`,
      // The stage is added after the routes, with their throttling (addApiStage).
      createDefaultStage: false,
    });
    // APIG4 is checked per route (routes with no authorizer), and only the documentation's have none.
    const idempotencyTable = new dynamodb.Table(this, 'Idempotency', {
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: 'expiration',
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: config.pointInTimeRecovery },
      deletionProtection: config.tableDeletionProtection,
      removalPolicy: config.removalPolicy,
    });
    acknowledgeTableFindings(idempotencyTable, config);

    const { watchlist } = this;
    const shared = { config, httpApi: this.httpApi, authorization, idempotencyTable, watchlist };
    const accounts = new AccountsService(this, 'Accounts', shared);
    const inventory = new InventoryService(this, 'Inventory', shared);
    const orders = new OrdersService(this, 'Orders', { ...shared, accounts, inventory });
    const payments = new PaymentsService(this, 'Payments', { ...shared, accounts });
    new ApiDocs(this, 'Docs', { config, httpApi: this.httpApi, authorization, watchlist });
    const outbox = new Outbox(this, 'Outbox', {
      config,
      watchlist,
      eventTables: {
        Customer: accounts.events,
        Product: inventory.events,
        Reservation: inventory.events,
        Order: orders.events,
        Payment: payments.events,
      },
    });
    const saga = new OrderSaga(this, 'Saga', {
      config,
      watchlist,
      bus: outbox.bus,
      accounts,
      inventory,
      orders,
      payments,
    });
    const apiStage = addApiStage(this, this.httpApi, config);

    if (!config.pointInTimeRecovery) {
      acknowledgeNag(
        this,
        'DDB3',
        `stage ${config.stage} keeps no backups by its config: its tables are disposable test data`,
      );
    }

    const observability = new Observability(this, 'Observability', {
      config,
      httpApi: this.httpApi,
      apiStage,
      stateMachine: saga.stateMachine,
      watchlist,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.httpApi.apiEndpoint, description: 'The HTTP API base URL' });
    new CfnOutput(this, 'StateMachineArn', {
      value: saga.stateMachine.stateMachineArn,
      description: 'The order saga: its executions in the Step Functions console',
    });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards/dashboard/${observability.dashboard.dashboardName}`,
      description: 'The stage’s CloudWatch dashboard',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: observability.alarmTopic.topicArn,
      description: 'Alarms are published here: subscribe the on-call',
    });
    for (const { name, queue } of watchlist.deadLetterQueues) {
      new CfnOutput(this, `${name}QueueUrl`, {
        value: queue.queueUrl,
        description: `Dead letters of ${name}: redrive with scripts/redrive-dlq.ts`,
      });
    }
  }
}
