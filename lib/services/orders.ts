import { Duration, aws_dynamodb as dynamodb, aws_iam as iam, aws_lambda as lambda } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EventStoreTable, grantItemReadWrites } from '../constructs/event-store-table';
import { addRoutes } from '../constructs/http-routes';
import { ServiceFunction } from '../constructs/service-function';
import type { AccountsService, ServiceProps } from './accounts';
import type { InventoryService } from './inventory';

export interface OrdersServiceProps extends ServiceProps {
  readonly accounts: AccountsService;
  readonly inventory: InventoryService;
}

/**
 * The sparse index of placed orders by deadline, which the saga's sweeper
 * reads from where it last stopped: only `OrderPlaced` items carry its keys.
 */
export const PLACED_INDEX = 'placedByDeadline';

/**
 * Orders: placement (which starts the saga itself, and through `OrderPlaced`
 * on the bus) and reading. `GET /orders/{id}` reads the newest event item,
 * which carries the order's state: no read model to keep.
 */
export class OrdersService extends Construct {
  readonly events: dynamodb.Table;
  readonly api: lambda.Function;

  /** Queries of the placed-orders index (the sweeper's), and nothing else of the table's indexes. */
  grantPlacedIndexQuery(grantee: iam.IGrantable) {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:Query'],
      resourceArns: [`${this.events.tableArn}/index/${PLACED_INDEX}`],
    });
  }

  constructor(scope: Construct, id: string, props: OrdersServiceProps) {
    super(scope, id);
    const { config, httpApi, idempotencyTable, accounts, inventory } = props;
    this.events = new EventStoreTable(this, 'Events', config).table;
    this.events.addGlobalSecondaryIndex({
      indexName: PLACED_INDEX,
      partitionKey: { name: 'sweepPartition', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'deadline', type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });

    const api = new ServiceFunction(this, 'Api', {
      entry: 'orders/handlers/api.ts',
      service: 'orders',
      kind: 'api',
      config,
      description: 'Orders HTTP API: place and read orders',
      // `POST /orders` with `Prefer: wait=10` waits up to 10 s for the saga, plus placing the order and
      // answering; still well inside API Gateway's 30 s integration timeout.
      timeout: Duration.seconds(15),
      environment: {
        ORDERS_TABLE: this.events.tableName,
        IDEMPOTENCY_TABLE: idempotencyTable.tableName,
        ACCOUNTS_TABLE: accounts.events.tableName,
        ...inventory.commandEnvironment,
        SAGA_DEADLINE_SECONDS: String(config.sagaDeadline.toSeconds()),
      },
    }).fn;
    grantItemReadWrites(this.events, api);
    idempotencyTable.grantReadWriteData(api);
    // Placing an order checks the customer and prices the products from their event stores.
    accounts.events.grantReadData(api);
    inventory.events.grantReadData(api);
    addRoutes(httpApi, api, ['POST /orders', 'GET /orders/{orderId}', 'GET /orders/{orderId}/saga']);
    this.api = api;
  }
}
