import { aws_dynamodb as dynamodb, aws_events as events, aws_events_targets as targets } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EventStoreTable, ViewsTable } from '../constructs/event-store-table';
import { addRoutes } from '../constructs/http-routes';
import { ServiceFunction } from '../constructs/service-function';
import { addProjector, DeadLetterQueue, scheduledTarget } from '../constructs/stream-consumer';
import type { ServiceProps } from './accounts';

/** The sparse index of held reservations by `expiresAt`, which the expiry sweeper queries. */
const EXPIRY_INDEX = 'byExpiry';

/** Products, their sharded stock, reservations and their expiry. */
export class InventoryService extends Construct {
  readonly events: dynamodb.Table;
  readonly views: ViewsTable;
  readonly deadLetters: DeadLetterQueue;
  /** Expiry sweeps that failed to be delivered or failed every attempt (the next sweep retries their work). */
  readonly sweepFailures: DeadLetterQueue;
  /** What every function issuing inventory commands needs in its environment. */
  readonly commandEnvironment: Record<string, string>;

  constructor(scope: Construct, id: string, { config, httpApi, idempotencyTable }: ServiceProps) {
    super(scope, id);
    this.events = new EventStoreTable(this, 'Events', config).table;
    this.views = new ViewsTable(this, 'Views', config);
    // Sparse: only reservations still held carry `expiryPartition`.
    this.views.table.addGlobalSecondaryIndex({
      indexName: EXPIRY_INDEX,
      partitionKey: { name: 'expiryPartition', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'expiresAt', type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });
    this.deadLetters = new DeadLetterQueue(this, 'ProjectionFailures', config.removalPolicy);
    this.sweepFailures = new DeadLetterQueue(this, 'SweepFailures', config.removalPolicy);
    this.commandEnvironment = {
      INVENTORY_TABLE: this.events.tableName,
      RESERVATION_TTL_SECONDS: String(config.reservationTtl.toSeconds()),
      STOCK_UNITS_PER_SHARD: String(config.stockUnitsPerShard),
      MAX_STOCK_SHARDS: String(config.maxStockShards),
    };

    const api = new ServiceFunction(this, 'Api', {
      entry: 'inventory/handlers/api.ts',
      service: 'inventory',
      kind: 'api',
      config,
      description: 'Inventory HTTP API: products, reservations, restock',
      environment: {
        ...this.commandEnvironment,
        VIEWS_TABLE: this.views.table.tableName,
        IDEMPOTENCY_TABLE: idempotencyTable.tableName,
      },
    }).fn;
    this.events.grantReadWriteData(api);
    this.views.grantReadItems(api);
    idempotencyTable.grantReadWriteData(api);
    addRoutes(httpApi, api, [
      'POST /products',
      'GET /products/{productId}',
      'POST /products/{productId}/reservations',
      'DELETE /products/{productId}/reservations/{reservationId}',
      'POST /products/{productId}/restock',
    ]);

    addProjector(this, {
      service: 'inventory',
      config,
      events: this.events,
      views: this.views,
      deadLetters: this.deadLetters.queue,
      description: 'Projects products, stock shards and held reservations into read models',
    });

    const expirer = new ServiceFunction(this, 'Expirer', {
      entry: 'inventory/handlers/expirer.ts',
      service: 'inventory',
      kind: 'sweeper',
      config,
      description: 'Expires reservations past expiresAt and gives their stock back',
      environment: { ...this.commandEnvironment, VIEWS_TABLE: this.views.table.tableName },
      timeout: config.expirySweepInterval,
      onFailure: this.sweepFailures.queue,
    }).fn;
    this.events.grantReadWriteData(expirer);
    this.views.grantIndexQuery(expirer, EXPIRY_INDEX);
    new events.Rule(this, 'ExpirySweep', {
      description: 'Runs the reservation expiry sweeper',
      schedule: events.Schedule.rate(config.expirySweepInterval),
      targets: [new targets.LambdaFunction(expirer, scheduledTarget(this.sweepFailures.queue))],
    });
  }
}
