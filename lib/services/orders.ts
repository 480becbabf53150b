import { aws_dynamodb as dynamodb, aws_lambda as lambda } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EventStoreTable, ViewsTable } from '../constructs/event-store-table';
import { addRoutes } from '../constructs/http-routes';
import { ServiceFunction } from '../constructs/service-function';
import { addProjector, DeadLetterQueue } from '../constructs/stream-consumer';
import type { AccountsService, ServiceProps } from './accounts';
import type { InventoryService } from './inventory';

export interface OrdersServiceProps extends ServiceProps {
  readonly accounts: AccountsService;
  readonly inventory: InventoryService;
}

/** The sparse index of pending orders by deadline, which the saga's sweeper queries. */
export const PENDING_INDEX = 'pendingByDeadline';

/** Orders: placement (which starts the saga through `OrderPlaced`) and reading. */
export class OrdersService extends Construct {
  readonly events: dynamodb.Table;
  readonly views: ViewsTable;
  readonly deadLetters: DeadLetterQueue;
  readonly api: lambda.IFunction;

  constructor(scope: Construct, id: string, props: OrdersServiceProps) {
    super(scope, id);
    const { config, httpApi, idempotencyTable, accounts, inventory } = props;
    this.events = new EventStoreTable(this, 'Events', config).table;
    this.views = new ViewsTable(this, 'Views', config);
    // Sparse: only pending orders carry `pendingPartition`; the saga's sweeper reads it.
    this.views.table.addGlobalSecondaryIndex({
      indexName: PENDING_INDEX,
      partitionKey: { name: 'pendingPartition', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'deadline', type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });
    this.deadLetters = new DeadLetterQueue(this, 'ProjectionFailures');

    const api = new ServiceFunction(this, 'Api', {
      entry: 'orders/handlers/api.ts',
      service: 'orders',
      kind: 'api',
      config,
      description: 'Orders HTTP API: place and read orders',
      environment: {
        ORDERS_TABLE: this.events.tableName,
        VIEWS_TABLE: this.views.table.tableName,
        IDEMPOTENCY_TABLE: idempotencyTable.tableName,
        ACCOUNTS_TABLE: accounts.events.tableName,
        ...inventory.commandEnvironment,
        SAGA_DEADLINE_SECONDS: String(config.sagaDeadline.toSeconds()),
      },
    }).fn;
    this.events.grantReadWriteData(api);
    this.views.grantReadItems(api);
    idempotencyTable.grantReadWriteData(api);
    // Placing an order checks the customer and prices the products from their event stores.
    accounts.events.grantReadData(api);
    inventory.events.grantReadData(api);
    addRoutes(httpApi, api, ['POST /orders', 'GET /orders/{orderId}', 'GET /orders/{orderId}/saga']);
    this.api = api;

    addProjector(this, {
      service: 'orders',
      config,
      events: this.events,
      views: this.views,
      deadLetters: this.deadLetters.queue,
      description: 'Projects orders into their read model',
    });
  }
}
