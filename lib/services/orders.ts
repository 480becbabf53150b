import { Duration, aws_dynamodb as dynamodb, aws_iam as iam, type aws_lambda as lambda } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { accountsEnvironment } from '../../functions/accounts/seams';
import {
  ORDERS_ROUTE_SCOPES,
  ORDERS_ROUTES,
  orderPlacementEnvironment,
  ordersEnvironment,
  PLACED_INDEX,
} from '../../functions/orders/seams';
import { EventSourcedService, type ServiceProps } from '../constructs/event-sourced-service';
import { grantAppends, grantItemReads } from '../constructs/event-store-table';
import type { AccountsService } from './accounts';
import type { InventoryService } from './inventory';

export interface OrdersServiceProps extends Omit<ServiceProps, 'idempotencyTable'> {
  readonly accounts: AccountsService;
  readonly inventory: InventoryService;
}

/**
 * Orders: placement (which starts the saga itself, and through `OrderPlaced`
 * on the bus) and reading. `GET /orders/{id}` reads the newest event item,
 * which carries the order's state: no read model to keep.
 */
export class OrdersService extends EventSourcedService {
  readonly api: lambda.Function;

  /** Queries of the placed-orders index (the sweeper's), and nothing else of the table's indexes. */
  grantPlacedIndexQuery(grantee: iam.IGrantable) {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:Query'],
      resourceArns: [`${this.events.tableArn}/index/${PLACED_INDEX.name}`],
    });
  }

  constructor(scope: Construct, id: string, props: OrdersServiceProps) {
    super(scope, id, 'orders', props);
    const { config, accounts, inventory } = props;
    this.events.addGlobalSecondaryIndex({
      indexName: PLACED_INDEX.name,
      partitionKey: { name: PLACED_INDEX.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: PLACED_INDEX.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });

    const api = this.addApi({
      routes: ORDERS_ROUTES,
      scopes: ORDERS_ROUTE_SCOPES,
      description: 'Orders HTTP API: place and read orders',
      // `POST /orders` with `Prefer: wait=10` waits up to 10 s for the saga, plus placing the order and
      // answering; still well inside API Gateway's 30 s integration timeout.
      timeout: Duration.seconds(15),
      // The saga's construct adds the state machine's ARN (orderSagaEnvironment) once the machine exists.
      environment: {
        ...ordersEnvironment.write({ ordersTable: this.events.tableName }),
        ...accountsEnvironment.write({ accountsTable: accounts.events.tableName }),
        ...inventory.commandEnvironment,
        ...orderPlacementEnvironment.write({ sagaDeadlineSeconds: config.sagaDeadline.toSeconds() }),
      },
    });
    // A keyed placement is made idempotent in the events table itself (idempotentCreation).
    grantAppends(this.events, api);
    // Placing an order checks the customer and prices the products from their event stores.
    grantItemReads(accounts.events, api);
    grantItemReads(inventory.events, api);
    this.api = api;
  }
}
