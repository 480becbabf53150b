import {
  aws_apigatewayv2 as apigw,
  CfnOutput,
  aws_dynamodb as dynamodb,
  Stack,
  type StackProps,
} from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AccountsService } from './services/accounts';
import { InventoryService } from './services/inventory';
import { OrdersService } from './services/orders';
import { Outbox } from './services/outbox';
import { PaymentsService } from './services/payments';
import { OrderSaga } from './services/saga';
import type { StageConfig } from './stage-config';

export interface CommerceStackProps extends StackProps {
  readonly config: StageConfig;
}

/** One stage of the platform: the HTTP API, the four services and the outbox to the bus. */
export class CommerceStack extends Stack {
  readonly httpApi: apigw.HttpApi;

  constructor(scope: Construct, id: string, props: CommerceStackProps) {
    super(scope, id, props);
    const { config } = props;

    this.httpApi = new apigw.HttpApi(this, 'HttpApi', {
      description: `Commerce platform API (${config.stage})`,
      createDefaultStage: true,
    });
    const idempotencyTable = new dynamodb.Table(this, 'Idempotency', {
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: 'expiration',
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: config.removalPolicy,
    });

    const shared = { config, httpApi: this.httpApi, idempotencyTable };
    const accounts = new AccountsService(this, 'Accounts', shared);
    const inventory = new InventoryService(this, 'Inventory', shared);
    const orders = new OrdersService(this, 'Orders', { ...shared, accounts, inventory });
    const payments = new PaymentsService(this, 'Payments', shared);
    const outbox = new Outbox(this, 'Outbox', {
      config,
      eventTables: [accounts.events, inventory.events, orders.events, payments.events],
    });
    new OrderSaga(this, 'Saga', { config, bus: outbox.bus, accounts, inventory, orders, payments });

    new CfnOutput(this, 'ApiUrl', { value: this.httpApi.apiEndpoint, description: 'The HTTP API base URL' });
  }
}
